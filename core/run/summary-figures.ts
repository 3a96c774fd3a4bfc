/**
 * The figures a summary shows for one metric or one group, in k6's summary-export shapes:
 * trend figures in milliseconds from a histogram, the compact per-group figures of the
 * breakdowns (region, step, colo, shard, scenario), a built-in metric's values, and a
 * scenario's custom metrics. Kept apart from the summary's layout (summary.ts) because the
 * live view and the reports read the same figures.
 *
 * Every percentile here comes from one histogram, merged beforehand; nothing is averaged.
 */
import { countOf, rateOf, TREND_OF } from "../metrics/aggregate.ts";
import type { Histogram } from "../metrics/histogram.ts";
import type { CustomMetrics, MetricStats, TrendName } from "../metrics/metric-stats.ts";
import type { MetricKind, MetricName } from "../metrics/thresholds.ts";
import { round3, round6 } from "../metrics/rounding.ts";

/** k6's summary-export trend keys. p(99) is added because every Authrim preset uses it. */
const TREND_KEYS = [
  ["avg", "avg"],
  ["min", "min"],
  ["med", "med"],
  ["max", "max"],
  ["p(90)", "p90"],
  ["p(95)", "p95"],
  ["p(99)", "p99"],
] as const;

export interface TrendSummary {
  readonly avg: number;
  readonly min: number;
  readonly med: number;
  readonly max: number;
  readonly "p(90)": number;
  readonly "p(95)": number;
  readonly "p(99)": number;
  // A run's summaryTrendStats may add more keys (`count`, `p(50)`, `p(99.9)`, …): read them
  // by name (trendLine in text-format.ts), as k6's own summary data holds them.
}

/** The trend keys every summary has, in k6's order. */
export const DEFAULT_TREND_STATS: readonly string[] = TREND_KEYS.map(([k]) => k);

/** Trend figures in milliseconds (k6 units), or null without samples; `extra` adds summaryTrendStats' others. */
export function trendSummary(stats: MetricStats, trend: TrendName, extra: readonly string[] = []): TrendSummary | null {
  return histogramSummary(stats.trends[trend], extra);
}

function histogramSummary(h: Histogram, extra: readonly string[] = []): TrendSummary | null {
  if (h.count === 0) return null;
  const ms = (us: number) => round3(us / 1000);
  const out: TrendSummary & Record<string, number> = {
    avg: ms(h.mean),
    min: ms(h.min),
    med: ms(h.quantile(0.5)),
    max: ms(h.max),
    "p(90)": ms(h.quantile(0.9)),
    "p(95)": ms(h.quantile(0.95)),
    "p(99)": ms(h.quantile(0.99)),
  };
  // k6's summaryTrendStats: any percentile, and the count (core/spec: validated when parsed).
  for (const stat of extra) {
    if (stat in out) continue;
    if (stat === "count") out.count = h.count;
    const p = /^p\((\d+(?:\.\d+)?)\)$/.exec(stat);
    if (p) out[stat] = ms(h.quantile(Math.min(100, Number(p[1])) / 100));
  }
  return out;
}

/** The compact per-group figures used in breakdowns (region, step, colo, shard). */
export interface GroupSummary {
  readonly requests: number;
  readonly ratePerS: number;
  readonly failed: number;
  readonly failedRate: number;
  readonly dropped: number;
  readonly statuses: Readonly<Record<string, number>>;
  readonly http_req_duration: TrendSummary | null;
  readonly http_req_waiting: TrendSummary | null;
  readonly corrected: TrendSummary | null;
  readonly schedule_lag: TrendSummary | null;
  readonly slot_wait: TrendSummary | null;
  readonly client_delay: TrendSummary | null;
}

