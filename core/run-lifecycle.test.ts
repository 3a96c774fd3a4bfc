import { describe, expect, it } from "vitest";
import { ABORT_GRACE_MS, FINISH_GRACE_MS, lifecycleStep, type LifecycleState } from "./run-lifecycle.ts";

// A 30 s run starting at t=0 with a 10 s request timeout.
const base: LifecycleState = { status: "running", stopping: null, endMs: null, t0Ms: 0, durationMs: 30_000, timeoutMs: 10_000, everyoneDone: false };

describe("lifecycleStep", () => {
  it.each([
    // [state change, now, expected step, why]
    [{}, 10_000, { kind: "continue", evaluateThresholds: true, enterFinishing: false }, "mid-run: keep going, watch abortOnFail"],
    [{}, 30_000, { kind: "continue", evaluateThresholds: true, enterFinishing: true }, "schedule over: enter finishing, wait for shards"],
    [{ status: "finishing" }, 31_000, { kind: "continue", evaluateThresholds: true, enterFinishing: false }, "already finishing"],
    [{ everyoneDone: true }, 12_000, { kind: "finish", status: null, note: null }, "every shard done: thresholds decide"],
    [{}, 30_000 + 10_000 + FINISH_GRACE_MS, { kind: "finish", status: null, note: "some shards never reported done" }, "grace over without every shard"],
    [{ stopping: "aborted", endMs: 5_000 }, 6_000, { kind: "continue", evaluateThresholds: false, enterFinishing: false }, "aborted: let shards flush"],
    [{ stopping: "aborted", endMs: 5_000 }, 5_000 + ABORT_GRACE_MS, { kind: "finish", status: "aborted", note: null }, "abort grace over"],
    [{ stopping: "failed", endMs: 5_000, everyoneDone: true }, 5_500, { kind: "finish", status: "failed", note: null }, "abortOnFail, shards already done"],
  ] as const)("%j at %i ms → %j (%s)", (change, now, expected, _why) => {
    expect(lifecycleStep({ ...base, ...change }, now)).toEqual(expected);
  });
});
