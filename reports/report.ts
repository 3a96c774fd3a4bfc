/**
 * A run's report: test matrix and plan, summary, latency tables, thresholds, scenario
 * metrics, saturation notes and charts — as markdown with SVG files beside it, and as one
 * HTML page with the same SVGs inline.
 *
 * Latency figures come from the report's query rows (report-input.ts), printed as the
 * query returns them; totals, rates and thresholds come from the run's summary. Pure, so
 * the CLI (`edgeload report`) and the coordinator (GET /v1/runs/:id/report) share it.
 *
 * @example
 * const { markdown, charts, html } = await renderReport(reportInput(summary, rows));
 */
import { ACTIVE_STATUSES } from "../core/run/protocol.ts";
import { cloudflareBlocks } from "./cloudflare-section.ts";
import { deliveryBlocks } from "./delivery-section.ts";
import type { QueryRow } from "../core/results/query.ts";
import type { CustomMetricSummary, TrendSummary } from "../core/run/summary-figures.ts";
import { notSentText } from "../core/run/not-sent.ts";
import { costLine } from "../core/plan/actual-cost.ts";
import { distributionShape } from "../core/metrics/distribution-shape.ts";
import { roundToResolution } from "../core/metrics/clock-resolution.ts";
import { errorRateChart, histogramChart, latencyChart, rateChart, renderSvg, type LatencyBin, type SeriesPoint } from "./charts.ts";
import { toHtml, toMarkdown, type Block, type Cell, type Inline } from "./document.ts";
import { targetProfile, type ReportInput } from "./report-input.ts";

export interface RenderedReport {
  readonly markdown: string;
  /** SVG documents by file name, as the markdown links them. */
  readonly charts: Readonly<Record<string, string>>;
  readonly html: string;
}

/** The chart files of a report, in the order they appear. */
export const CHART_FILES = { rate: "rate.svg", latency: "latency.svg", errors: "error-rate.svg", histogram: "latency-histogram.svg" } as const;

/** Latency columns of the report's tables, as query metrics. */
export const LATENCY_COLUMNS = ["p50", "mean", "p95", "p99", "max"] as const;

export async function renderReport(input: ReportInput): Promise<RenderedReport> {
  const e = input.summary.edgeload;
  const [rate, latency, errors, histogram] = await Promise.all([
    renderSvg(rateChart(ratePoints(input))),
    renderSvg(latencyChart(latencyPoints(input.perSecond))),
    renderSvg(
      errorRateChart(
        input.perSecond.map((r) => ({
          t: r.t as number,
          series: String(r.region),
          value: r.error_rate === null ? null : round(Number(r.error_rate) * 100, 4),
        })),
      ),
    ),
    renderSvg(histogramChart(latencyBins(input.latencyBuckets), overallPercentiles(input.overall), e.clock?.resolutionMs ?? null)),
  ]);
  const charts = { [CHART_FILES.rate]: rate, [CHART_FILES.latency]: latency, [CHART_FILES.errors]: errors, [CHART_FILES.histogram]: histogram };
  const blocks = reportBlocks(input);
  const title = `${e.name} — run ${e.runId}`;
  return { markdown: toMarkdown(blocks), charts, html: toHtml(blocks, title, charts) };
}

function reportBlocks(input: ReportInput): Block[] {
  const e = input.summary.edgeload;
  return [
    { kind: "heading", level: 1, text: `Load test report: ${e.name}` },
    {
      kind: "paragraph",
      text: [
        "Run ",
        { code: e.runId },
        ` · ${e.status} · started ${e.startedAt} · ended ${e.endedAt} · ${e.durationS} s`,
        // The reason a run ended as it did: an abort's, or a failure's (exec.test.fail(), abortOnFail, an error).
        ...(e.abortReason ? [` · ${e.status === "aborted" ? "aborted" : "why"}: ${e.abortReason}`] : []),
      ],
    },
    ...(ACTIVE_STATUSES.includes(e.status)
      ? [{ kind: "paragraph", text: ["The run has not finished: figures cover what was measured so far."] } as const]
      : []),
    ...verdictBlocks(e),
    ...matrixBlocks(input),
    ...summaryBlocks(input),
    ...latencyBlocks(input),
    ...thresholdBlocks(input),
    ...scenarioBlocks(input),
    ...saturationBlocks(input),
    ...deliveryBlocks(input.delivery),
    ...(input.cloudflare ? cloudflareBlocks(input.cloudflare) : []),
    { kind: "heading", level: 2, text: "Charts" },
    { kind: "chart", file: CHART_FILES.rate, title: "Achieved vs target rate (iterations per second)" },
    { kind: "chart", file: CHART_FILES.latency, title: "p50, p95 and p99 per second by region (ms)" },
    { kind: "chart", file: CHART_FILES.errors, title: "Error rate per second by region (%)" },
    { kind: "chart", file: CHART_FILES.histogram, title: "Latency distribution over the whole run" },
  ];
}

