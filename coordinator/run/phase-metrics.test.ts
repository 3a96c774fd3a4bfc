/**
 * A k6 script's setup() and teardown() measured as k6 counts them (phase-metrics.ts): their
 * requests, checks and custom metrics recorded as the shard records an iteration's, taken
 * into the run's totals once whatever how often the record is saved or restored, and left
 * out of what the load measured.
 */
import { describe, expect, it } from "vitest";
import { RunTotals } from "../../core/run/run-totals.ts";
import { MetricStats } from "../../core/metrics/metric-stats.ts";
import { EXPECTED_RESPONSE_DURATION } from "../../core/metrics/sub-metrics.ts";
import type { Plan } from "../../core/plan/plan.ts";
import { phaseIO } from "../../scenarios/run-phase.ts";
import { addPhaseStats, loadStats, PHASE_REGION, PHASE_SHARD, phaseMetrics, type PhaseStats } from "./phase-metrics.ts";

/** A phase over a target answering `status` to each request, 10 ms apart on a fake clock. */
function measuredPhase(status: (url: string) => number) {
  let nowMs = 1_000;
  const inner = phaseIO({
    fetcher: async (input) => {
      nowMs += 10;
      return new Response("{}", { status: status(String(input)) });
    },
    timeoutMs: 60_000,
    failsOn: "exception",
    nameOf: (_i, request) => `${request.method} ${new URL(request.url).pathname}`,
    sleep: async () => {},
    clock: () => nowMs,
  });
  return phaseMetrics(inner.io, [EXPECTED_RESPONSE_DURATION], 60_000);
}

/** What setup() sent in the script: a login that works, one check on it that fails. */
async function setupCells() {
  const phase = measuredPhase((url) => (url.endsWith("/missing") ? 404 : 200));
  await phase.io.send(0, { url: "http://t/login", method: "POST", tags: { group: "::setup" } });
  phase.io.check(false, { check: "has a token", group: "::setup" });
  await phase.io.send(0, { url: "http://t/missing", method: "GET", tags: { group: "::setup" } });
  phase.io.count("seeded", 3, { group: "::setup" });
  return phase.cells();
}

const plan = { shards: [{ index: 0, region: "wnam" }] } as unknown as Plan;

describe("a script phase's metrics", () => {
  it("records its requests, checks and custom metrics as an iteration's, the check under the phase's group", async () => {
    const cells = await setupCells();
    expect(cells.map(([step]) => step)).toEqual([0]);
    const stats = MetricStats.fromWire(cells[0]![1]);
    expect(stats.counters).toMatchObject({ sent: 2, completed: 2, failed: 1, status4xx: 1, checksPassed: 0, checksFailed: 1, iterations: 0 });
    expect(stats.trends.duration.count).toBe(2);
    expect(stats.checkResults.results()).toEqual([expect.objectContaining({ group: "::setup", name: "has a token", passes: 0, fails: 1 })]);
    const custom = stats.custom.toWire();
    expect(custom.c).toEqual({ seeded: 3 });
    // k6's http_req_duration{expected_response:true}: the 200 only.
    expect(custom.t?.[EXPECTED_RESPONSE_DURATION.name]?.n).toBe(1);
  });

  it("records each redirect hop a phase's request followed as a request of its own, as k6 counts them", async () => {
    let nowMs = 1_000;
    // The outbound module's side of a chain POST /login → 303 → GET /home (workers/outbound/outbound-fetch.ts).
    const inner = phaseIO({
      fetcher: async (input, init) => {
        const watcher = init?.redirectWatcher;
        nowMs += 10;
        await watcher?.followed(new Response("see other", { status: 303, headers: { location: "/home" } }), { url: String(input), method: "POST" });
        watcher?.leaving({ url: "http://t/home", method: "GET" });
        nowMs += 30;
        return new Response("{}", { status: 200 });
      },
      timeoutMs: 60_000,
      failsOn: "exception",
      nameOf: (_i, request) => request.url,
      sleep: async () => {},
      clock: () => nowMs,
    });
    const phase = phaseMetrics(inner.io, [EXPECTED_RESPONSE_DURATION], 60_000);
    const response = await phase.io.send(0, { url: "http://t/login", method: "POST", tags: { group: "::setup" } });
    expect(response).toMatchObject({ status: 200, durationMs: 30 });
    const stats = MetricStats.fromWire(phase.cells()[0]![1]);
    expect(stats.counters).toMatchObject({ sent: 2, completed: 2, failed: 0 });
    expect(stats.trends.duration.count).toBe(2);
    expect([stats.trends.duration.min, stats.trends.duration.max]).toEqual([10_000, 30_000]); // µs
  });

  it("is counted in the run's totals once, however often the record is saved, and after a restore", async () => {
    const phaseStats: PhaseStats = { setup: await setupCells() };
    const totals = new RunTotals();
    totals.add(0, "wnam", 0, loadWindow());
    addPhaseStats(totals, phaseStats);
    addPhaseStats(totals, phaseStats);
    const all = totals.select().counters;
    expect([all.completed, all.checksFailed, all.checksPassed]).toEqual([2 + 5, 1, 5]);
    // A checkpoint that holds them: restored, they are not added again.
    const restored = addPhaseStats(RunTotals.fromWire(totals.toWire()), phaseStats);
    expect(restored.select().counters.completed).toBe(7);
    // One taken before them: they are added once.
    const before = new RunTotals();
    before.add(0, "wnam", 0, loadWindow());
    expect(addPhaseStats(RunTotals.fromWire(before.toWire()), phaseStats).select().counters.completed).toBe(7);
    // Shown apart from the shards' regions, and in no shard's stats.
    expect(totals.regions()).toEqual([PHASE_REGION, "wnam"].sort());
    expect(totals.shard(0).counters.completed).toBe(5);
    expect(totals.shard(PHASE_SHARD.setup).counters.completed).toBe(2);
  });

  it("adds teardown's when it comes, without adding setup's again", async () => {
    const totals = addPhaseStats(new RunTotals(), { setup: await setupCells() });
    addPhaseStats(totals, { setup: await setupCells(), teardown: await setupCells() });
    expect(totals.select().counters.completed).toBe(4);
  });

  it("leaves the phases out of what the load measured", async () => {
    const totals = new RunTotals();
    addPhaseStats(totals, { setup: await setupCells() });
    // Nothing of the load yet: setup()'s requests are not an iteration that ran.
    expect(loadStats(totals, plan).counters.sent).toBe(0);
    totals.add(0, "wnam", 0, loadWindow());
    expect(loadStats(totals, plan).counters.completed).toBe(5);
  });
});

/** Five iterations of the load, one request and one passed check each. */
function loadWindow(): MetricStats {
  const stats = new MetricStats();
  Object.assign(stats.counters, { sent: 5, completed: 5, iterations: 5, checksPassed: 5 });
  return stats;
}
