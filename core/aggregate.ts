/**
 * k6 metric names read off a MetricStats: the bridge between thresholds, summaries and
 * merged measurements. Trend values come out in milliseconds, as in k6.
 */
import type { MetricStats, TrendName } from "./stats.ts";
import type { Aggregation, MetricName } from "./thresholds.ts";

export const TREND_OF: Partial<Record<MetricName, TrendName>> = {
  http_req_duration: "duration",
  http_req_waiting: "ttfb",
  http_req_corrected: "corrected",
  schedule_lag: "lag",
};

/** Trend aggregate in ms, or null without samples. */
export function trendAggregate(stats: MetricStats, trend: TrendName, aggregation: Aggregation): number | null {
  const h = stats.trends[trend];
  if (h.count === 0) return null;
  const us = (() => {
    switch (aggregation.kind) {
      case "avg": return h.mean;
      case "min": return h.min;
      case "max": return h.max;
      case "med": return h.quantile(0.5);
      case "percentile": return h.quantile(aggregation.p / 100);
      default: return NaN;
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
  return metric === "dropped_iterations" ? stats.counters.dropped : stats.counters.completed;
}

/** Any aggregate of any known metric; `elapsedS` turns counts into rates. */
export function metricAggregate(stats: MetricStats, metric: MetricName, aggregation: Aggregation, elapsedS: number): number | null {
  const trend = TREND_OF[metric];
  if (trend) return trendAggregate(stats, trend, aggregation);
  if (metric === "http_req_failed" || metric === "checks") return rateOf(stats, metric);
  const count = countOf(stats, metric as "http_reqs" | "iterations" | "dropped_iterations");
  if (aggregation.kind === "count") return count;
  return elapsedS > 0 ? count / elapsedS : null;
}
