/**
 * Run comparison: is a candidate run slower, or more error-prone, than a baseline — beyond
 * sampling noise, and by more than anyone would care about?
 *
 * Per region (and "all") it compares p50, p95, p99 and mean http_req_duration, the error
 * rate and the dropped share. A metric a run has no data for is "no-data", and makes the
 * comparison inconclusive, never "unchanged". A verdict of "regressed" or "improved" needs the whole confidence
 * interval of the change (candidate − baseline) beyond a practical minimum: by default the
 * larger of 5% of the baseline and 1 ms for latency (never less than a step of the coarser
 * run's clock, core/metrics/clock-resolution.ts), 0.1 percentage point for rates. Huge
 * runs make every difference statistically significant; the practical minimum is what
 * keeps a 0.5% drift on a million requests from failing a pipeline, and the interval is
 * what keeps a 200-request run's p99 noise from doing so.
 *
 * Latency: a percentile bootstrap over the two runs' histograms (latency-bootstrap.ts),
 * one draw per non-empty bucket whatever the number of requests.
 *
 * Rates: Newcombe's hybrid score interval for a difference of proportions (method 10 of
 * Newcombe 1998, Statistics in Medicine 17:873–890), which stays sound with few or zero
 * failures, and a two-sided test of "no difference" — the pooled two-proportion z-test, or
 * Fisher's exact test when an expected cell count is below 5. A rate verdict needs both.
 *
 * Pure and deterministic: resampling uses a seeded generator (per region, so adding a
 * region does not move the others' figures), and the same runs give the same answer.
 *
 * @example
 * const result = compareRuns(baselineInput, candidateInput, { minRelative: 0.1 });
 * process.exitCode = verdictExitCode(result.outcome); // 0 passed, 99 regressed, 75 not comparable
 */
import { parseDurationMs } from "../spec/duration.ts";
import type { Histogram } from "../metrics/histogram.ts";
import { aggregateGroups, type QueryGroup, type QueryInput, type QueryTrend } from "./query.ts";
import type { Problem } from "../spec/input-problem.ts";
import { seededRandom, proportionDifference } from "./comparison-statistics.ts";
import { fnv1a32 } from "../data/fnv1a.ts";
import { bootstrapDeltas, percentileInterval, QUANTILES } from "./latency-bootstrap.ts";
import { failed, inconclusive, PASSED, type Verdict as GateVerdict } from "../run/verdict.ts";

export const LATENCY_METRICS = ["p50", "p95", "p99", "mean"] as const;
export const RATE_METRICS = ["error_rate", "dropped_share"] as const;
export const COMPARE_METRICS = [...LATENCY_METRICS, ...RATE_METRICS] as const;
export type CompareMetric = (typeof COMPARE_METRICS)[number];
/** A metric's change: beyond noise either way, within it, or not comparable (a run has no data for it). */
export type Verdict = "regressed" | "improved" | "unchanged" | "no-data";

/** The region label of the whole run. */
export const ALL_REGIONS = "all";

/**
 * A baseline name: 1–64 of a-z 0-9 . _ -, starting with a letter or digit, and never
 * `r-…`, so a name can stand where a run id can without ambiguity.
 */
export const BASELINE_NAME = /^(?!r-)[a-z0-9][a-z0-9._-]{0,63}$/;

export interface CompareOptions {
  /**
   * Smallest latency change that matters, as a fraction of the baseline value (0.05 = 5%).
   * Percentiles move by whole histogram buckets (at most 0.78% wide), so below about 1%
   * this is finer than a percentile can show; the mean is not bucketed.
   */
  readonly minRelative: number;
  /** Smallest latency change that matters, in ms; the larger of the two minimums applies. */
  readonly minLatencyMs: number;
  /** Smallest change of error rate or dropped share that matters (0.001 = 0.1 percentage point). */
  readonly minRate: number;
  /** Confidence level of every interval. */
  readonly confidence: number;
  /** Bootstrap resamples per region. */
  readonly resamples: number;
  /** Seed of the resampling. */
  readonly seed: number;
}