export function groupSummary(stats: MetricStats, elapsedS: number): GroupSummary {
  const c = stats.counters;
  return {
    requests: c.completed,
    ratePerS: elapsedS > 0 ? round3(c.completed / elapsedS) : 0,
    failed: c.failed,
    failedRate: round6(rateOf(stats, "http_req_failed") ?? 0),
    dropped: c.dropped,
    statuses: stats.statuses,
    http_req_duration: trendSummary(stats, "duration"),
    http_req_waiting: trendSummary(stats, "ttfb"),
    corrected: trendSummary(stats, "corrected"),
    schedule_lag: trendSummary(stats, "lag"),
    slot_wait: trendSummary(stats, "slotWait"),
    client_delay: trendSummary(stats, "clientDelay"),
  };
}

/**
 * A built-in metric's values in k6's summary-export shape, over `stats`: a sub-metric named
 * by a threshold key shows its figures, as k6 shows `http_req_duration{step:login}`.
 */
export function builtInValues(stats: MetricStats, metric: MetricName, elapsedS: number, extra: readonly string[] = []): Record<string, number> | undefined {
  const trend = TREND_OF[metric];
  if (trend) return (trendSummary(stats, trend, extra) ?? undefined) as Record<string, number> | undefined;
  const c = stats.counters;
  if (metric === "http_req_failed") return { passes: c.failed, fails: c.completed - c.failed, value: round6(c.completed ? c.failed / c.completed : 0) };
  if (metric === "checks") {
    const all = c.checksPassed + c.checksFailed;
    return all ? { passes: c.checksPassed, fails: c.checksFailed, value: round6(c.checksPassed / all) } : undefined;
  }
  const count = countOf(stats, metric as "http_reqs" | "iterations" | "dropped_iterations");
  return { count, rate: round6(count / elapsedS) };
}

export type CustomMetricSummary =
  | { readonly type: "counter"; readonly count: number; readonly rate: number }
  | { readonly type: "rate"; readonly passes: number; readonly fails: number; readonly value: number }
  | ({ readonly type: "trend" } & TrendSummary);

/**
 * A scenario's custom metrics in k6's summary shapes: every declared one (a counter never
 * incremented shows 0 — "zero false positives" is a result), plus each tagged variant that
 * was recorded, e.g. `false_positives{type:revoked}`. A rate or trend without samples is
 * left out.
 */
export function customMetricsSummary(
  stats: MetricStats,
  declared: Readonly<Record<string, MetricKind>>,
  elapsedS: number,
  extra: readonly string[] = [],
): Record<string, CustomMetricSummary> {
  const custom = stats.hasCustom ? stats.custom : null;
  const names = new Set([...Object.keys(declared), ...(custom ? [...custom.counters.keys(), ...custom.rates.keys(), ...custom.trends.keys()] : [])]);
  const out: Record<string, CustomMetricSummary> = {};
  for (const key of [...names].sort()) {
    const kind = declared[key.replace(/\{.*$/, "")];
    const value = kind === undefined ? undefined : seriesSummary(custom, key, kind, elapsedS, extra, kind === "counter");
    if (value) out[key] = value;
  }
  return out;
}

/**
 * One custom series in k6's summary shape: a custom metric, or a sub-metric recorded under
 * its name (core/metrics/sub-metrics.ts). A rate or trend without samples has none; a
 * counter has 0 when `zeroCounter` (a declared metric), else none.
 */
export function seriesSummary(
  custom: CustomMetrics | null,
  key: string,
  kind: MetricKind,
  elapsedS: number,
  extra: readonly string[] = [],
  zeroCounter = false,
): CustomMetricSummary | undefined {
  if (kind === "counter") {
    const count = custom?.counters.get(key);
    if (count === undefined && !zeroCounter) return undefined;
    return { type: "counter", count: count ?? 0, rate: round6((count ?? 0) / elapsedS) };
  }
  if (kind === "rate") {
    const r = custom?.rates.get(key);
    return r && r[1] > 0 ? { type: "rate", passes: r[0], fails: r[1] - r[0], value: round6(r[0] / r[1]) } : undefined;
  }
  const h = custom?.trends.get(key);
  const t = h ? histogramSummary(h, extra) : null;
  return t ? { type: "trend", ...t } : undefined;
}
