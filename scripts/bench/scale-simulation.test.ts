/**
 * The scale simulation (scale-simulation.ts) at sizes CI can afford: every shard's real
 * engine, the real aggregator books and the coordinator's real intake on one virtual clock.
 * It checks what a user of a large run relies on — every scheduled request counted exactly
 * once at every stage up to D1, percentiles merged within the histogram's bound, no object
 * asked for more than the design lets it take — and nothing about time on this machine.
 * `npm run bench -- scale` runs the same at 35,000 to 1,000,000/s and reports the figures.
 */
import { describe, expect, it } from "vitest";
import { RUN_START_LEAD_S, reportingEndLagS } from "../../core/plan/object-requests.ts";
import { preflight } from "../../core/plan/preflight.ts";
import { START_LEAD_MS } from "../../coordinator/run/run-record.ts";
import { simulateScale, SIM_REGIONS, type ScaleResult } from "./scale-simulation.ts";

/** The design's most requests a second into any one object (core/plan/aggregation-tree.ts). */
const OBJECT_REQUESTS_PER_S = 200;

/** Every stage agrees: the schedule, what the shards started and measured, what the target answered, what was merged and written. */
function expectExactCounts(r: ScaleResult): void {
  const c = r.counts;
  expect(c.sent).toBe(c.scheduled);
  expect(c.inShardWindows + c.dropped).toBe(c.scheduled);
  expect(c.answered).toBe(c.inShardWindows);
  expect(c.merged).toBe(c.inShardWindows);
  expect(c.inD1).toBe(c.merged);
  expect(r.lateCells).toBe(0);
}

/** p50, p90, p99 and p99.9 of the merged histograms within the histogram's bound of the exact latencies. */
function expectPercentilesWithinBound(r: ScaleResult): void {
  expect(r.quantiles).toHaveLength(4);
  expect(r.quantiles.filter((q) => !q.withinBound)).toEqual([]);
}

/**
 * The plan's `model` of what the simulation `counted`: within 10 % above, and under by at most
 * one in 500 — a shard's last windows and its done go as two flushes now and then (the flat
 * 10,000/s run: one shard of 72, one request of 974), which the plan does not count.
 */
function expectPriced(model: number, counted: number, what: string): void {
  expect(model, what).toBeGreaterThanOrEqual(counted * 0.998);
  expect(model / counted, what).toBeLessThan(1.1);
}