function matrixBlocks({ summary }: ReportInput): Block[] {
  const e = summary.edgeload;
  const profile = targetProfile(summary);
  const peak = Math.max(0, ...profile.perSecond);
  const load: Inline[] = [{ code: e.executor }, ...(e.scenario?.preset ? [" preset ", { code: e.scenario.preset }] : [])];
  const workload: Inline[] = e.scenario
    ? ["scenario ", { code: e.scenario.name }, ...(e.scenario.seed ? [" with seed set ", { code: e.scenario.seed }] : [])]
    : ["steps ", ...Object.keys(e.steps).flatMap((s, i): Inline[] => [...(i ? [", "] : []), { code: s }])];
  const rows: Cell[][] = [
    ["target", { code: e.target }],
    ["load profile", load],
    ["workload", workload],
    ["regions", e.plan.regions.join(", ")],
    ["shards", `${e.plan.shards} (${e.plan.connectionSlots} connection slots each, up to ${e.plan.capacityPerShardPerS}/s per shard)`],
    ["duration", `${profile.durationS} s planned, ${e.durationS} s measured`],
    ...((e as Partial<typeof e>).cost ? [["cost", costLine(e.cost)] satisfies Cell[]] : []),
    e.vus
      ? [
          "virtual users",
          `peak ${e.vus.peak} (${e.vus.stages.map((st) => `${st.target} for ${st.durationS} s`).join(", ")}), ~${e.plan.totalIterations} iterations estimated`,
        ]
      : ["target rate", `${e.targetRatePerS}/s mean, ${peak}/s peak, ${e.plan.totalIterations} iterations`],
  ];
  return [
    { kind: "heading", level: 2, text: "Test matrix" },
    { kind: "table", columns: ["setting", "value"], rows },
    ...(e.plan.notes.length ? [{ kind: "list", items: e.plan.notes.map((n) => [n]) } as const] : []),
  ];
}

/** Why a run failed or was inconclusive, and its exit code; nothing for a pass or a run still going. */
function verdictBlocks(e: ReportInput["summary"]["edgeload"]): Block[] {
  const verdict = e.verdict;
  if (!verdict || verdict.kind === "passed") return [];
  return [
    { kind: "paragraph", text: [`Verdict: ${verdict.kind.toUpperCase()} (exit ${e.exitCode}).`] },
    { kind: "list", items: verdict.reasons.map((r) => [r]) },
  ];
}

function summaryBlocks({ summary }: ReportInput): Block[] {
  const e = summary.edgeload;
  const t = e.totals;
  const duration = (summary.metrics as Record<string, TrendSummary | undefined>).http_req_duration;
  // Summaries stored before `state` have only `ok` (and then no threshold was without data).
  const stateOf = (x: (typeof e.thresholds)[number]) => (x as { state?: string }).state ?? (x.ok ? "passed" : "failed");
  const failedThresholds = e.thresholds.filter((x) => stateOf(x) === "failed").length;
  const withoutData = e.thresholds.filter((x) => stateOf(x) === "no-data").length;
  const rows: Cell[][] = [
    ["requests", `${t.requests} (${t.ratePerS}/s)`],
    e.targetRatePerS === null
      ? ["iterations", `${e.achievedRatePerS}/s achieved by up to ${e.vus?.peak ?? 0} VUs`]
      : [
          "iterations",
          `${e.achievedRatePerS}/s achieved of ${e.targetRatePerS}/s target (${e.targetRatePerS > 0 ? round((e.achievedRatePerS / e.targetRatePerS) * 100, 1) : 0}%)`,
        ],
    ["failed requests", `${t.failed} (${pct(t.failedRate)})`],
    ["status 4xx / 5xx", `${t.status4xx} / ${t.status5xx}`],
    ["timeouts / connection errors", `${t.timeouts} / ${t.connectionErrors}`],
    ["dropped iterations", String(t.dropped)],
    notSentRow(t),
    [
      [{ code: "http_req_duration" }, " p95 / p99"],
      duration ? `${latency(duration["p(95)"], e.clock?.resolutionMs)} / ${latency(duration["p(99)"], e.clock?.resolutionMs)}` : "no samples",
    ],
    [
      "thresholds",
      e.thresholds.length === 0
        ? "none set"
        : failedThresholds || withoutData
          ? [failedThresholds ? `${failedThresholds} of ${e.thresholds.length} failed` : "", withoutData ? `${withoutData} without data` : ""]
              .filter(Boolean)
              .join(", ")
          : `all ${e.thresholds.length} passed`,
    ],
  ];
  return [
    { kind: "heading", level: 2, text: "Summary" },
    { kind: "table", columns: ["figure", "value"], rows },
  ];
}

