import { describe, expect, it } from "vitest";
import { Histogram } from "../metrics/histogram.ts";
import { LE_BOUNDS_US, QUANTILE_RELATIVE_ERROR, runsExposition, type RunMetricsSource } from "./prometheus-text-writer.ts";
import { parseGoFloat, parsePrometheusText, type PromSample } from "./prometheus-text-parser.ts";
import { RunTotals } from "../run/run-totals.ts";
import { MetricStats } from "../metrics/metric-stats.ts";

/** Deterministic pseudo-random latencies (µs), log-spread from ~100 µs to ~2 s. */
function latencies(n: number, seed: number): number[] {
  let x = seed;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    out.push(Math.round(100 * Math.exp((x / 2 ** 31) * Math.log(20_000))));
  }
  return out;
}

function cell(values: number[], statuses: Record<string, number>): MetricStats {
  const s = new MetricStats();
  for (const v of values) s.trends.duration.record(v);
  for (const [k, n] of Object.entries(statuses)) {
    for (let i = 0; i < n; i++) s.countStatus(k);
    s.counters.completed += n;
    s.counters.sent += n;
  }
  s.counters.failed = statuses["500"] ?? 0;
  s.counters.dropped = 3;
  // Of the drops, 2 lost to a restart and 1 never started by the deadline: edgeload's own.
  s.counters.interrupted = 2;
  s.counters.unstarted = 1;
  s.counters.checksPassed = 7;
  s.custom.count("false_positives{type:revoked}", 2);
  // A threshold's sub-metric (core/metrics/sub-metrics.ts): its tags become labels, one renamed where ours would clash.
  s.custom.count("http_reqs{group:::login,status:503}", 4);
  s.custom.rate("token_valid", true);
  s.custom.rate("token_valid", false);
  s.custom.trend("login_time", 1500);
  return s;
}

function source(totals: RunTotals): RunMetricsSource {
  return {
    runId: "r-abc123-0000abcd",
    name: 'a "quoted" run',
    status: "running",
    totals,
    targetRatePerS: 50,
    targetVUs: null,
    achievedRatePerS: 49,
    peakInFlight: 4,
  };
}

/** Prometheus' histogram_quantile(): linear interpolation inside the bucket reaching q·count. */
function histogramQuantile(q: number, buckets: ReadonlyArray<readonly [number, number]>): number {
  const total = buckets.at(-1)![1];
  const rank = q * total;
  let previousBound = 0;
  let previousCount = 0;
  for (const [bound, count] of buckets) {
    if (count >= rank) {
      if (bound === Infinity) return previousBound;
      return previousBound + ((bound - previousBound) * (rank - previousCount)) / (count - previousCount);
    }
    previousBound = bound;
    previousCount = count;
  }
  return NaN;
}

function value(samples: PromSample[], name: string, labels: Record<string, string>): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

