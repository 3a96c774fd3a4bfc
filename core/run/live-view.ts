/**
 * What the live dashboard draws, computed by the coordinator where the merged data is, so
 * the browser only plots numbers.
 *
 * - A LivePoint is one closed window (one second of schedule) of the whole run: achieved
 *   iterations against the schedule's target, requests, errors, dropped iterations, schedule
 *   lag, mean requests in flight and p50/p95/p99, overall and per region. Percentiles come
 *   from the window's merged histograms, like every other percentile in edgeload.
 * - A ShardHealth is how one shard is doing by its last flushed window: how far behind the
 *   run clock it reports, its schedule lag, what it dropped, whether it is saturated.
 *
 * Latencies are in milliseconds rounded to the microsecond, as in the summary.
 */
import { targetLoadAt, type TargetLoad } from "../schedule/load-profile.ts";
import { WINDOW_MS } from "./protocol.ts";
import type { RunTotals } from "./run-totals.ts";
import { customMetricKinds } from "../spec/metrics-schema.ts";
import type { RunSpec } from "../spec/types.ts";
import { Histogram } from "../metrics/histogram.ts";
import { MetricStats, type CounterName, type MetricStatsWire } from "../metrics/metric-stats.ts";
import { customMetricsSummary, type CustomMetricSummary } from "./summary-figures.ts";
import { thresholdOutcomes, thresholdView, type ThresholdView } from "./run-thresholds.ts";
import { saturation } from "./saturation.ts";
import type { ThresholdSet } from "../metrics/thresholds.ts";
import { scriptWindow, withLateScript, type ScriptWindow } from "./script-report.ts";
import { round3 } from "../metrics/rounding.ts";
import { hideIn, secretHider, type ValueHider } from "../spec/redact.ts";

export interface LiveLatency {
  readonly p50: number | null;
  readonly p95: number | null;
  readonly p99: number | null;
}

export interface LiveRegionPoint extends LiveLatency {
  readonly requests: number;
  readonly failed: number;
}

export interface LivePoint extends LiveLatency {
  /** The window: seconds since T0. */
  readonly t: number;
  /** Iterations per second the schedule asked for in this window (null: closed model). */
  readonly targetRate: number | null;
  /** VUs the schedule asked for (closed model), else null. */
  readonly targetVUs: number | null;
  /** Finished iterations: the achieved rate, comparable with targetRate. */
  readonly iterations: number;
  readonly requests: number;
  readonly failed: number;
  readonly dropped: number;
  /** Schedule lag p95 (intended → actual send). */
  readonly lagP95: number | null;
  /**
   * Mean requests in flight over the window, by Little's law: the time the window's
   * completed requests spent in flight, divided by the window's length.
   */
  readonly inFlight: number;
  readonly regions: Readonly<Record<string, LiveRegionPoint>>;
  /** A k6 script's uncaught errors and console lines in this window; absent when it said nothing. */
  readonly script?: ScriptWindow;
}

export interface LiveCell {
  readonly region: string;
  readonly stats: MetricStats;
}

const WINDOW_US = 1_000_000;

/**
 * One window's point from its merged cells (one per region and step). Only the counters and
 * the two histograms it reads are merged, and a group of one cell is read as it is: this
 * runs in the coordinator for every window, in the isolate the shards share locally.
 */
export function livePoint(windowS: number, cells: Iterable<LiveCell>, target: TargetLoad): LivePoint {
  const all: MetricStats[] = [];
  const byRegion = new Map<string, MetricStats[]>();
  for (const { region, stats } of cells) {
    all.push(stats);
    let group = byRegion.get(region);
    if (!group) byRegion.set(region, (group = []));
    group.push(stats);
  }
  const total = (group: readonly MetricStats[], counter: CounterName) => group.reduce((n, s) => n + s.counters[counter], 0);
  const duration = mergedTrend(all, "duration");
  const script = scriptWindow(all);
  return {
    t: windowS,
    targetRate: target.ratePerS,
    targetVUs: target.vus,
    iterations: total(all, "iterations"),
    requests: total(all, "completed"),
    failed: total(all, "failed"),
    dropped: total(all, "dropped"),
    lagP95: quantileMs(mergedTrend(all, "lag"), 0.95),
    inFlight: duration.count ? round3((duration.mean * duration.count) / WINDOW_US) : 0,
    ...latency(duration),
    regions: Object.fromEntries(
      [...byRegion.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([region, group]) => [
          region,
          { requests: total(group, "completed"), failed: total(group, "failed"), ...latency(mergedTrend(group, "duration")) },
        ]),
    ),
    ...(script ? { script } : {}),
  };
}

function mergedTrend(group: readonly MetricStats[], trend: "duration" | "lag"): Histogram {
  return group.length === 1 ? group[0]!.trends[trend] : group.reduce((h, s) => h.merge(s.trends[trend]), new Histogram());
}

/**
 * The points of written windows, from their merged cells (any windows, any order), with
 * the load the spec's schedule asked for in each window (its middle, capped at the end).
 * A k6 script's console lines and errors are shown with the run's secrets hidden: a script
 * that logs the token it was given with `-e` must not put it on the dashboards.
 */
