/**
 * The end-of-test summary's metric lines, in k6's dotted style: TOTAL RESULTS (the built-in
 * metrics with their sub-metrics under them, then edgeload's own trends and the load it
 * achieved), and a scenario's or a script's custom metrics. Apart from summary-text.ts,
 * which orders the summary's sections, because these lines follow k6's layout metric by
 * metric; both read the figures with the same FigureStyle.
 */
import { formatMs } from "../metrics/clock-resolution.ts";
import type { Summary } from "./summary.ts";
import { customValue, dotted, formatBytes, pct, TREND_ORDER, trendLine } from "./text-format.ts";
import { notSentText } from "./not-sent.ts";

type Edgeload = Summary["edgeload"];

/** How a summary's figures read: to the clock's step, with or without a unit, with the trend figures the run asked for. */
export interface FigureStyle {
  /** The clock step latencies are shown to; null (full digits) for runs stored before the clock was detected. */
  readonly resolutionMs: number | null;
  /** A latency in ms, to that step. */
  readonly fmt: (ms: number) => string;
  /** Trends of plain numbers (a k6 Trend without isTime), by metric name. */
  readonly unitless: ReadonlySet<string>;
  /** k6's summaryTrendStats: which trend figures each line shows. */
  readonly stats: readonly string[];
}

export function figureStyle(summary: Summary): FigureStyle {
  const e = summary.edgeload;
  // Runs stored before the clock was detected have no `clock`: full digits, as before.
  const resolutionMs = e.clock?.resolutionMs ?? null;
  return {
    resolutionMs,
    fmt: (ms: number) => formatMs(ms, resolutionMs),
    // A k6 Trend without isTime holds plain numbers (summaries stored before this have none).
    unitless: new Set<string>(e.unitlessTrends ?? []),
    // k6's summaryTrendStats, when the run set them.
    stats: (summary.options as { summaryTrendStats?: readonly string[] } | undefined)?.summaryTrendStats ?? TREND_ORDER,
  };
}

