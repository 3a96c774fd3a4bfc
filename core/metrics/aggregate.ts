/**
 * k6 metric names read off a MetricStats: the bridge between thresholds, summaries and
 * merged measurements. Trend values come out in milliseconds, as in k6.
 */
import type { Histogram } from "./histogram.ts";
import type { MetricStats, TrendName } from "./metric-stats.ts";
import type { Aggregation, MetricName, Threshold } from "./thresholds.ts";

export const TREND_OF: Partial<Record<MetricName, TrendName>> = {
  http_req_duration: "duration",
  http_req_waiting: "ttfb",
  http_req_corrected: "corrected",
  schedule_lag: "lag",
  client_delay: "clientDelay",
};

/**
 * The custom series a k6 script's iterations are timed into (workers/shard/iteration-io.ts):
 * k6's iteration_duration, shown by the summary as k6 shows it.
 */
export const ITERATION_DURATION = "iteration_duration";

/** Trend aggregate in ms, or null without samples. */
export function trendAggregate(stats: MetricStats, trend: TrendName, aggregation: Aggregation): number | null {
  return histogramAggregate(stats.trends[trend], aggregation);
}

function histogramAggregate(h: Histogram | undefined, aggregation: Aggregation): number | null {
  if (!h || h.count === 0) return null;
  const us = (() => {
    switch (aggregation.kind) {
      case "avg":
        return h.mean;
      case "min":
        return h.min;
      case "max":
        return h.max;
      case "med":
        return h.quantile(0.5);
      case "percentile":
        return h.quantile(aggregation.p / 100);
      default:
        return NaN;
    }
  })();
  return Number.isNaN(us) ? null : us / 1000;
}

/** Rates as k6 defines them: http_req_failed = failed/completed, checks = passed/all. */
export function rateOf(stats: MetricStats, metric: "http_req_failed" | "checks"): number | null {
  const c = stats.counters;
  if (metric === "http_req_failed") return c.completed === 0 ? null : c.failed / c.completed;
  const all = c.checksPassed + c.checksFailed;
  return all === 0 ? null : c.checksPassed / all;
}

export function countOf(stats: MetricStats, metric: "http_reqs" | "iterations" | "dropped_iterations"): number {
  const c = stats.counters;
  return metric === "dropped_iterations" ? c.dropped : metric === "iterations" ? c.iterations : c.completed;
}

/** The recorded name of a custom metric, with its `type` tag if the threshold filters one. */
export function customKey(metric: string, type: string | undefined): string {
  return type === undefined ? metric : `${metric}{type:${type}}`;
}

/**
 * Aggregate of a scenario's custom metric, or of a recorded sub-metric (sub-metrics.ts). A
 * counter with no samples is 0, declared or tag-filtered, as in k6 (`http_reqs{status:500}:
 * count<1` holds on a healthy run; `count==3` fails); a rate or trend has no value until a
 * sample matched it (summary-sub-metrics.test.ts).
 */
export function customAggregate(
  stats: MetricStats,
  t: Pick<Threshold, "metric" | "kind" | "aggregation" | "tags"> & Partial<Pick<Threshold, "subMetric">>,
  elapsedS: number,
): number | null {
  const key = t.subMetric ?? customKey(t.metric, t.tags.type);
  const custom = stats.hasCustom ? stats.custom : null;
  switch (t.kind) {
    case "trend":
      return histogramAggregate(custom?.trends.get(key), t.aggregation);
    case "rate": {
      const r = custom?.rates.get(key);
      return r && r[1] > 0 ? r[0] / r[1] : null;
    }
    case "counter": {
      const count = custom?.counters.get(key) ?? 0;
      if (t.aggregation.kind === "count") return count;
      return elapsedS > 0 ? count / elapsedS : null;
    }
    case "gauge":
      // k6's `value`: the last one set (gauge-last.ts); a gauge never set has none.
      return custom?.gauges.get(key)?.[1] ?? null;
  }
}

/**
 * Any aggregate of a built-in metric the shards record; `elapsedS` turns counts into rates.
 * The VU gauges are not in the stats: null (core/run/run-thresholds.ts reads them off the plan).
 */
export function metricAggregate(stats: MetricStats, metric: MetricName, aggregation: Aggregation, elapsedS: number): number | null {
  if (metric === "vus" || metric === "vus_max") return null;
  const trend = TREND_OF[metric];
  if (trend) return trendAggregate(stats, trend, aggregation);
  if (metric === "http_req_failed" || metric === "checks") return rateOf(stats, metric);
  const count = countOf(stats, metric as "http_reqs" | "iterations" | "dropped_iterations");
  if (aggregation.kind === "count") return count;
  return elapsedS > 0 ? count / elapsedS : null;
}