describe("runsExposition", () => {
  const a = latencies(5000, 7);
  const b = latencies(3000, 11);
  const totals = new RunTotals();
  totals.add(0, "wnam", 0, cell(a, { "200": 4990, "500": 10 }));
  totals.add(1, "weur", 0, cell(b, { "200": 2999, timeout: 1 }));
  const text = runsExposition([source(totals)]);
  const parsed = parsePrometheusText(text);

  it("parses strictly as the text format, one HELP and TYPE per family", () => {
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems.slice(0, 3)));
    expect(parsed.types.edgeload_http_req_duration_seconds).toBe("histogram");
    expect(parsed.types.edgeload_http_reqs).toBe("counter");
    expect(parsed.types.edgeload_custom_false_positives).toBe("counter");
    expect(parsed.types.edgeload_custom_login_time_seconds).toBe("histogram");
  });

  it("carries an ended run's exit code, and an inconclusive verdict's reason, beside its status", () => {
    const ended = {
      ...source(new RunTotals()),
      status: "inconclusive" as const,
      verdict: { kind: "inconclusive" as const, reasons: ["1 of 4 shards never reported done"] },
    };
    const out = parsePrometheusText(runsExposition([ended]));
    if (!out.ok) throw new Error("unparsed");
    expect(value(out.samples, "edgeload_run_exit_code", {})).toBe(75);
    expect(value(out.samples, "edgeload_run_info", { status: "inconclusive", reason: "1 of 4 shards never reported done" })).toBe(1);
    const scriptAborted = parsePrometheusText(runsExposition([{ ...ended, status: "aborted", endedByScript: true, verdict: null }]));
    if (!scriptAborted.ok) throw new Error("unparsed");
    expect(value(scriptAborted.samples, "edgeload_run_exit_code", {})).toBe(108); // k6's ScriptAborted, as the CLI exits
  });

  it("gives counters per region, step and status, and the run's gauges", () => {
    if (!parsed.ok) throw new Error("unparsed");
    const s = parsed.samples;
    expect(value(s, "edgeload_http_reqs_total", { region: "wnam", step: "0", status: "500" })).toBe(10);
    expect(value(s, "edgeload_http_reqs_total", { region: "weur", status: "timeout" })).toBe(1);
    expect(value(s, "edgeload_http_req_failed_total", { region: "wnam" })).toBe(10);
    expect(value(s, "edgeload_dropped_iterations_total", { region: "weur" })).toBe(3);
    expect(value(s, "edgeload_checks_total", { region: "weur", result: "pass" })).toBe(7);
    expect(value(s, "edgeload_not_sent_iterations_total", { region: "weur", cause: "shard_restart" })).toBe(2);
    expect(value(s, "edgeload_not_sent_iterations_total", { region: "weur", cause: "deadline" })).toBe(1);
    expect(parsed.types.edgeload_not_sent_iterations).toBe("counter");
    expect(value(s, "edgeload_run_info", { name: 'a "quoted" run', status: "running" })).toBe(1);
    expect(value(s, "edgeload_target_rate", {})).toBe(50);
    expect(value(s, "edgeload_peak_in_flight_requests", {})).toBe(4);
    expect(s.some((x) => x.name === "edgeload_vus")).toBe(false);
    expect(s.some((x) => x.name === "edgeload_run_exit_code")).toBe(false); // not ended: no exit code yet
    expect(value(s, "edgeload_custom_false_positives_total", { region: "wnam", type: "revoked" })).toBe(2);
    expect(value(s, "edgeload_custom_token_valid_total", { region: "wnam", result: "fail" })).toBe(1);
    expect(value(s, "edgeload_custom_http_reqs_total", { region: "wnam", group: "::login", tag_status: "503" })).toBe(4);
  });

  it("has exact cumulative bucket counts, _sum and _count", () => {
    if (!parsed.ok) throw new Error("unparsed");
    const buckets = parsed.samples.filter((x) => x.name === "edgeload_http_req_duration_seconds_bucket" && x.labels.region === "wnam");
    expect(buckets).toHaveLength(LE_BOUNDS_US.length + 1);
    for (const bucket of buckets) {
      const le = parseGoFloat(bucket.labels.le!)!;
      const expected = a.filter((v) => v < Math.round(le * 1e6) || le === Infinity).length;
      expect(bucket.value, `le=${bucket.labels.le}`).toBe(expected);
    }
    expect(value(parsed.samples, "edgeload_http_req_duration_seconds_count", { region: "wnam" })).toBe(5000);
    expect(value(parsed.samples, "edgeload_http_req_duration_seconds_sum", { region: "wnam" })).toBeCloseTo(a.reduce((x, y) => x + y, 0) / 1e6, 9);
  });

  it("gives histogram_quantile() within the stated bound of edgeload's quantile", () => {
    if (!parsed.ok) throw new Error("unparsed");
    // Summed over regions by le, as a Grafana panel does.
    const byLe = new Map<number, number>();
    for (const x of parsed.samples.filter((x) => x.name === "edgeload_http_req_duration_seconds_bucket")) {
      const le = parseGoFloat(x.labels.le!)!;
      byLe.set(le, (byLe.get(le) ?? 0) + x.value);
    }
    const buckets = [...byLe].sort((p, q) => p[0] - q[0]);
    const merged = new Histogram();
    for (const v of [...a, ...b]) merged.record(v);
    for (const q of [0.5, 0.9, 0.95, 0.99]) {
      const prom = histogramQuantile(q, buckets) * 1e6;
      const exact = merged.quantile(q);
      expect(Math.abs(prom - exact) / exact, `q=${q}`).toBeLessThanOrEqual(QUANTILE_RELATIVE_ERROR + 1 / 256);
    }
  });

  it("is empty without runs, and merges families across runs", () => {
    expect(runsExposition([])).toBe("");
    const two = parsePrometheusText(runsExposition([source(totals), { ...source(new RunTotals()), runId: "r-abc123-0000ffff" }]));
    expect(two.ok).toBe(true);
    if (two.ok) expect(two.samples.filter((x) => x.name === "edgeload_run_info")).toHaveLength(2);
  });
});

