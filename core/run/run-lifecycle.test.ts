import { describe, expect, it } from "vitest";
import {
  ABORT_GRACE_MS,
  takeableBelow,
  D1_WRITE_AFTER_MS,
  D1_WRITE_MAX_CELLS,
  d1WriteDue,
  FINISH_GRACE_MS,
  lifecycleStep,
  MAX_LATENESS_MS,
  type LifecycleState,
} from "./run-lifecycle.ts";

// A 30 s run starting at t=0 with a 10 s request timeout.
const base: LifecycleState = { status: "running", stopping: null, endMs: null, t0Ms: 0, durationMs: 30_000, afterEndMs: 10_000, everyoneDone: false };

describe("lifecycleStep", () => {
  it.each([
    // [state change, now, expected step, why]
    [{}, 10_000, { kind: "continue", evaluateThresholds: true, enterFinishing: false }, "mid-run: keep going, watch abortOnFail"],
    [{}, 30_000, { kind: "continue", evaluateThresholds: true, enterFinishing: true }, "schedule over: enter finishing, wait for shards"],
    [{ status: "finishing" }, 31_000, { kind: "continue", evaluateThresholds: true, enterFinishing: false }, "already finishing"],
    [{ everyoneDone: true }, 12_000, { kind: "finish", status: null, silent: false }, "every shard done: the verdict decides"],
    [{}, 30_000 + 10_000 + FINISH_GRACE_MS, { kind: "finish", status: null, silent: true }, "grace over without every shard: what they measured is missing"],
    [{ stopping: "aborted", endMs: 5_000 }, 6_000, { kind: "continue", evaluateThresholds: false, enterFinishing: false }, "aborted: let shards flush"],
    [{ stopping: "aborted", endMs: 5_000 }, 5_000 + ABORT_GRACE_MS, { kind: "finish", status: "aborted", silent: false }, "abort grace over"],
    [{ stopping: "failed", endMs: 5_000, everyoneDone: true }, 5_500, { kind: "finish", status: "failed", silent: false }, "abortOnFail, shards already done"],
  ] as const)("%j at %i ms → %j (%s)", (change, now, expected, _why) => {
    expect(lifecycleStep({ ...base, ...change }, now)).toEqual(expected);
  });
});

describe("takeableBelow", () => {
  const t0Ms = 1_000_000;
  it.each([
    // [watermarks of the shards still sending, seconds since t0, everyone done, cut-off, why]
    [[4, 7, 5], 6, false, 4, "the slowest running shard has flushed through window 3"],
    [[], 6, false, Number.MAX_SAFE_INTEGER, "no shard still sending holds anything back"],
    [[0, 9], 30, false, 20, "a quiet shard holds a window back at most MAX_LATENESS_MS (10 s)"],
    [[2], 5, true, Number.MAX_SAFE_INTEGER, "every shard sent its final flush: take everything"],
  ])("watermarks %j at %i s, done %s → %d (%s)", (watermarks, seconds, everyoneDone, cutoff, _why) => {
    expect(MAX_LATENESS_MS).toBe(10_000);
    expect(takeableBelow({ watermarks, t0Ms, nowMs: t0Ms + seconds * 1000, everyoneDone })).toBe(cutoff);
  });
});

describe("d1WriteDue", () => {
  const takenMs = 1_000_000;
  it.each([
    // [oldest taken (null: none waiting), ms since, cells waiting, everyone done, due, why]
    [null, 60_000, 0, true, false, "nothing waiting: no write, even at the end"],
    [takenMs, 1_000, 8, false, false, "taken a tick ago: shown live, not written yet"],
    [takenMs, 3_990, 32, false, false, "the fourth tick after, come a little early: still waits"],
    [takenMs, 4_000, 40, false, true, "four seconds after: written"],
    [takenMs, 2_000, 200, false, true, "as many cells as a write may carry: written now"],
    [takenMs, 0, 4, true, true, "every shard done: written now"],
  ] as const)("oldest %s, %i ms later, %i cells, done %s → %s (%s)", (oldest, sinceMs, cells, everyoneDone, due, _why) => {
    expect([D1_WRITE_AFTER_MS, D1_WRITE_MAX_CELLS]).toEqual([4_000, 200]);
    expect(d1WriteDue({ oldestTakenMs: oldest, cells, nowMs: (oldest ?? takenMs) + sinceMs, everyoneDone })).toBe(due);
  });
});