export const DEFAULT_COMPARE_OPTIONS: CompareOptions = Object.freeze({
  minRelative: 0.05,
  minLatencyMs: 1,
  minRate: 0.001,
  confidence: 0.95,
  resamples: 1000,
  seed: 1,
});

export interface MetricComparison {
  /** A region, or "all" for the whole run. */
  readonly region: string;
  readonly metric: CompareMetric;
  /** "ms" for latency, "ratio" (0..1) for the rates. */
  readonly unit: "ms" | "ratio";
  readonly baseline: number | null;
  readonly candidate: number | null;
  /** candidate − baseline, in the unit. */
  readonly change: number | null;
  /** change ÷ baseline; null when the baseline is 0 or missing. */
  readonly relativeChange: number | null;
  /** Confidence interval of `change`. */
  readonly interval: readonly [number, number] | null;
  /** The practical minimum the interval was held against, in the unit. */
  readonly minEffect: number;
  readonly method: "bootstrap" | "z-test" | "fisher-exact" | "none";
  /** Two-sided p-value of "no difference" (rates only). */
  readonly pValue: number | null;
  readonly verdict: Verdict;
}

export interface RegionSamples {
  readonly region: string;
  readonly baselineRequests: number;
  readonly candidateRequests: number;
}

export interface Comparison {
  /**
   * "regressed" if any metric of any region regressed, else "no-data" if something could
   * not be compared, else "improved" if any improved, else "unchanged".
   */
  readonly verdict: Verdict;
  /**
   * The verdict a pipeline gates on (core/run/verdict.ts): failed when something regressed,
   * inconclusive when a region or metric could not be compared (or nothing could), else
   * passed. Its exit code is the command's.
   */
  readonly outcome: GateVerdict;
  readonly options: CompareOptions;
  readonly regions: readonly RegionSamples[];
  /** One entry per region × metric, "all" first. */
  readonly metrics: readonly MetricComparison[];
  readonly notes: readonly string[];
  /** The coarser of the two runs' clock steps (ms), to which latencies are shown; null: unknown. */
  readonly clockResolutionMs: number | null;
}

/** Compares two runs' stored rows (core/results/query.ts input) on one latency trend. */
export function compareRuns(baseline: QueryInput, candidate: QueryInput, options: Partial<CompareOptions> = {}, trend: QueryTrend = "duration"): Comparison {
  const asked: CompareOptions = { ...DEFAULT_COMPARE_OPTIONS, ...options };
  // A latency change smaller than a step of the coarser run's clock cannot be measured.
  const clockMs = Math.max(baseline.clockResolutionMs ?? 0, candidate.clockResolutionMs ?? 0);
  const o: CompareOptions = { ...asked, minLatencyMs: Math.max(asked.minLatencyMs, clockMs) };
  const a = groupsByRegion(baseline, trend);
  const b = groupsByRegion(candidate, trend);
  const notes: string[] = [];
  if (clockMs > asked.minLatencyMs)
    notes.push(`the runs were timed with a ${clockMs} ms clock: latency changes under ${clockMs} ms are not counted (asked: ${asked.minLatencyMs} ms)`);
  else if (clockMs > 0)
    notes.push(`the runs were timed with a ${clockMs} ms clock: the latency minimum of ${asked.minLatencyMs} ms is at least one step of it`);
  const regions: RegionSamples[] = [];
  const metrics: MetricComparison[] = [];
  const oneSided: string[] = [];
  for (const region of new Set([...a.keys(), ...b.keys()])) {
    const ga = a.get(region);
    const gb = b.get(region);
    if (!ga || !gb) {
      oneSided.push(`region ${region} is only in the ${ga ? "baseline" : "candidate"}: not compared`);
      continue;
    }
    regions.push({ region, baselineRequests: ga.requests, candidateRequests: gb.requests });
    metrics.push(...compareLatency(region, ga.h, gb.h, o), ...compareRates(region, ga, gb, o));
  }
  notes.push(...oneSided);
  const any = (v: Verdict) => metrics.some((m) => m.verdict === v);
  const outcome = comparisonOutcome(metrics, oneSided);
  const verdict: Verdict = any("regressed") ? "regressed" : outcome.kind === "inconclusive" ? "no-data" : any("improved") ? "improved" : "unchanged";
  return { verdict, outcome, options: o, regions, metrics, notes, clockResolutionMs: clockMs || null };
}