/**
 * What edgeload itself did not send, by cause and against the run's bound
 * (core/run/not-sent.ts); a summary stored before it was counted has only its restarts.
 */
function notSentRow(t: ReportInput["summary"]["edgeload"]["totals"]): Cell[] {
  const notSent = (t as Partial<typeof t>).notSent;
  if (!notSent) return ["iterations lost to shard restarts", String(t.interrupted)];
  return ["iterations not sent by edgeload", notSent.count > 0 ? notSentText(notSent) : "0"];
}

function latencyBlocks(input: ReportInput): Block[] {
  const columns = ["requests", "rps", "error rate", ...LATENCY_COLUMNS.map((c) => `${c} (ms)`)];
  const numeric = [false, ...columns.map(() => true)];
  const step = input.summary.edgeload.clock?.resolutionMs;
  const cells = (label: string, r: QueryRow): string[] => [
    label,
    num(r.requests),
    num(r.rps),
    pct(r.error_rate),
    ...LATENCY_COLUMNS.map((c) => (typeof r[c] === "number" ? String(roundToResolution(r[c] as number, step)) : num(r[c]))),
  ];
  return [
    { kind: "heading", level: 2, text: "Latency" },
    {
      kind: "paragraph",
      text: [
        { code: "http_req_duration" },
        " in milliseconds, from histograms merged bucket by bucket (within 0.39%); no percentile is averaged across groups.",
      ],
    },
    ...measurementBlocks(input),
    { kind: "heading", level: 3, text: "By region" },
    {
      kind: "table",
      columns: ["region", ...columns],
      numeric,
      rows: [...(input.overall ? [cells("all", input.overall)] : []), ...input.byRegion.map((r) => cells(String(r.region), r))],
    },
    { kind: "heading", level: 3, text: "By step" },
    { kind: "table", columns: ["step", ...columns], numeric, rows: input.byStep.map((r) => cells(String(r.step), r)) },
  ];
}

/**
 * How far the latencies can be trusted: the clock that timed them, the shape of their
 * distribution (clock-quantised, bimodal; core/metrics/distribution-shape.ts) and the path the load
 * took to the target.
 */
function measurementBlocks(input: ReportInput): Block[] {
  const e = input.summary.edgeload;
  const stepMs = e.clock?.resolutionMs ?? null;
  const shape = distributionShape(input.latencyBuckets, stepMs);
  const lines = [
    ...(e.clock && stepMs !== null ? [`Clock: ${e.clock.note}.`] : []),
    ...shape.notes.map((n) => `Distribution ${n}.`),
    ...(e.path?.note ? [`Path: ${e.path.note}.`] : []),
  ];
  return lines.map((line) => ({ kind: "paragraph", text: [line] }) as const);
}

function thresholdBlocks({ summary }: ReportInput): Block[] {
  const list = summary.edgeload.thresholds;
  if (list.length === 0) return [];
  return [
    { kind: "heading", level: 2, text: "Thresholds" },
    {
      kind: "table",
      columns: ["metric", "threshold", "observed", "result"],
      rows: list.map((t) => [
        { code: t.metric },
        { code: t.threshold },
        num(t.observed),
        `${{ passed: "✓ pass", failed: "✗ fail", "no-data": "? no data" }[(t as { state?: "passed" | "failed" | "no-data" }).state ?? (t.ok ? "passed" : "failed")]}${t.abortOnFail ? " (abortOnFail)" : ""}`,
      ]),
    },
  ];
}

