import { describe, expect, it } from "vitest";
import type { ThresholdOutcome, ThresholdState } from "../metrics/thresholds.ts";
import { isTimingMetric, runVerdict, type RunEvidence } from "./run-verdict.ts";
import { notSentOf } from "./not-sent.ts";

/** What edgeload did not send of a schedule of 10,000 iterations, against `bound` (absent: the default 1 %). */
const notSent = (interrupted: number, unstarted = 0, bound?: number) => notSentOf({ interrupted, unstarted }, 10_000, bound);

const outcome = (key: string, state: ThresholdState, observed: number | null = state === "no-data" ? null : 1): ThresholdOutcome => ({
  key,
  source: "p(95)<50",
  observed,
  state,
  abortOnFail: false,
});

const evidence = (change: Partial<RunEvidence>): RunEvidence => ({
  outcomes: [],
  isTiming: (key) => isTimingMetric(key, () => undefined),
  generatorSaturated: false,
  silentReporters: 0,
  reporters: 4,
  ...change,
});

describe("runVerdict", () => {
  it.each([
    // [evidence, verdict kind, why]
    [{}, "passed", "no thresholds, every shard reported: k6 passes it too"],
    [{ outcomes: [outcome("http_req_duration", "passed")] }, "passed", "every threshold held"],
    [{ outcomes: [outcome("http_req_duration", "failed")] }, "failed", "a threshold broke"],
    [{ outcomes: [outcome("checks", "no-data")] }, "inconclusive", "a limit nobody measured is not a pass"],
    [{ silentReporters: 1 }, "inconclusive", "a shard never reported: part of the load is missing"],
    [{ silentReporters: 1, outcomes: [outcome("http_req_failed", "failed")] }, "failed", "what did arrive already broke a threshold"],
    [{ generatorSaturated: true, outcomes: [outcome("http_req_duration", "failed")] }, "inconclusive", "the failing time may be the generator's"],
    [{ generatorSaturated: true, outcomes: [outcome("http_req_failed", "failed")] }, "failed", "failed answers are the target's"],
    [
      { generatorSaturated: true, outcomes: [outcome("http_req_duration", "failed"), outcome("checks", "failed")] },
      "failed",
      "a failed check beside a doubtful time still fails",
    ],
    [{ generatorSaturated: true, outcomes: [outcome("http_req_duration", "passed")] }, "passed", "saturated but every limit held"],
    [{ thresholdProblems: ["thresholds.x: unknown metric"] }, "inconclusive", "thresholds that no longer parse were never evaluated"],
    [{ notSent: notSent(320) }, "inconclusive", "edgeload lost 3.2 % of the schedule to restarts: over the 1 % bound"],
    [{ notSent: notSent(0, 101) }, "inconclusive", "shards that started too late left 1.01 % unsent: over the bound"],
    [{ notSent: notSent(100) }, "passed", "exactly at the bound: the figure is shown, the run may pass"],
    [{ notSent: notSent(320, 0, 0.05) }, "passed", "the run's own bound (maxNotSentShare 5 %) allows 3.2 %"],
    [{ notSent: notSent(1, 0, 0) }, "inconclusive", "a bound of 0: any iteration edgeload did not send"],
    [{ notSent: notSent(320), outcomes: [outcome("http_req_failed", "failed")] }, "failed", "what did arrive already broke a threshold"],
  ] as const)("%j → %s (%s)", (change, kind, _why) => {
    expect(runVerdict(evidence(change as Partial<RunEvidence>)).kind).toBe(kind);
  });

  it("names each reason", () => {
    const v = runVerdict(evidence({ silentReporters: 2, outcomes: [outcome("checks", "no-data")] }));
    expect(v).toEqual({
      kind: "inconclusive",
      reasons: ["2 of 4 shards never reported done: what they measured is missing", "threshold checks: p(95)<50 has no data (its metric was never recorded)"],
    });
  });

  it("names what edgeload did not send, its share, the bound and the cause — edgeload, not the target", () => {
    expect(runVerdict(evidence({ notSent: notSent(320) }))).toEqual({
      kind: "inconclusive",
      reasons: ["edgeload did not send 3.2 % of the schedule (320 of 10,000 iterations: shard restarts); above the 1 % bound, so the run cannot pass"],
    });
    expect(runVerdict(evidence({ notSent: notSent(300, 20, 0.02) }))).toEqual({
      kind: "inconclusive",
      reasons: [
        "edgeload did not send 3.2 % of the schedule (320 of 10,000 iterations: 300 to shard restarts, 20 never started before a shard's deadline); above the 2 % bound, so the run cannot pass",
      ],
    });
  });

  it("counts a tree's silent shards as shards, of the run's real shards (not its region roots)", () => {
    const v = runVerdict(evidence({ silentReporters: 1_190, reporters: 1_191 }));
    expect(v).toEqual({ kind: "inconclusive", reasons: ["1190 of 1191 shards never reported done: what they measured is missing"] });
  });
});

describe("isTimingMetric", () => {
  it.each([
    ["http_req_duration{step:login}", true],
    ["http_req_waiting", true],
    ["http_req_failed", false],
    ["checks", false],
    ["schedule_lag", true],
    ["my_trend", true],
    ["my_counter", false],
  ] as const)("%s → %s", (key, timing) => {
    expect(isTimingMetric(key, (name) => ({ my_trend: "trend", my_counter: "counter" })[name])).toBe(timing);
  });
});