/** A metric key's metric: `asset_size` of `asset_size{staticAsset:yes}`. */
export const baseName = (key: string) => key.replace(/\{.*$/, "");

/** A series' label as k6 prints it: the metric's name, or `  { tag:value }` for its sub-metric under it. */
function seriesLabel(key: string): string {
  const open = key.indexOf("{");
  return open === -1 ? key : `  { ${key.slice(open + 1, -1)} }`;
}

/** The lines of `parent`'s sub-metrics in the summary's metrics, by the shape of their figures. */
function subMetricLines(metrics: Record<string, any>, parent: string, resolutionMs: number | null, stats: readonly string[]): string[] {
  return Object.keys(metrics)
    .filter((key) => key.startsWith(`${parent}{`) && metrics[key] !== undefined)
    .sort()
    .flatMap((key) => {
      const v = metrics[key];
      const type = "avg" in v ? "trend" : "passes" in v ? "rate" : "count" in v ? "counter" : null;
      // A threshold's key whose metric has no samples yet: its verdict says so, there is no figure.
      return type ? [dotted(seriesLabel(key), customValue({ type, ...v }, resolutionMs, stats))] : [];
    });
}

/** TOTAL RESULTS: k6's built-in metrics, each with its sub-metrics, then edgeload's own trends and load. */
export function totalResultsSection(summary: Summary, style: FigureStyle): string[] {
  const m = summary.metrics as Record<string, any>;
  const { resolutionMs: resolution, stats } = style;
  // k6's sub-metrics (`http_req_duration{name:home}`) each on a line under their metric.
  const subs = (parent: string) => subMetricLines(m, parent, resolution, stats);
  const out = ["  TOTAL RESULTS"];
  if (m.checks) out.push(dotted("checks", `${pct(m.checks.value)} ✓ ${m.checks.passes} ✗ ${m.checks.fails}`));
  out.push(...subs("checks"));
  out.push(dotted("data_received", `${formatBytes(m.data_received.count)} ${formatBytes(m.data_received.rate)}/s`));
  out.push(dotted("dropped_iterations", `${m.dropped_iterations.count} ${m.dropped_iterations.rate.toFixed(2)}/s`));
  if (m.http_req_duration) out.push(dotted("http_req_duration", trendLine(m.http_req_duration, resolution, stats)));
  out.push(...subs("http_req_duration"));
  out.push(dotted("http_req_failed", `${pct(m.http_req_failed.value)} ✓ ${m.http_req_failed.passes} ✗ ${m.http_req_failed.fails}`));
  out.push(...subs("http_req_failed"));
  if (m.http_req_waiting) out.push(dotted("http_req_waiting", trendLine(m.http_req_waiting, resolution, stats)));
  out.push(...subs("http_req_waiting"));
  out.push(dotted("http_reqs", `${m.http_reqs.count} ${m.http_reqs.rate.toFixed(2)}/s`));
  out.push(...subs("http_reqs"));
  if (m.iteration_duration) out.push(dotted("iteration_duration", trendLine(m.iteration_duration, resolution, stats)));
  out.push(dotted("iterations", `${m.iterations.count} ${m.iterations.rate.toFixed(2)}/s`));
  out.push(...subs("iterations"));
  out.push(...edgeloadTrendLines(summary.edgeload, resolution), ...loadLines(summary.edgeload), ...notSentLines(summary.edgeload), "");
  return out;
}

/**
 * What edgeload itself did not send of the schedule (core/run/not-sent.ts), when anything:
 * never the target's doing, so it stands apart from dropped_iterations. Summaries stored
 * before it was counted have none.
 */
function notSentLines(e: Edgeload): string[] {
  const notSent = (e.totals as Partial<Edgeload["totals"]>).notSent;
  return notSent && notSent.count > 0 ? [dotted("not sent by edgeload", notSentText(notSent))] : [];
}

/**
 * edgeload's own trends: latency from the intended send time (coordinated omission
 * corrected), how late requests left compared with the schedule, and how long the
 * generator's own event loop kept responses waiting (its share of every latency above).
 */
function edgeloadTrendLines(e: Edgeload, resolution: number | null): string[] {
  const out: string[] = [];
  if (e.totals.corrected) out.push(dotted("http_req_corrected", trendLine(e.totals.corrected, resolution)));
  if (e.totals.schedule_lag) out.push(dotted("schedule_lag", trendLine(e.totals.schedule_lag, resolution)));
  if (e.totals.client_delay) out.push(dotted("client_delay", trendLine(e.totals.client_delay, resolution)));
  return out;
}

/** The load: a closed-model run's VUs and the rate they achieved, or the target rate against the achieved one. */
function loadLines(e: Edgeload): string[] {
  if (e.vus) {
    // Closed model: the load is the VUs, the rate is whatever the target's latency allows.
    const stages = e.vus.stages.map((s) => `${s.target} for ${s.durationS}s`).join(", ");
    const it = e.vus.iterations;
    const external = e.vus.externallyControlled;
    return [
      dotted(
        "vus",
        it
          ? `${e.vus.peak} · ${it.kind === "per-vu" ? `${it.count} iteration${it.count === 1 ? "" : "s"} each` : `${it.count} iteration${it.count === 1 ? "" : "s"} shared`} · maxDuration ${e.vus.stages[0]?.durationS ?? 0}s`
          : external
            ? `externally controlled · from ${external.startVUs}, at most ${external.maxVUs} · ${e.vus.stages[0]?.durationS ?? 0}s`
            : `peak ${e.vus.peak} · from ${e.vus.startVUs}: ${stages}`,
      ),
      dotted("achieved iteration rate", `${e.achievedRatePerS.toFixed(2)}/s`),
    ];
  }
  if (e.targetRatePerS !== null) return [dotted("target vs achieved rate", `${e.targetRatePerS.toFixed(2)}/s → ${e.achievedRatePerS.toFixed(2)}/s`)];
  return [];
}

/** SCENARIO: a built-in scenario's name, seed and preset, and the metrics it declares. */
export function scenarioMetricsSection(scenario: NonNullable<Edgeload["scenario"]>, style: FigureStyle): string[] {
  return [
    `  SCENARIO ${scenario.name}${scenario.seed ? ` · seed ${scenario.seed}` : ""}${scenario.preset ? ` · preset ${scenario.preset}` : ""}`,
    ...Object.entries(scenario.metrics).map(([name, metric]) => dotted(name, customValue(metric, style.resolutionMs, style.stats), 40)),
    "",
  ];
}

/** CUSTOM METRICS: the metrics the run declares, sub-metrics under their metric; none, no section. */
export function customMetricsSection(customMetrics: Edgeload["customMetrics"], style: FigureStyle): string[] {
  if (!Object.keys(customMetrics).length) return [];
  return [
    "  CUSTOM METRICS",
    ...Object.entries(customMetrics).map(([name, metric]) =>
      dotted(seriesLabel(name), customValue(metric, style.resolutionMs, style.stats, style.unitless.has(baseName(name))), 40),
    ),
    "",
  ];
}