export function windowPoints(spec: RunSpec, cells: Iterable<LiveCell & { readonly windowS: number }>): LivePoint[] {
  const byWindow = new Map<number, LiveCell[]>();
  for (const c of cells) {
    let list = byWindow.get(c.windowS);
    if (!list) byWindow.set(c.windowS, (list = []));
    list.push(c);
  }
  let hider: ValueHider | null = null;
  return [...byWindow].map(([windowS, windowCells]) => {
    const point = livePoint(windowS, windowCells, targetLoadAt(spec, Math.min(windowS * WINDOW_MS + WINDOW_MS / 2, spec.durationMs - 1)));
    return point.script ? { ...point, script: hideIn(point.script, (hider ??= secretHider(spec))) } : point;
  });
}

/**
 * A window that gets a late portion after its point was drawn (a flush more than
 * MAX_LATENESS_MS late): counts add up exactly; the percentiles of the larger portion are
 * kept, since the earlier histograms are no longer at hand. Late portions are rare and
 * small, and the stored windows in D1 stay exact.
 */
export function withLatePortion(earlier: LivePoint, late: LivePoint): LivePoint {
  const pick = <T extends LiveLatency>(a: T & { requests: number }, b: T & { requests: number }): LiveLatency =>
    b.requests > a.requests ? { p50: b.p50, p95: b.p95, p99: b.p99 } : { p50: a.p50, p95: a.p95, p99: a.p99 };
  const regions: Record<string, LiveRegionPoint> = { ...earlier.regions };
  const script = withLateScript(earlier.script, late.script);
  for (const [region, point] of Object.entries(late.regions)) {
    const before = regions[region];
    regions[region] = before ? { requests: before.requests + point.requests, failed: before.failed + point.failed, ...pick(before, point) } : point;
  }
  return {
    ...earlier,
    iterations: earlier.iterations + late.iterations,
    requests: earlier.requests + late.requests,
    failed: earlier.failed + late.failed,
    dropped: earlier.dropped + late.dropped,
    inFlight: round3(earlier.inFlight + late.inFlight),
    lagP95: late.requests > earlier.requests ? late.lagP95 : earlier.lagP95,
    ...pick(earlier, late),
    regions,
    ...(script ? { script } : {}),
  };
}

export interface ShardHealth {
  readonly index: number;
  readonly region: string;
  /** The last window this shard has flushed (seconds since T0), or null before its first. */
  readonly lastWindowS: number | null;
  readonly done: boolean;
  /** Its last window's schedule lag p95 and dropped iterations. */
  readonly lagP95: number | null;
  readonly dropped: number;
  readonly saturated: boolean;
  /** Why it is saturated (empty when it is not). */
  readonly reasons: readonly string[];
}

/** What the coordinator keeps of a shard between flushes: its latest window, and its health while dashboards watch. */
export type ShardLatest = { readonly lastWindowS: number } & Partial<Pick<ShardHealth, "lagP95" | "dropped" | "saturated" | "reasons">>;

/** Every planned shard's health row, from what is known of it (nothing before its first flush). */
export function shardHealthRows(
  shards: ReadonlyArray<{ readonly index: number; readonly region: string }>,
  latest: ReadonlyMap<number, ShardLatest>,
  done: readonly number[],
): ShardHealth[] {
  return shards.map((s) => {
    const h = latest.get(s.index);
    return {
      index: s.index,
      region: s.region,
      lastWindowS: h?.lastWindowS ?? null,
      done: done.includes(s.index),
      lagP95: h?.lagP95 ?? null,
      dropped: h?.dropped ?? 0,
      saturated: h?.saturated ?? false,
      reasons: h?.reasons ?? [],
    };
  });
}

/** A shard's health by the steps of its latest window. */
export function shardWindowHealth(steps: ReadonlyArray<readonly [number, MetricStatsWire]>): Pick<ShardHealth, "lagP95" | "dropped" | "saturated" | "reasons"> {
  const stats = new MetricStats();
  for (const [, wire] of steps) stats.mergeWire(wire);
  const sat = saturation(stats);
  return { lagP95: quantileMs(stats.trends.lag, 0.95), dropped: stats.counters.dropped, saturated: sat.saturated, reasons: sat.reasons };
}

export interface LiveVerdicts {
  /** Every threshold, evaluated on the totals so far (rates over the time elapsed). */
  readonly thresholds: readonly ThresholdView[];
  /** The scenario's and the spec's custom metrics so far, in the summary's shapes. */
  readonly customMetrics: Readonly<Record<string, CustomMetricSummary>>;
}

/** Thresholds and custom metrics as they stand `elapsedS` into the run. */
export function liveVerdicts(spec: RunSpec, totals: RunTotals, elapsedS: number, thresholds?: ThresholdSet): LiveVerdicts {
  const elapsed = Math.max(0.001, elapsedS);
  const kinds = customMetricKinds(spec);
  return {
    thresholds: thresholdOutcomes(spec, totals, elapsed, thresholds).outcomes.map(thresholdView),
    customMetrics: Object.keys(kinds).length ? customMetricsSummary(totals.select(), kinds, elapsed) : {},
  };
}

function latency(duration: Histogram): LiveLatency {
  return { p50: quantileMs(duration, 0.5), p95: quantileMs(duration, 0.95), p99: quantileMs(duration, 0.99) };
}

function quantileMs(h: Histogram, q: number): number | null {
  return h.count ? round3(h.quantile(q) / 1000) : null;
}
