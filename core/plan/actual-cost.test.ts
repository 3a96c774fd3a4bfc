/**
 * A run's cost beside its plan's (issue 49): the same pricing of what the run really did —
 * its shards for the seconds it lasted, the requests it sent — and the target's time to first
 * byte measured beside the latency the plan assumed. The summary carries it as
 * `edgeload.cost`, the text summary in a line.
 */
import { describe, expect, it } from "vitest";
import { Histogram } from "../metrics/histogram.ts";
import { MetricStats } from "../metrics/metric-stats.ts";
import { RunTotals } from "../run/run-totals.ts";
import { buildSummary } from "../run/summary.ts";
import { renderSummary } from "../run/summary-text.ts";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { parseRunSpec } from "../spec/run-spec.ts";
import { costLine, runCostSummary } from "./actual-cost.ts";
import { planRun } from "./plan.ts";
import { preflight } from "./preflight.ts";

const parsed = parseRunSpec({
  target: "http://127.0.0.1:9",
  steps: [{ path: "/" }],
  executor: "constant-arrival-rate",
  rate: 100,
  duration: "60s",
  regions: ["wnam", "weur"],
  expectedLatency: "30ms",
});
if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
const spec = parsed.spec;
const planned = planRun(spec, new ArrivalSchedule(spec.stages).total);
if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
const plan = planned.plan;

/** A time-to-first-byte histogram of `n` responses at `ms` each. */
function ttfbOf(n: number, ms: number): Histogram {
  const h = new Histogram();
  for (let i = 0; i < n; i++) h.record(ms * 1000);
  return h;
}

describe("runCostSummary", () => {
  it("a run that went as planned costs what the plan said", () => {
    const c = runCostSummary({ spec, plan, elapsedS: 60, sentRequests: 6_000, ttfb: ttfbOf(100, 30) });
    expect(c.planned.usd).toBeCloseTo(preflight(spec, plan).cost.totalUsd, 12);
    expect(c.actual.usd).toBeCloseTo(c.planned.usd, 12);
    expect(c.actual.requests).toBe(6_000);
    expect(c.actual.shardSeconds).toBe(plan.shards.length * 60);
    expect(c.latencyPlannedMs).toBe(30);
    expect(c.latencyMeasuredMs).toBeCloseTo(30, 0);
  });

  it("an aborted run is priced for the seconds it lasted and the requests it sent", () => {
    const c = runCostSummary({ spec, plan, elapsedS: 15, sentRequests: 1_500, ttfb: ttfbOf(100, 30) });
    expect(c.actual.shardSeconds).toBe(plan.shards.length * 15);
    expect(c.actual.requests).toBe(1_500);
    expect(c.actual.usd).toBeLessThan(c.planned.usd * 0.5);
  });

  it("measures the target's p95 time to first byte, not its mean, and says when there is none", () => {
    const h = ttfbOf(90, 20);
    for (let i = 0; i < 10; i++) h.record(200_000);
    expect(runCostSummary({ spec, plan, elapsedS: 60, sentRequests: 100, ttfb: h }).latencyMeasuredMs).toBeCloseTo(200, 0);
    expect(runCostSummary({ spec, plan, elapsedS: 60, sentRequests: 0, ttfb: new Histogram() }).latencyMeasuredMs).toBeNull();
  });
});

describe("costLine", () => {
  it.each([
    // As planned: the figures, no advice.
    [
      30,
      /^\$0\.\d+ run up \(\$\d\.\d+ per million requests\), \$0\.\d+ planned \(prices of \d{4}-\d\d-\d\d\); time to first byte p95 30 ms measured, 30 ms planned$/,
    ],
    // Slower than planned by more than a fifth: plan the next run at what was measured.
    [80, /time to first byte p95 80 ms measured, 30 ms planned: plan the next run at 80 ms \(edgeload plan --probe\)$/],
  ])("measured %d ms → %s", (ms, line) => {
    expect(costLine(runCostSummary({ spec, plan, elapsedS: 60, sentRequests: 6_000, ttfb: ttfbOf(100, ms) }))).toMatch(line);
  });

  it("says when nothing was measured", () => {
    expect(costLine(runCostSummary({ spec, plan, elapsedS: 1, sentRequests: 0, ttfb: new Histogram() }))).toMatch(
      /time to first byte 30 ms planned, none measured$/,
    );
  });
});

describe("the summary's cost", () => {
  const stats = new MetricStats();
  for (let i = 0; i < 200; i++) {
    stats.counters.sent++;
    stats.counters.completed++;
    stats.trends.ttfb.record(45_000);
    stats.trends.duration.record(46_000);
  }
  const totals = new RunTotals();
  totals.add(0, "wnam", 0, stats);
  const summary = buildSummary({
    runId: "r-cost",
    status: "running",
    spec,
    plan,
    t0Ms: 0,
    endMs: 30_000,
    totals,
    shards: plan.shards.map((s) => ({ index: s.index, region: s.region, segment: s.segment, colo: "local", telemetry: null })),
  });

  it("records the plan's cost, what the run ran up over its 30 s and 200 requests, and the latency planned and measured", () => {
    const cost = summary.edgeload.cost;
    expect(cost.planned.usd).toBeCloseTo(preflight(spec, plan).cost.totalUsd, 12);
    expect(cost.actual).toEqual(runCostSummary({ spec, plan, elapsedS: 30, sentRequests: 200, ttfb: stats.trends.ttfb }).actual);
    expect(cost.latencyPlannedMs).toBe(30);
    expect(cost.latencyMeasuredMs).toBeCloseTo(45, 0);
  });

  it("prints it in a line of the text summary", () => {
    expect(renderSummary(summary)).toContain(`  cost ${costLine(summary.edgeload.cost)}`);
    expect(renderSummary(summary)).toContain("p95 45 ms measured, 30 ms planned: plan the next run at 45 ms");
  });
});
