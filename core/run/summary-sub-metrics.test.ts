import { describe, expect, it } from "vitest";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { planRun } from "../plan/plan.ts";
import { parseRunSpec } from "../spec/run-spec.ts";
import { MetricStats } from "../metrics/metric-stats.ts";
import type { RequestTrail } from "../metrics/request-trail.ts";
import { recordTrail } from "../metrics/request-trail.ts";
import { recordRequestSubMetrics, recordSubSample, subMetricFilters } from "../metrics/sub-metrics.ts";
import { RunTotals } from "./run-totals.ts";
import { parseRunThresholds } from "./run-thresholds.ts";
import { buildFinalSummary } from "./summary.ts";
import { renderSummary } from "./summary-text.ts";

/** A run whose thresholds name sub-metrics of requests, checks and a custom trend, recorded as a shard records them. */
function run(thresholds: Record<string, string[]>) {
  const parsed = parseRunSpec({
    target: "http://127.0.0.1:9090",
    steps: [{ path: "/" }],
    executor: "constant-arrival-rate",
    rate: 10,
    duration: "10s",
    shards: 2,
    regions: ["wnam", "weur"],
    // A k6 Trend without isTime: plain numbers.
    metrics: { asset_size: { type: "trend", time: false } },
    thresholds,
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const spec = parsed.spec;
  const planned = planRun(spec, new ArrivalSchedule(spec.stages).total);
  if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
  const filters = subMetricFilters(parseRunThresholds(spec).thresholds);
  const totals = new RunTotals();
  // Two shards' windows, merged by the coordinator: each sent 10 requests named "home" (20 ms,
  // one failing with a 503) and 10 static assets (2 ms), and checked each "home" with myTag:x.
  for (const shard of [0, 1]) {
    const stats = new MetricStats();
    for (let i = 0; i < 10; i++) {
      for (const [name, ms, status] of [
        ["home", 20, i === 0 ? 503 : 200],
        ["asset", 2, 200],
      ] as const) {
        const trail: RequestTrail = {
          queuedMs: 0,
          sendMs: 0,
          ttfbMs: 1,
          endMs: ms,
          intendedMs: null,
          clientDelayMs: 0,
          status,
          statusText: "",
          bytes: 10,
          error: null,
          errorMessage: "",
        };
        const failed = recordTrail(stats, trail, null);
        // As the shard tags them: its scenario ("default" in a run of one), then the request's own.
        const own: Record<string, string> = name === "home" ? { name: "home" } : { name: `/style${i}.css`, staticAsset: "yes" };
        const tags: Record<string, string> = { scenario: "default", ...own };
        recordRequestSubMetrics(() => stats.custom, filters, tags, trail, failed);
      }
      if (i !== 0) stats.counters.checksPassed++;
      else stats.counters.checksFailed++;
      recordSubSample(() => stats.custom, filters, "checks", { myTag: "x", check: "home ok" }, i !== 0);
      stats.custom.trend("asset_size", 3 * 1000);
      recordSubSample(() => stats.custom, filters, "asset_size", { staticAsset: "yes" }, 3);
    }
    // Through the wire, as a window travels from shard to coordinator.
    totals.addWire(shard, "local", 0, stats.toWire());
  }
  return buildFinalSummary({ runId: "r-sub", spec, plan: planned.plan, t0Ms: 0, endMs: 10_000, totals, shards: [] }, null);
}

describe("sub-metrics in the summary", () => {
  const summary = run({
    "http_req_duration{name:home}": ["p(95)<10"],
    "http_req_failed{name:home}": ["rate<0.2"],
    "http_reqs{staticAsset:yes}": ["count==20"],
    "checks{myTag:x}": ["rate>0.8"],
    "asset_size{staticAsset:yes}": ["avg<5"],
    "http_reqs{scenario:default,name:home}": ["count==20"],
  });
  const m = summary.metrics as Record<string, any>;

  it("gives each sub-metric its own figures, merged across shards, and its threshold's verdict", () => {
    expect(m["http_req_duration{name:home}"]).toMatchObject({ max: 20, thresholds: { "p(95)<10": true } });
    expect(m["http_req_failed{name:home}"]).toMatchObject({ passes: 2, fails: 18, value: 0.1, thresholds: { "rate<0.2": false } });
    expect(m["http_reqs{staticAsset:yes}"]).toMatchObject({ count: 20, thresholds: { "count==20": false } });
    expect(m["checks{myTag:x}"]).toMatchObject({ passes: 18, fails: 2, thresholds: { "rate>0.8": false } });
    expect(m["asset_size{staticAsset:yes}"]).toMatchObject({ type: "trend", avg: 3, thresholds: { "avg<5": false } });
    // A run of one scenario is k6's "default": the filter selects the whole run's cells.
    expect(m["http_reqs{scenario:default,name:home}"]).toMatchObject({ count: 20, thresholds: { "count==20": false } });
    // The parents keep every sample.
    expect(m.http_reqs.count).toBe(40);
    expect(summary.edgeload.verdict?.kind).toBe("failed");
  });

  it("prints each sub-metric under its metric, as k6 does", () => {
    const text = renderSummary(summary);
    expect(text).toMatch(/ {2}http_req_duration\.+: .*\n {4}\{ name:home \}\.+: avg=20(\.0+)?ms/);
    expect(text).toMatch(/ {2}http_req_failed\.+: .*\n {4}\{ name:home \}\.+: 10\.00% ✓ 2 ✗ 18/);
    expect(text).toMatch(/ {2}http_reqs\.+: 40 .*\n {4}\{ scenario:default,name:home \}\.+: 20 .*\n {4}\{ staticAsset:yes \}\.+: 20 /);
    expect(text).toMatch(/ {2}checks\.+: .*\n {4}\{ myTag:x \}\.+: 90\.00% ✓ 18 ✗ 2/);
    expect(text).toMatch(/ {2}asset_size\.+: .*\n {4}\{ staticAsset:yes \}\.+: avg=3/);
  });

  it("prints a trend of plain numbers without a unit, its threshold's observed value too (k6's Trend without isTime)", () => {
    const text = renderSummary(summary);
    expect(text).toMatch(/^ {2}asset_size\.+: avg=3 min=3 med=3 max=3 p\(90\)=3 p\(95\)=3 p\(99\)=3$/m);
    expect(text).toContain("asset_size{staticAsset:yes} 'avg<5' observed 3\n");
    expect(text).toMatch(/ {2}http_req_duration\.+: avg=\d+(\.\d+)?ms/);
  });

  it("counts a counter sub-metric nothing matched as 0, as k6 does; a trend's has no data, and the verdict names its filter", () => {
    const empty = run({ "http_reqs{name:nowhere}": ["count<1", "count==3"], "http_req_duration{name:nowhere}": ["p(95)<10"] });
    expect(empty.edgeload.thresholds.map((t) => [t.threshold, t.state, t.observed])).toEqual([
      ["count<1", "passed", 0],
      ["count==3", "failed", 0],
      ["p(95)<10", "no-data", null],
    ]);
    // A failed threshold decides: k6 exits 99 on count==3 over no samples.
    expect(empty.edgeload.verdict?.kind).toBe("failed");
    const healthy = run({ "http_reqs{name:nowhere}": ["count<1"] });
    expect(healthy.edgeload.verdict).toEqual({ kind: "passed" });
    const unknown = run({ "http_reqs{name:nowhere}": ["count<1"], "http_req_duration{name:nowhere}": ["p(95)<10"] });
    expect(unknown.edgeload.verdict).toEqual({
      kind: "inconclusive",
      reasons: ["threshold http_req_duration{name:nowhere}: p(95)<10 has no data (no sample matched {name:nowhere})"],
    });
  });
});