/**
 * Failed if any metric regressed; otherwise inconclusive if any could not be compared, a
 * region is in one run only, or there was nothing to compare at all; otherwise passed.
 */
function comparisonOutcome(metrics: readonly MetricComparison[], oneSided: readonly string[]): GateVerdict {
  const regressed = metrics.filter((m) => m.verdict === "regressed").map((m) => `${m.region} ${m.metric} regressed by ${m.change} ${m.unit}`);
  if (regressed.length) return failed(...regressed);
  const gaps = [
    ...oneSided,
    ...metrics
      .filter((m) => m.verdict === "no-data")
      .map((m) => `${m.region} ${m.metric}: ${m.baseline === null ? "the baseline" : "the candidate"} has no data`),
  ];
  if (metrics.length === 0) gaps.unshift("no region has data in both runs: nothing was compared");
  return gaps.length ? inconclusive(...gaps) : PASSED;
}

/** Whole-run groups by region, "all" first. */
function groupsByRegion(input: QueryInput, trend: QueryTrend): Map<string, QueryGroup> {
  const out = new Map<string, QueryGroup>();
  const [all] = aggregateGroups(input, { by: [], everyS: null, trend });
  if (all) out.set(ALL_REGIONS, all);
  for (const g of aggregateGroups(input, { by: ["region"], everyS: null, trend })) out.set(String(g.key.region), g);
  return out;
}

function compareLatency(region: string, a: Histogram, b: Histogram, o: CompareOptions): MetricComparison[] {
  const empty = a.count === 0 || b.count === 0;
  const deltas = empty ? null : bootstrapDeltas(a, b, o.resamples, seededRandom(o.seed ^ fnv1a32(region)));
  return LATENCY_METRICS.map((metric, i) => {
    const point = (h: Histogram) => (h.count === 0 ? null : (i < QUANTILES.length ? h.quantile(QUANTILES[i]!) : h.mean) / 1000);
    const base = point(a);
    const cand = point(b);
    const minEffect = Math.max(o.minRelative * (base ?? 0), o.minLatencyMs);
    if (!deltas || base === null || cand === null) return noComparison(region, metric, "ms", base, cand, minEffect);
    const [lo, hi] = percentileInterval(deltas[i]!, o.confidence);
    const interval = [lo / 1000, hi / 1000] as const;
    const verdict: Verdict = interval[0] > minEffect ? "regressed" : interval[1] < -minEffect ? "improved" : "unchanged";
    return result(region, metric, "ms", base, cand, interval, minEffect, "bootstrap", null, verdict);
  });
}

function compareRates(region: string, a: QueryGroup, b: QueryGroup, o: CompareOptions): MetricComparison[] {
  const pairs = {
    error_rate: [a.failed, a.requests, b.failed, b.requests],
    dropped_share: [a.dropped, a.iterations + a.dropped, b.dropped, b.iterations + b.dropped],
  } as const;
  return RATE_METRICS.map((metric) => {
    const [x1, n1, x2, n2] = pairs[metric];
    const base = n1 > 0 ? x1 / n1 : null;
    const cand = n2 > 0 ? x2 / n2 : null;
    if (base === null || cand === null) return noComparison(region, metric, "ratio", base, cand, o.minRate);
    const d = proportionDifference(x1, n1, x2, n2, o.confidence);
    const significant = d.pValue < 1 - o.confidence;
    const [lo, hi] = d.interval;
    const verdict: Verdict = significant && lo > o.minRate ? "regressed" : significant && hi < -o.minRate ? "improved" : "unchanged";
    return result(region, metric, "ratio", base, cand, d.interval, o.minRate, d.method, d.pValue, verdict);
  });
}

