/**
 * The capacity model's run, simulated: the planner sizes the 35,000/s, six-region run,
 * and every one of its 252 shards runs the real ShardEngine under one virtual clock
 * against a fake target with known latencies. The profile is shortened to seconds (a 1 s
 * ramp to 35,000/s, then 2 s at it) but every per-second rate is the real one.
 *
 * What it checks: the shards together send exactly the schedule's requests, none early and
 * none dropped; their windows merge into histograms whose percentiles are within the
 * histogram's bound of the exact latencies; and what the coordinator would write to D1
 * (its own statement builder, coordinator/store/results-store.ts, against a recording D1) stays
 * within the model's rows per second, as do the flushes into the coordinator object.
 */
import { describe, expect, it } from "vitest";
import { ArrivalSchedule } from "../../core/schedule/arrival-schedule.ts";
import { RELATIVE_ERROR } from "../../core/metrics/histogram.ts";
import { DEFAULT_LIMITS, planRun } from "../../core/plan/plan.ts";
import { preflight } from "../../core/plan/preflight.ts";
import type { ShardWindow } from "../../core/run/protocol.ts";
import { parseRunSpec } from "../../core/spec/run-spec.ts";
import { shardAssignments } from "../../core/schedule/shard-assignment.ts";
import { MetricStats } from "../../core/metrics/metric-stats.ts";
import { windowStatements, type WindowCell } from "../../coordinator/store/results-store.ts";
import { customStepsFlow } from "../../scenarios/custom-steps.ts";
import { ShardEngine } from "./engine.ts";
import { VirtualTime } from "../../test/support/virtual-time.ts";

const REGIONS = ["wnam", "enam", "weur", "eeur", "apac", "oc"];

/** A D1 stand-in that records what the coordinator's statement builder binds. */
function recordingD1() {
  const statements: Array<{ sql: string; params: unknown[] }> = [];
  const db = { prepare: (sql: string) => ({ bind: (...params: unknown[]) => (statements.push({ sql, params }), { sql, params }) }) };
  return { db: db as unknown as D1Database, statements };
}

/** Rows a multi-row INSERT writes: its bound values over its column count. */
const rowsOf = (s: { sql: string; params: unknown[] }) => s.params.length / /\(([^)]*)\) VALUES/.exec(s.sql)![1]!.split(",").length;

describe("a 35,000/s run across 6 regions, simulated shard by shard", () => {
  it("sends exactly the schedule, merges exactly, and keeps D1 and the coordinator within the model", async () => {
    const parsed = parseRunSpec({
      target: "https://auth.example.com",
      steps: [{ name: "userinfo", path: "/userinfo" }],
      executor: "ramping-arrival-rate",
      stages: [
        { target: 35_000, duration: "1s" },
        { target: 35_000, duration: "2s" },
      ],
      regions: REGIONS,
      expectedLatency: "30ms",
      maxVUs: 2000,
      timeout: "10s",
    });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const spec = parsed.spec;
    const schedule = new ArrivalSchedule(spec.stages);
    const planned = planRun(spec, schedule.total, { ...DEFAULT_LIMITS, maxRatePerS: 40_000 });
    if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
    const plan = planned.plan;
    expect(plan.shards).toHaveLength(252);

    const time = new VirtualTime({ batch: true });
    const t0Ms = time.now;
    // The target: 20–40 ms, a deterministic function of the request's number.
    const latencies: number[] = [];
    const unfinished: number[] = [];
    const fetcher = (async () => {
      const delay = 20 + ((latencies.length * 7919) % 21);
      latencies.push(delay);
      await time.sleep(delay);
      return new Response("ok");
    }) as unknown as typeof fetch;

    const windows: Array<{ shard: number; region: string; window: Omit<ShardWindow, "part"> }> = [];
    const engines = shardAssignments({ runId: "r-sim", spec, plan, t0Ms, mode: "deployed", flushGraceMs: 0 }).map((a) => {
      const engine = new ShardEngine(
        a,
        time.clock,
        fetcher,
        (window) => windows.push({ shard: a.shard.index, region: a.shard.region, window }),
        customStepsFlow(a.spec),
      );
      return { a, engine };
    });
    const results = await time.run(
      Promise.all(
        engines.map(({ a, engine }) =>
          engine.run(0, a.iterationsPerInvocation).then((r) => {
            if (r.end !== "finished") unfinished.push(a.shard.index);
            return r;
          }),
        ),
      ),
    );

    // Counts: every shard finished its share; every iteration sent once, none early or dropped.
    expect(unfinished).toEqual([]);
    expect(results.reduce((n, r) => n + r.sent, 0)).toBe(schedule.total);
    expect(schedule.total).toBe(87_500); // 17,500 in the ramp + 70,000 at 35,000/s
    const all = new MetricStats();
    for (const { window } of windows) for (const [, wire] of window.steps) all.mergeWire(wire);
    expect(all.counters.completed).toBe(schedule.total);
    expect(all.counters.dropped).toBe(0);
    expect(all.trends.lag.min).toBeGreaterThanOrEqual(0);

    // Merged histograms against the exact latencies the target gave.
    const sorted = [...latencies].sort((x, y) => x - y);
    for (const q of [0.5, 0.9, 0.99, 0.999]) {
      const exactUs = sorted[Math.ceil(q * sorted.length) - 1]! * 1000;
      expect(Math.abs(all.trends.duration.quantile(q) - exactUs)).toBeLessThanOrEqual(exactUs * RELATIVE_ERROR + 1);
    }

    // What the coordinator writes: shards merged per (second, region, step), then its own
    // statement builder; rows per second within the model, statements within D1's limits.
    const cells = new Map<string, WindowCell>();
    const flushesPerSecond = new Map<number, Set<number>>();
    for (const { shard, region, window } of windows) {
      (flushesPerSecond.get(window.windowS) ?? flushesPerSecond.set(window.windowS, new Set()).get(window.windowS)!).add(shard);
      for (const [step, wire] of window.steps) {
        const key = `${window.windowS}|${region}|${step}`;
        const cell = cells.get(key) ?? { windowS: window.windowS, region, step: spec.steps[step]!.name, stats: new MetricStats() };
        cell.stats.mergeWire(wire);
        cells.set(key, cell);
      }
    }
    const model = preflight(spec, plan).usage.peak;
    const seconds = [...new Set([...cells.values()].map((c) => c.windowS))];
    for (const second of seconds) {
      const { db, statements } = recordingD1();
      const stmts = windowStatements(
        db,
        "r-sim",
        [...cells.values()].filter((c) => c.windowS === second),
      );
      expect(stmts.length).toBe(statements.length);
      const rows = statements.reduce((n, s) => n + rowsOf(s), 0);
      expect(rows).toBeLessThanOrEqual(model.d1RowsPerS);
      expect(statements.length).toBeLessThanOrEqual(model.d1StatementsPerS);
      for (const s of statements) expect(s.params.length).toBeLessThanOrEqual(100);
    }
    // A full second at 35,000/s writes the model's 42 rows: 6 regions × (1 + 6 histograms).
    const { db, statements } = recordingD1();
    windowStatements(
      db,
      "r-sim",
      [...cells.values()].filter((c) => c.windowS === 2),
    );
    expect(statements.reduce((n, s) => n + rowsOf(s), 0)).toBe(42);
    for (const shards of flushesPerSecond.values()) expect(shards.size).toBeLessThanOrEqual(model.coordinatorRequestsPerS);
  }, 60_000);
});