describe("a whole run simulated shard by shard, through the aggregation tree", () => {
  it("150,000/s: 1,074 shards report through a tree of depth 2, every request counted once, no object over its budget", async () => {
    // Three steady seconds: a window takes a second a level to reach the coordinator, so its
    // steady seconds (before the roots' final flushes) begin at the fourth.
    const r = await simulateScale({ ratePerS: 150_000, rampS: 1, steadyS: 3 });
    const tree = r.tree!;
    expect(r.plan.shards).toHaveLength(1_074);
    // 179 shards a region: two level-1 aggregators (100 and 79 shards) under one root.
    expect(tree.depth).toBe(2);
    expect(tree.aggregators).toHaveLength(18);
    expect(tree.roots).toHaveLength(SIM_REGIONS.length);

    expect(r.counts.scheduled).toBe(525_000); // 75,000 in the ramp + 3 × 150,000
    expectExactCounts(r);
    expectPercentilesWithinBound(r);

    const model = preflight(r.spec, r.plan).usage.peak;
    // Until its senders finish, a level-1 aggregator hears from the shards whose write falls
    // in that second (each writes and flushes every fourth window, at its own phase: a
    // quarter to a half of its 100, as closes spread into the next second) and its tick; the
    // coordinator from one root per region and its tick.
    expect(r.busiest.steady.kind).toBe("aggregator");
    expect(r.busiest.steady.requestsPerS).toBeGreaterThanOrEqual(26);
    expect(r.busiest.steady.requestsPerS).toBeLessThanOrEqual(tree.fanIn + 1);
    expect(r.busiest.steady.requestsPerS).toBeLessThanOrEqual(OBJECT_REQUESTS_PER_S);
    expect(r.busiest.steady.requestsPerS).toBeLessThanOrEqual(model.aggregatorRequestsPerS);
    expect(r.coordinatorRequestsPerS.steady).toBeLessThanOrEqual(SIM_REGIONS.length + 1); // the roots pass a window up once every child is past it: in a short run, only at its end
    expect(r.coordinatorRequestsPerS.steady).toBeLessThanOrEqual(model.coordinatorRequestsPerS);
    // The end is busier than the model: each sender's last windows and its done flag arrive
    // as two flushes (workers/shard/window-flusher.ts sends the windows the engine's last close
    // hands out before the final flush joins it), and the receiver ticks twice (its regular
    // tick, and the one when every child is done). Bounded here so that it cannot grow
    // unnoticed: twice the children, plus two ticks.
    expect(r.busiest.end.requestsPerS).toBeLessThanOrEqual(2 * tree.fanIn + 2);
    expect(r.coordinatorRequestsPerS.end).toBeLessThanOrEqual(2 * SIM_REGIONS.length + 2);

    // D1: a window of the run is regions × (1 window row + 6 histograms) rows, as the model says.
    expect(r.d1.rowsPerWindow).toBe(42);
    expect(r.d1.rowsPerWindow).toBeLessThanOrEqual(model.d1RowsPerS);
    expect(r.d1.maxParams).toBeLessThanOrEqual(100);
    expect(r.d1.shardRows).toBe(1_074); // each shard's row, once, by its level-1 aggregator
  }, 120_000);

  it("35,000/s: the capacity model's run — 252 shards, one aggregator per region, exactly the schedule", async () => {
    const r = await simulateScale({ ratePerS: 35_000, rampS: 1, steadyS: 2 });
    expect(r.plan.shards).toHaveLength(252);
    expect(r.tree!.depth).toBe(1);
    expect(r.counts.scheduled).toBe(87_500); // 17,500 in the ramp + 70,000 at 35,000/s
    expectExactCounts(r);
    expectPercentilesWithinBound(r);
    const model = preflight(r.spec, r.plan).usage.peak;
    // Each region's 42 shards under one aggregator (a quarter to a half of them a second, each
    // flushing every fourth window at its phase, and its tick); six roots and a tick at the coordinator.
    expect(r.busiest.steady.kind).toBe("aggregator");
    expect(r.busiest.steady.requestsPerS).toBeGreaterThanOrEqual(11);
    expect(r.busiest.steady.requestsPerS).toBeLessThanOrEqual(43);
    expect(r.busiest.steady.requestsPerS).toBeLessThanOrEqual(model.aggregatorRequestsPerS);
    expect(r.coordinatorRequestsPerS.steady).toBeLessThanOrEqual(7); // the roots pass a window up once every child is past it: in a short run, only at its end
    expect(r.coordinatorRequestsPerS.steady).toBeLessThanOrEqual(model.coordinatorRequestsPerS);
    expect(r.d1.rowsPerWindow).toBe(42);
    expect(r.d1.maxParams).toBeLessThanOrEqual(100);
    // The storage rows the planner prices are the rows the objects wrote (issue 41): the
    // shards' exactly; the aggregators' within 10 % (their intake rows counted from their
    // children's phases and lags, core/plan/intake-rows.ts); the coordinator's two dozen
    // within a few rows (coordinatorRowsInATree).
    const usage = preflight(r.spec, r.plan).usage;
    const rows = r.storageRows;
    expect(usage.shardRowsWritten).toBe(rows.shards);
    expect(usage.aggregators.rowsWritten / rows.aggregators).toBeGreaterThan(0.9);
    expect(usage.aggregators.rowsWritten / rows.aggregators).toBeLessThan(1.1);
    // The coordinator's two dozen: its end priced at two ticks of rows (the plan's drain, 1.12 s, is
    // longer than the simulation's 0.81 s), four rows more than it wrote.
    expect(usage.coordinatorRowsWritten).toBeGreaterThanOrEqual(rows.coordinator);
    expect(usage.coordinatorRowsWritten / rows.coordinator).toBeLessThan(1.2);
    const total = rows.shards + rows.aggregators + rows.coordinator;
    expect(Math.abs(usage.shardRowsWritten + usage.aggregators.rowsWritten + usage.coordinatorRowsWritten - total) / total).toBeLessThan(0.1);
  }, 120_000);

  it("prices what the simulated objects were asked (issue 49): every request by kind of object within 10 % (under by one in 500 at most); storage bytes at least what they wrote, nothing left once cleaned", async () => {
    // The plan's coordinator ticks from its creation as a deployed run's does.
    expect(RUN_START_LEAD_S * 1000).toBe(START_LEAD_MS.deployed);
    // 13 s of schedule, so the ends (start, clean-up, the tree's first windows on their way up) weigh little.
    const r = await simulateScale({ ratePerS: 35_000, rampS: 1, steadyS: 12 });
    const u = preflight(r.spec, r.plan).usage;
    const sim = r.objectRequests;
    expect(u.shardInvocations).toBe(sim.shardInvocations); // one invocation a shard sends in, the first warming up
    // Shards: start, their alarms, clean-up. Aggregators: start, the flushes, ticks until their
    // children are done, the alarm a level-1 waits for its rows with, clean-up. The coordinator:
    // create, the roots' flushes, ticks from its creation, its clean-up alarm, a watching
    // client's status a second and the summary (scale-lifecycle.ts).
    for (const kind of ["shards", "aggregators", "coordinator"] as const) expectPriced(u.requestsByKind[kind], r.requestsByKind[kind], kind);
    // Every one an invocation, so an execution log (at the deployment's sampling); the objects wrote no console line.
    expect(r.consoleLines).toBe(0);
    expect(u.logEventsByKind.aggregators).toBeCloseTo(u.requestsByKind.aggregators * u.logsSamplingRate, 9);
    // The last reporter's done reaches the coordinator within the lag the plan counts ticks over.
    expect(r.reportersDoneAfterScheduleMs / 1000).toBeLessThanOrEqual(reportingEndLagS(r.tree, r.spec.expectedLatencyMs));
    // D1: the estimate allows a wider target than the simulation's whole-millisecond answers.
    const stored = u.storage.d1BytesByTable;
    expect(stored.windows).toBeGreaterThanOrEqual(r.d1.bytesWritten.windows);
    expect(stored.histograms).toBeGreaterThanOrEqual(r.d1.bytesWritten.histograms);
    expect(stored.shards).toBeGreaterThanOrEqual(r.d1.bytesWritten.shards);
    // The clean-up leaves nothing in any object.
    expect(r.storageBytesAfterCleanUp).toEqual({ shards: 0, aggregators: 0, coordinator: 0 });

    // A flat run: every shard flushes each window to the coordinator; its rows too within 10 %, never under.
    const flat = await simulateScale({ ratePerS: 10_000, rampS: 1, steadyS: 12 });
    const f = preflight(flat.spec, flat.plan).usage;
    expect(flat.tree).toBeNull();
    expectPriced(f.requestsByKind.shards, flat.requestsByKind.shards, "shards");
    expectPriced(f.requestsByKind.coordinator, flat.requestsByKind.coordinator, "coordinator");
    expectPriced(f.coordinatorRowsWritten, flat.storageRows.coordinator, "coordinator rows");
  }, 120_000);

  it("10,000/s: a run of at most one fan-in of shards stays flat, its shards flushing to the coordinator", async () => {
    const r = await simulateScale({ ratePerS: 10_000, rampS: 1, steadyS: 1 });
    expect(r.plan.shards).toHaveLength(72);
    expect(r.tree).toBeNull();
    expectExactCounts(r);
    expectPercentilesWithinBound(r);
    // One flush a second from each shard, and the tick.
    expect(r.coordinatorRequestsPerS.steady).toBe(73);
    expect(r.d1.shardRows).toBe(0); // a flat run's shard rows are the coordinator's end batch, not simulated
    // As it ends each shard holds its assignment (under 2 KB: its own slice of the weights, issue 49) and no window,
    // every one acknowledged; the coordinator its log and live points. The clean-up deletes all of it.
    expect(r.storageBytesAtEnd.shards).toBeLessThan(72 * 2_048);
    expect(r.storageBytesAtEnd.coordinator).toBeGreaterThan(0);
  }, 120_000);

  it("an abort passes down the tree to every shard, and what they measured is merged once", async () => {
    const hopMs = 20;
    const r = await simulateScale({ ratePerS: 150_000, rampS: 1, steadyS: 1, abortAtS: 0.5, hopMs });
    const c = r.counts;
    expect(c.sent).toBeLessThan(c.scheduled);
    expect(c.merged).toBe(c.inShardWindows);
    expect(c.inD1).toBe(c.merged);
    expect(r.lateCells).toBe(0);
    // Three edges to the last shard (coordinator → root → level 1 → shard), then its in-flight requests drain.
    expect(r.abort!.lastShardToldMs).toBe(3 * hopMs);
    expect(r.abort!.lastShardStoppedMs).toBeGreaterThanOrEqual(r.abort!.lastShardToldMs);
    expect(Number.isFinite(r.abort!.everythingInMs)).toBe(true);
    expect(r.abort!.everythingInMs).toBeGreaterThan(r.abort!.lastShardStoppedMs);
  }, 120_000);
});
