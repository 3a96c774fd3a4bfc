import { describe, expect, it } from "vitest";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { planRun } from "../plan/plan.ts";
import { parseRunSpec } from "../spec/run-spec.ts";
import { MetricStats } from "../metrics/metric-stats.ts";
import { RunTotals } from "./run-totals.ts";
import { type EndFacts, type RunEnd, runEndStatus } from "./run-end-status.ts";
import { buildFinalSummary } from "./summary.ts";
import { renderSummary } from "./summary-text.ts";

const MARK = "marked failed by the script: soft check failed";
const RAN_TO_ITS_END: EndFacts = { forced: null, note: null, teardown: null, nothingRan: null, markedFailed: undefined };

describe("runEndStatus", () => {
  it.each<[string, Partial<EndFacts>, RunEnd]>([
    // Nothing happened: the thresholds' verdict decides.
    ["ran to its end", {}, { status: null, reason: null, markedFailed: false }],
    // exec.test.fail(): failed, as the script's (exit 110).
    ["marked failed", { markedFailed: MARK }, { status: "failed", reason: MARK, markedFailed: true }],
    // An abort after the mark: k6 returns the abort (108 or 105), not the mark.
    [
      "marked, then aborted",
      { markedFailed: MARK, forced: "aborted", note: "script aborted" },
      { status: "aborted", reason: "script aborted", markedFailed: false },
    ],
    // An abortOnFail threshold after the mark: k6 returns the threshold's 99.
    [
      "marked, then an abortOnFail threshold",
      { markedFailed: MARK, forced: "failed", note: "threshold x failed (abortOnFail)" },
      { status: "failed", reason: "threshold x failed (abortOnFail)", markedFailed: false },
    ],
    // teardown() threw after the mark: k6's ScriptException (107) wins.
    [
      "marked, then teardown() threw",
      { markedFailed: MARK, teardown: { status: "error", reason: "teardown() failed: boom" } },
      { status: "error", reason: "teardown() failed: boom", markedFailed: false },
    ],
    // No iteration could run: an error of edgeload's, whatever setup() marked.
    [
      "marked, but nothing could run",
      { markedFailed: MARK, nothingRan: "no iteration could run" },
      { status: "error", reason: "no iteration could run", markedFailed: false },
    ],
    // An empty reason is still a mark (exec.test.fail() without a message gives "marked failed by the script").
    ["marked with no message", { markedFailed: "" }, { status: "failed", reason: "", markedFailed: true }],
  ])("%s", (_name, facts, end) => {
    expect(runEndStatus({ ...RAN_TO_ITS_END, ...facts })).toEqual(end);
  });
});

describe("the summary of a run its script marked failed", () => {
  function input(thresholds: Record<string, string[]>) {
    const parsed = parseRunSpec({
      target: "http://127.0.0.1:9090",
      steps: [{ path: "/" }],
      executor: "constant-arrival-rate",
      rate: 10,
      duration: "10s",
      regions: ["wnam"],
      shards: 1,
      thresholds,
    });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const planned = planRun(parsed.spec, new ArrivalSchedule(parsed.spec.stages).total);
    if (!planned.ok) throw new Error("no plan");
    const stats = new MetricStats();
    for (let i = 0; i < 100; i++) {
      stats.counters.sent++;
      stats.counters.completed++;
      stats.trends.duration.record(10_000);
      stats.countStatus(200);
    }
    const totals = new RunTotals();
    totals.add(0, "wnam", 0, stats);
    return { runId: "r-marked", spec: parsed.spec, plan: planned.plan, t0Ms: 0, endMs: 10_000, totals, shards: [] };
  }
  const marked = (thresholds: Record<string, string[]>) => {
    const end = runEndStatus({ ...RAN_TO_ITS_END, markedFailed: MARK });
    return buildFinalSummary({ ...input(thresholds), abortReason: end.reason, endedByScript: end.markedFailed }, end.status);
  };

  it("is failed with the script's reason and exits 110, its thresholds passing", () => {
    const e = marked({ http_req_duration: ["p(95)<500"] }).edgeload;
    expect(e).toMatchObject({ status: "failed", exitCode: 110, endedByScript: true, abortReason: MARK, thresholdsPassed: false });
    expect(e.verdict).toEqual({ kind: "failed", reasons: [MARK] });
    expect(e.thresholds.every((t) => t.state === "passed")).toBe(true);
  });

  it("exits 110, not 99, when a threshold failed too (as k6 v1.8.1), and still shows that threshold failing", () => {
    const summary = marked({ http_req_duration: ["p(95)<5"] });
    expect(summary.edgeload.exitCode).toBe(110);
    expect(summary.edgeload.thresholds.find((t) => t.metric === "http_req_duration")).toMatchObject({ state: "failed", ok: false });
    // The text says why the run failed, on its first line.
    expect(renderSummary(summary).split("\n")[0]).toContain(`FAILED (${MARK})`);
  });
});