function scenarioBlocks({ summary }: ReportInput): Block[] {
  const scenario = summary.edgeload.scenario;
  const step = summary.edgeload.clock?.resolutionMs;
  const metrics = Object.entries((scenario?.metrics ?? {}) as Record<string, CustomMetricSummary>);
  if (!scenario || metrics.length === 0) return [];
  const value = (m: CustomMetricSummary) =>
    m.type === "counter"
      ? `${m.count} (${m.rate}/s)`
      : m.type === "rate"
        ? `${pct(m.value)} (${m.passes} of ${m.passes + m.fails})`
        : `p50 ${latency(m.med, step)}, p95 ${latency(m["p(95)"], step)}, p99 ${latency(m["p(99)"], step)}, max ${latency(m.max, step)}`;
  return [
    { kind: "heading", level: 2, text: `Scenario metrics (${scenario.name})` },
    { kind: "table", columns: ["metric", "type", "value"], rows: metrics.map(([name, m]) => [{ code: name }, m.type, value(m)]) },
  ];
}

function saturationBlocks({ summary }: ReportInput): Block[] {
  const e = summary.edgeload;
  return [
    { kind: "heading", level: 2, text: "Saturation" },
    e.saturated
      ? { kind: "list", items: e.saturation.map((r) => [r]) }
      : {
          kind: "paragraph",
          text: ["The generator kept the schedule: no iterations dropped or lost, schedule lag within bounds. The figures describe the target."],
        },
  ];
}

/** Achieved iterations per second (summed over regions: counts add up) against the target. */
function ratePoints(input: ReportInput): SeriesPoint[] {
  const achieved = new Map<number, number>();
  for (const r of input.perSecond) achieved.set(r.t as number, (achieved.get(r.t as number) ?? 0) + Number(r.iterations ?? 0));
  return [
    ...targetProfile(input.summary).perSecond.map((value, t) => ({ t, series: "target", value })),
    ...[...achieved.entries()].map(([t, value]) => ({ t, series: "achieved", value })),
  ];
}

function latencyPoints(rows: readonly QueryRow[]): Array<SeriesPoint & { percentile: string }> {
  return rows.flatMap((r) =>
    (["p50", "p95", "p99"] as const).map((p) => ({ t: r.t as number, series: String(r.region), percentile: p, value: r[p] as number | null })),
  );
}

/** Display bins per octave of the latency histogram (the stored buckets have 128). */
const BINS_PER_OCTAVE = 4;

/**
 * The stored buckets ([µs, count]) regrouped into a few log-spaced bins in milliseconds:
 * 2^(k/4) ms to 2^((k+1)/4) ms, so a long tail stays readable.
 */
export function latencyBins(buckets: ReadonlyArray<readonly [number, number]>): LatencyBin[] {
  const bins = new Map<number, number>();
  for (const [us, count] of buckets) {
    const k = Math.floor(Math.log2(Math.max(1, us) / 1000) * BINS_PER_OCTAVE);
    bins.set(k, (bins.get(k) ?? 0) + count);
  }
  return [...bins.entries()]
    .sort(([a], [b]) => a - b)
    .map(([k, count]) => ({ fromMs: round(2 ** (k / BINS_PER_OCTAVE), 4), toMs: round(2 ** ((k + 1) / BINS_PER_OCTAVE), 4), count }));
}

function overallPercentiles(row: QueryRow | null): Array<{ label: string; ms: number }> {
  if (!row) return [];
  return (["p50", "p95", "p99"] as const).flatMap((p) => (typeof row[p] === "number" ? [{ label: p, ms: row[p] as number }] : []));
}

/** A latency to the run's clock step: "19 ms" on workerd's whole-ms clock, not "19.008 ms". */
function latency(ms: number, resolutionMs: number | null | undefined): string {
  return `${roundToResolution(ms, resolutionMs)} ms`;
}

/** A query figure as the tables print it: the number as the query returned it. */
export function num(v: string | number | null | undefined): string {
  return v === null || v === undefined ? "–" : String(v);
}

/** A rate (0..1) as a percentage, exact to the query's six decimals. */
export function pct(v: string | number | null | undefined): string {
  return v === null || v === undefined ? "–" : `${round(Number(v) * 100, 4)}%`;
}

function round(n: number, digits: number): number {
  return Math.round(n * 10 ** digits) / 10 ** digits;
}