describe("runsExposition of k6/browser's metrics", () => {
  // As the shard records them: trends ×1000 (a time's ms as µs), the pages' bytes as counters.
  const s = new MetricStats();
  s.custom.trend("browser_web_vital_lcp", 1_200_000); // 1.2 s
  s.custom.trend("browser_web_vital_cls", 250); // a score of 0.25
  s.custom.count("browser_data_received", 5123);
  const totals = new RunTotals();
  totals.add(0, "wnam", 0, s);
  const parsed = parsePrometheusText(runsExposition([source(totals)]));

  it("exports the times in seconds, CLS as the score it is, the bytes as counters", () => {
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems.slice(0, 3)));
    expect(parsed.types.edgeload_custom_browser_web_vital_lcp_seconds).toBe("histogram");
    expect(value(parsed.samples, "edgeload_custom_browser_web_vital_lcp_seconds_sum", {})).toBeCloseTo(1.2, 6);
    // Not edgeload_custom_browser_web_vital_cls_seconds, whose sum would read 0.00025.
    expect(parsed.types.edgeload_custom_browser_web_vital_cls).toBe("histogram");
    expect(parsed.types.edgeload_custom_browser_web_vital_cls_seconds).toBeUndefined();
    expect(value(parsed.samples, "edgeload_custom_browser_web_vital_cls_sum", {})).toBeCloseTo(0.25, 6);
    // The score's buckets are in its own unit: 0.25 is under le=0.256, not under 0.224.
    const bucket = (le: string) => value(parsed.samples, "edgeload_custom_browser_web_vital_cls_bucket", { le });
    expect([bucket("0.224"), bucket("0.256")]).toEqual([0, 1]);
    expect(value(parsed.samples, "edgeload_custom_browser_data_received_total", {})).toBe(5123);
  });

  it("exports a script's trend that is not a time (k6's new Trend(name, false)) as itself, and its other trends in seconds", () => {
    const t = new MetricStats();
    t.custom.trend("cart_items", 3_000); // 3 items, kept ×1000 as every trend
    t.custom.trend("checkout_time", 40_000); // 40 ms
    const run = new RunTotals();
    run.add(0, "wnam", 0, t);
    const out = parsePrometheusText(runsExposition([{ ...source(run), unitlessTrends: ["cart_items"] }]));
    if (!out.ok) throw new Error(JSON.stringify(out.problems.slice(0, 3)));
    expect(value(out.samples, "edgeload_custom_cart_items_sum", {})).toBeCloseTo(3, 6);
    expect(out.types.edgeload_custom_cart_items_seconds).toBeUndefined();
    expect(value(out.samples, "edgeload_custom_checkout_time_seconds_sum", {})).toBeCloseTo(0.04, 6);
  });
});