function result(
  region: string,
  metric: CompareMetric,
  unit: "ms" | "ratio",
  base: number,
  cand: number,
  interval: readonly [number, number],
  minEffect: number,
  method: MetricComparison["method"],
  pValue: number | null,
  verdict: Verdict,
): MetricComparison {
  // Output precision: 1 µs for latency, 1e-6 for rates — well inside either estimate's error.
  const r = (n: number) => Math.round(n * 1e6) / 1e6;
  const ms = (n: number) => (unit === "ms" ? Math.round(n * 1000) / 1000 : r(n));
  const change = cand - base;
  return {
    region,
    metric,
    unit,
    baseline: ms(base),
    candidate: ms(cand),
    change: ms(change),
    relativeChange: base === 0 ? null : r(change / base),
    interval: [ms(interval[0]), ms(interval[1])],
    minEffect: ms(minEffect),
    method,
    pValue: pValue === null ? null : r(pValue),
    verdict,
  };
}

function noComparison(
  region: string,
  metric: CompareMetric,
  unit: "ms" | "ratio",
  base: number | null,
  cand: number | null,
  minEffect: number,
): MetricComparison {
  return {
    region,
    metric,
    unit,
    baseline: base,
    candidate: cand,
    change: null,
    relativeChange: null,
    interval: null,
    minEffect,
    method: "none",
    pValue: null,
    verdict: "no-data",
  };
}

// ── Options from the API's query string or the CLI's flags ──────────────────────────────

export type CompareOptionsParse = { ok: true; options: Partial<CompareOptions> } | { ok: false; problems: Problem[] };

/**
 * Reads the practical minimums and the confidence level: `minEffect` (latency, relative:
 * "5%" or 0.05), `minLatency` ("1ms", "0.5ms" or a number of ms), `minRate` ("0.1%" or
 * 0.001) and `confidence` ("95%" or 0.95, from 80% to 99%). Absent means the default.
 */
export function parseCompareOptions(params: {
  minEffect?: string | null;
  minLatency?: string | null;
  minRate?: string | null;
  confidence?: string | null;
}): CompareOptionsParse {
  const problems: Problem[] = [];
  const options: { -readonly [K in keyof CompareOptions]?: CompareOptions[K] } = {};
  const fraction = (field: string, raw: string, max: number): number | undefined => {
    const percent = raw.trim().endsWith("%");
    const n = Number(percent ? raw.trim().slice(0, -1) : raw);
    const value = percent ? n / 100 : n;
    if (raw.trim() === "" || !Number.isFinite(value) || value < 0 || value > max) {
      problems.push({
        field,
        detail: `"${raw}" must be a percentage like 5% or a fraction like 0.05${percent ? "" : " (a bare number is a fraction)"}, at most ${max * 100}%`,
      });
      return undefined;
    }
    return value;
  };
  if (params.minEffect != null) options.minRelative = fraction("minEffect", params.minEffect, 1);
  if (params.minRate != null) options.minRate = fraction("minRate", params.minRate, 1);
  if (params.minLatency != null) {
    const raw = params.minLatency.trim();
    const ms = raw !== "" && Number.isFinite(Number(raw)) ? Number(raw) : parseDurationMs(raw);
    if (ms === undefined || ms < 0) problems.push({ field: "minLatency", detail: `"${params.minLatency}" must be a duration like 1ms or 0.5ms` });
    else options.minLatencyMs = ms;
  }
  if (params.confidence != null) {
    const c = fraction("confidence", params.confidence, 1);
    if (c !== undefined && (c < 0.8 || c > 0.99)) problems.push({ field: "confidence", detail: `"${params.confidence}" must be from 80% to 99%` });
    else if (c !== undefined) options.confidence = c;
  }
  return problems.length ? { ok: false, problems } : { ok: true, options };
}
