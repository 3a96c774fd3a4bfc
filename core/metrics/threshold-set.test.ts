/**
 * A run's thresholds are parsed once (parseRunThresholds, when the run is created or
 * restored) and every later use evaluates that set: the summary, the live verdicts, the
 * abortOnFail check. Each test hands over a set that differs from the spec's own
 * thresholds, so a function that parsed the spec again would show the spec's instead.
 */
import { describe, expect, it } from "vitest";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { liveVerdicts } from "../run/live-view.ts";
import { planRun } from "../plan/plan.ts";
import { parseRunSpec } from "../spec/run-spec.ts";
import { RunTotals } from "../run/run-totals.ts";
import { MetricStats } from "./metric-stats.ts";
import { buildFinalSummary, buildSummary } from "../run/summary.ts";
import { parseRunThresholds, shouldAbortRun } from "../run/run-thresholds.ts";

function run(thresholds: Record<string, unknown>) {
  const r = parseRunSpec({ target: "http://127.0.0.1:9090", steps: [{ path: "/" }], executor: "constant-arrival-rate", rate: 10, duration: "10s", thresholds });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  const planned = planRun(r.spec, new ArrivalSchedule(r.spec.stages).total);
  if (!planned.ok) throw new Error("plan refused");
  return { spec: r.spec, plan: planned.plan };
}

/** 100 requests at 20 ms, `failed` of them failed. */
function totalsOf(failed: number): RunTotals {
  const s = new MetricStats();
  for (let i = 0; i < 100; i++) {
    s.counters.sent++;
    s.counters.completed++;
    s.counters.iterations++;
    s.trends.duration.record(20_000);
    s.countStatus(200);
  }
  s.counters.failed += failed;
  const totals = new RunTotals();
  totals.add(0, "wnam", 0, s);
  return totals;
}

// The spec says p(95)<50 (holds at 20 ms); the set handed over says p(95)<10 (fails).
const { spec, plan } = run({ http_req_duration: ["p(95)<50"] });
const stricter = parseRunThresholds(run({ http_req_duration: ["p(95)<10"] }).spec);
const input = { runId: "r-set", spec, plan, t0Ms: 0, endMs: 10_000, totals: totalsOf(0), shards: [], thresholds: stricter };

describe("parseRunThresholds", () => {
  it.each([
    // No thresholds: an empty set, nothing to evaluate while the run goes.
    [{}, 0, false],
    // Two expressions under one key are two thresholds.
    [{ http_req_duration: ["p(95)<50", "p(99)<100"] }, 2, false],
    // One with abortOnFail makes the set worth evaluating at each tick.
    [{ http_req_failed: [{ threshold: "rate<0.1", abortOnFail: true }] }, 1, true],
  ])("%j → %i thresholds, abortOnFail %s", (thresholds, count, abortOnFail) => {
    const set = parseRunThresholds(run(thresholds).spec);
    expect(set.thresholds).toHaveLength(count);
    expect(set.abortOnFail).toBe(abortOnFail);
  });
});

describe("a parsed threshold set is evaluated, not parsed again", () => {
  it("buildSummary shows the set's thresholds, not the spec's", () => {
    const summary = buildSummary({ ...input, status: "running" });
    expect(summary.edgeload.thresholds.map((t) => t.threshold)).toEqual(["p(95)<10"]);
    expect(summary.edgeload.thresholdsPassed).toBe(false);
  });

  it("liveVerdicts shows the set's thresholds", () => {
    expect(liveVerdicts(spec, input.totals, 10, stricter).thresholds.map((t) => [t.threshold, t.ok])).toEqual([["p(95)<10", false]]);
  });

  it("shouldAbortRun looks at the set's abortOnFail, not the spec's", () => {
    const aborting = parseRunThresholds(run({ http_req_duration: [{ threshold: "p(95)<10", abortOnFail: true }] }).spec);
    expect(shouldAbortRun(spec, input.totals, 5_000, aborting)?.source).toBe("p(95)<10");
    expect(shouldAbortRun(spec, input.totals, 5_000, stricter)).toBeUndefined();
  });
});

describe("buildFinalSummary: one evaluation gives the verdict and the summary", () => {
  it.each([
    // No forced status: the thresholds decide, and the stricter set fails the run.
    [null, stricter, "failed", false],
    // The spec's own set holds: the run passes.
    [null, parseRunThresholds(spec), "passed", true],
    // An abort keeps its status whatever the thresholds say; the summary still shows them.
    ["aborted", stricter, "aborted", false],
    // So does an error; its thresholds held over part of a run, so they did not pass it.
    ["error", parseRunThresholds(spec), "error", false],
  ] as const)("forced %s → %s", (forced, thresholds, status, passed) => {
    const summary = buildFinalSummary({ ...input, thresholds }, forced);
    expect(summary.edgeload.status).toBe(status);
    expect(summary.edgeload.thresholdsPassed).toBe(passed);
  });

  it("is the summary buildSummary gives for the same status, with the verdict it was decided by", () => {
    const final = buildFinalSummary(input, null);
    const { verdict, ...rest } = final.edgeload;
    expect(verdict).toEqual({ kind: "failed", reasons: [expect.stringContaining("p(95)<10 failed")] });
    const live = buildSummary({ ...input, status: final.edgeload.status });
    expect(live.edgeload.verdict).toBeNull();
    expect({ ...final, edgeload: rest }).toEqual({ ...live, edgeload: { ...live.edgeload, verdict: undefined } });
  });

  it("never passes a restored run whose thresholds no longer parse: an empty set is not a pass", () => {
    const unparsable = parseRunThresholds({ ...spec, thresholds: { no_such_metric: ["p(95)<10"] } });
    expect(unparsable.thresholds).toHaveLength(0);
    const summary = buildFinalSummary({ ...input, thresholds: unparsable }, null);
    expect(summary.edgeload.status).toBe("inconclusive");
    expect(summary.edgeload.verdict).toEqual({ kind: "inconclusive", reasons: [expect.stringContaining("no_such_metric: unknown metric")] });
  });
});
