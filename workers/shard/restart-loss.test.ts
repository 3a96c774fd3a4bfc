/**
 * What a shard's unplanned restart counts as lost, per model (restart-loss.ts), on a real
 * ShardEngine under a virtual clock: the windows it hands out say what the coordinator sees.
 */
import { describe, expect, it } from "vitest";
import type { ShardAssignment, ShardWindow } from "../../core/run/protocol.ts";
import { MetricStats } from "../../core/metrics/metric-stats.ts";
import { customStepsFlow } from "../../scenarios/custom-steps.ts";
import { VirtualTime } from "../../test/support/virtual-time.ts";
import { testAssignment } from "../../test/support/shard-assignment-fixture.ts";
import { ShardEngine } from "./engine.ts";
import { countRestartLoss, lastKnownRunningMs } from "./restart-loss.ts";
import { scheduledState, type ShardState } from "./shard-state.ts";

const T0 = 1_000_000;

function assignmentOf(spec: Record<string, unknown>, shard = { index: 0, weights: [1] }): ShardAssignment {
  return testAssignment(spec, { runId: "r-restart", t0Ms: T0, ...shard });
}

/** A shard found running without a handoff (a crash), having stored windows below `watermarkS`. */
const crashedState = (a: ShardAssignment, change: Partial<ShardState> = {}): ShardState => ({
  ...scheduledState(a),
  phase: "running",
  invocations: 1,
  ...change,
});

/** Counts the restart's loss at `nowMs` on a fresh engine; what its windows then carry, and the cursor. */
function restartAt(a: ShardAssignment, state: ShardState, nowMs: number) {
  const time = new VirtualTime({ startMs: nowMs });
  const windows: Array<Omit<ShardWindow, "part">> = [];
  const fetcher = (async () => new Response("ok")) as unknown as typeof fetch;
  const engine = new ShardEngine(a, time.clock, fetcher, (w) => windows.push(w), customStepsFlow(a.spec));
  const cursor = countRestartLoss(engine, state, a, nowMs);
  engine.closeAll();
  const totals = new MetricStats();
  for (const w of windows) for (const [, stats] of w.steps) totals.mergeWire(stats);
  return { cursor, counters: totals.counters };
}

describe("lastKnownRunningMs", () => {
  const a = assignmentOf({ executor: "constant-vus", vus: 2, duration: "10s" });
  it.each([
    // [state, ms after T0, why]
    [{ watermarkS: 0 }, 0, "stored no window: known to have run from T0 only"],
    [{ watermarkS: 4 }, 4_000, "stored windows 0–3: it ran until window 3 ended"],
    [{ watermarkS: 4, lastRestartMs: T0 + 6_500 }, 6_500, "restarted after that: it ran since that restart"],
    [{ watermarkS: 4, lastRestartMs: T0 + 1_000 }, 4_000, "an earlier restart says less than its windows"],
  ] as const)("%j → T0 + %d ms (%s)", (change, afterT0Ms, _why) => {
    expect(lastKnownRunningMs(crashedState(a, change), a)).toBe(T0 + afterT0Ms);
  });

  it("reads a named scenario's watermark in the run's numbering, less the scenario's offset", () => {
    const part = { scenario: "later", runShard: 3, stepOffset: 0, windowOffsetS: 5 };
    expect(lastKnownRunningMs(crashedState(a, { watermarkS: 8 }), { ...a, part })).toBe(T0 + 3_000);
  });
});

describe("countRestartLoss", () => {
  it("counts one interrupted iteration per VU the shard owned active when it died, not when it came back (ramping-vus)", () => {
    // 0 → 10 VUs over 10 s on one shard: 4 active at 4 s, when its last stored window ended; 7 at the restart.
    const a = assignmentOf({ executor: "ramping-vus", startVUs: 0, stages: [{ target: 10, duration: "10s" }] });
    const { cursor, counters } = restartAt(a, crashedState(a, { watermarkS: 4 }), T0 + 7_000);
    expect(counters.interrupted).toBe(4);
    // They had started: k6 would not call them dropped, and nothing was skipped.
    expect(counters.dropped).toBe(0);
    expect(counters.unstarted).toBe(0);
    expect(cursor).toBe(0);
  });

  it("counts only the VUs this shard owns (constant-vus, 5 VUs over 2 shards: VUs 1, 3, 5 on the first)", () => {
    const spec = { executor: "constant-vus", vus: 5, duration: "10s" };
    const first = assignmentOf(spec, { index: 0, weights: [1, 1] });
    const second = assignmentOf(spec, { index: 1, weights: [1, 1] });
    expect(restartAt(first, crashedState(first, { watermarkS: 2 }), T0 + 3_000).counters.interrupted).toBe(3);
    expect(restartAt(second, crashedState(second, { watermarkS: 2 }), T0 + 3_000).counters.interrupted).toBe(2);
  });

  it("counts nothing for an iteration-count executor, which starts again what its dead loops had started", () => {
    const a = assignmentOf({ executor: "per-vu-iterations", vus: 3, iterations: 10, maxDuration: "1m" });
    expect(restartAt(a, crashedState(a, { watermarkS: 2 }), T0 + 3_000).counters.interrupted).toBe(0);
  });

  it("counts an arrival-rate shard's iterations due while it was down dropped and interrupted, and resumes past them", () => {
    // 40/s: 40 due in the first second, the shard back at 1 s with nothing stored.
    const a = assignmentOf({ executor: "constant-arrival-rate", rate: 40, duration: "3s" });
    const { cursor, counters } = restartAt(a, crashedState(a), T0 + 1_000);
    expect(cursor).toBe(40);
    expect(counters.interrupted).toBe(40);
    expect(counters.dropped).toBe(40);
    expect(counters.unstarted).toBe(0);
  });
});
