/**
 * Crosscheck: an edge run against k6 measuring the same load on the same target, side by
 * side, with a verdict per figure. The question is not "did something change" (that is
 * core/results/compare.ts, two runs of one tool) but "do two independent instruments read the
 * same": each row says how far apart they may be and why.
 *
 * | row                 | agree when                       | why                                                            |
 * |---------------------|----------------------------------|----------------------------------------------------------------|
 * | requests            | |Δ| ≤ max(1 request, 1%)         | both follow the same arrival schedule; k6's arrival-rate executors may start one more at the very end |
 * | achieved rate       | |Δ| ≤ 3%                         | each tool divides by its own elapsed time (edgeload: the planned duration; k6: its whole test, setup() included) |
 * | error rate          | |Δ| ≤ max(0.1 pp, 3 σ)           | failures are a proportion of two different samples: 3 standard errors of the pooled rate is sampling noise |
 * | p50                 | |Δ| ≤ max(3 ms, 10% of k6's)     | the same target timed with different clocks and client stacks (workerd's fetch, Go's net/http) |
 * | p90, p95            | |Δ| ≤ max(5 ms, 10% of k6's)     | the upper tail is where a busy machine delays workerd's event loop more than Go's scheduler |
 * | p99                 | |Δ| ≤ max(5 ms, 20% of k6's)     | the slowest 1% rests on a handful of samples and is where the client stacks differ most |
 * | max                 | |Δ| ≤ max(10 ms, 50% of k6's)    | one extreme sample from each run, not a statistic: only a gross difference says something |
 *
 * Measured on the local stack (`/delay?ms=20`, 100/s and 300/s for 5 s, both tools at once,
 * on a shared 2-core machine, 14 pairs): edgeload read p50 0.2–1.3 ms above k6, p95
 * 1.6–4.3 ms above (6.6 ms once, under load from elsewhere), p99 1.6–12.8 ms above. The floors are set from that
 * spread; on real networks the relative part dominates.
 *
 * Percentiles are compared where both tools report them: the whole load, and each step
 * that both name (k6's `http_req_duration{step:…}` sub-metrics). No latency tolerance is
 * below the two clocks' steps added up (edgeload's detected resolution, 1 ms under workerd,
 * and k6's microseconds): within that, two readings cannot be told apart. Pure: figures in,
 * rows out.
 */
import { failed, inconclusive, PASSED, type Verdict as GateVerdict } from "../run/verdict.ts";
import { K6_RESOLUTION_MS } from "../metrics/clock-resolution.ts";
import type { Summary } from "../run/summary.ts";
import type { TrendSummary } from "../run/summary-figures.ts";

/** Latency figures in milliseconds; null when a tool does not report one. */
export interface Latency {
  readonly p50: number | null;
  readonly p90: number | null;
  readonly p95: number | null;
  readonly p99: number | null;
  readonly max: number | null;
}

/** What one tool measured of one load, reduced to what both tools can report. */
export interface LoadFigures {
  readonly requests: number | null;
  /** Achieved requests per second. */
  readonly ratePerS: number | null;
  /** Share of requests that failed (http_req_failed), 0–1. */
  readonly errorRate: number | null;
  readonly failed: number | null;
  readonly durationS: number | null;
  readonly dropped: number;
  readonly latency: Latency;
  readonly steps: Readonly<Record<string, { readonly requests: number | null; readonly latency: Latency }>>;
  /**
   * The step of the clock the tool timed with, in ms (core/metrics/clock-resolution.ts): edgeload's
   * as detected by its shards; k6's is its Go clock's (K6_RESOLUTION_MS) when not given.
   */
  readonly clockResolutionMs?: number | null;
}

type RowMetric = "requests" | "rate" | "error_rate" | keyof Latency;
export type Verdict = "agree" | "disagree" | "n/a";

export interface CrosscheckRow {
  readonly metric: RowMetric;
  /** The step the row is about, or null for the whole load. */
  readonly step: string | null;
  readonly unit: "requests" | "/s" | "ratio" | "ms";
  readonly edge: number | null;
  readonly k6: number | null;
  /** edge − k6, in the row's unit. */
  readonly difference: number | null;
  /** The largest |difference| that still agrees, in the row's unit. */
  readonly tolerance: number | null;
  readonly rule: string;
  readonly verdict: Verdict;
}

export interface Crosscheck {
  /** "disagree" if any row does; "n/a" if the outcome is inconclusive; else "agree". */
  readonly verdict: "agree" | "disagree" | "n/a";
  /**
   * The verdict the exit code is a function of (core/run/verdict.ts): failed when a row
   * disagrees, inconclusive when the load itself (requests, rate) or every row could not be
   * compared, else passed. A latency row one tool has no value for is only a note.
   */
  readonly outcome: GateVerdict;
  readonly rows: readonly CrosscheckRow[];
  /** Each rule used, with the reason for it. */
  readonly rules: ReadonlyArray<{ readonly rule: string; readonly reason: string }>;
  readonly notes: readonly string[];
}

/** Rows that say whether the two tools sent the same load: without them nothing else means much. */
const LOAD_ROWS: ReadonlySet<RowMetric> = new Set(["requests", "rate"]);

/**
 * Failed if a row disagrees; inconclusive if nothing, or not the load itself, was compared,
 * or a tool measured no requests at all.
 */
export function crosscheckOutcome(rows: readonly CrosscheckRow[]): GateVerdict {
  const disagree = rows.filter((r) => r.verdict === "disagree");
  if (disagree.length) return failed(...disagree.map((r) => `${rowName(r)}: edgeload ${r.edge}, k6 ${r.k6}, outside ±${r.tolerance} ${r.unit}`));
  if (!rows.some((r) => r.verdict === "agree")) return inconclusive("nothing could be compared: neither tool has a figure the other has");
  const requests = rows.find((r) => r.metric === "requests" && r.step === null);
  const idle = requests ? [requests.edge === 0 ? "edgeload" : null, requests.k6 === 0 ? "k6" : null].filter((t) => t !== null) : [];
  if (idle.length) return inconclusive(`${idle.join(" and ")} measured no requests: two empty readings agree about nothing`);
  const load = rows.filter((r) => r.step === null && LOAD_ROWS.has(r.metric) && r.verdict === "n/a");
  if (load.length)
    return inconclusive(...load.map((r) => `${rowName(r)}: ${r.edge === null ? "edgeload" : "k6"} has no value, so the load itself was not compared`));
  return PASSED;
}

function rowName(r: CrosscheckRow): string {
  return `${r.metric}${r.step ? ` of ${r.step}` : ""}`;
}

/** A latency tolerance: the larger of an absolute floor and a share of k6's reading. */
function latencyTolerance(absoluteMs: number, relative: number, reason: string) {
  return { absoluteMs, relative, rule: `max(${absoluteMs} ms, ${Math.round(relative * 100)}% of k6's)`, reason } as const;
}

/** The tolerances, each with the rule it prints as and the reason for it. */
export const TOLERANCES = {
  requests: {
    relative: 0.01,
    absolute: 1,
    rule: "max(1 request, 1%)",
    reason:
      "both tools follow the same arrival schedule, so they send the same number of requests; k6's arrival-rate executors may start one more at the very end",
  },
  rate: {
    relative: 0.03,
    rule: "3%",
    reason:
      "each tool divides its requests by its own elapsed time: edgeload by the planned duration, k6 by its whole test including setup() and the last response",
  },
  errorRate: {
    absolute: 0.001,
    sigmas: 3,
    rule: "max(0.1 pp, 3 standard errors)",
    reason: "failures are a proportion of two different samples of the target's behaviour: within 3 standard errors of the pooled rate is sampling noise",
  },
  median: latencyTolerance(
    3,
    0.1,
    "both tools time the same target, but with different clocks and client stacks (workerd's fetch, Go's net/http): a few milliseconds or 10% apart is the same reading",
  ),
  tail: latencyTolerance(
    5,
    0.1,
    "in the upper tail a busy machine delays workerd's event loop (and so a local edgeload's reading) more than Go's scheduler: measured 1–4 ms at p95 on the local stack",
  ),
  p99: latencyTolerance(
    5,
    0.2,
    "the slowest 1% rests on a handful of samples per thousand requests, and the tail is where the client stacks differ most (timer and event-loop delays in workerd, Go's scheduler in k6)",
  ),
  max: latencyTolerance(10, 0.5, "a maximum is one extreme sample from each run, not a statistic: only a gross difference says something"),
} as const;

const LATENCY_STATS = ["p50", "p90", "p95", "p99", "max"] as const;
/** Per step, the rows that stay meaningful with a step's smaller sample. */
const STEP_STATS = ["p50", "p95", "p99"] as const;

/** The figures of an edge run from its summary (GET /v1/runs/:id/summary). */
export function edgeFigures(summary: Summary): LoadFigures {
  const m = summary.metrics as Record<string, Record<string, number> | undefined>;
  const latency = (t: TrendSummary | null | undefined): Latency => ({
    p50: t?.med ?? null,
    p90: t?.["p(90)"] ?? null,
    p95: t?.["p(95)"] ?? null,
    p99: t?.["p(99)"] ?? null,
    max: t?.max ?? null,
  });
  return {
    requests: m.http_reqs?.count ?? null,
    ratePerS: m.http_reqs?.rate ?? null,
    errorRate: m.http_req_failed?.value ?? null,
    failed: m.http_req_failed?.passes ?? null,
    durationS: summary.edgeload.durationS,
    dropped: m.dropped_iterations?.count ?? 0,
    latency: latency(m.http_req_duration as unknown as TrendSummary | undefined),
    steps: Object.fromEntries(
      Object.entries(summary.edgeload.steps).map(([name, s]) => [name, { requests: s.requests, latency: latency(s.http_req_duration) }]),
    ),
    // Summaries stored before the clock was detected have none.
    clockResolutionMs: summary.edgeload.clock?.resolutionMs ?? null,
  };
}

function row(
  metric: RowMetric,
  step: string | null,
  unit: CrosscheckRow["unit"],
  edge: number | null,
  k6: number | null,
  tolerance: number | null,
  rule: string,
): CrosscheckRow {
  if (edge === null || k6 === null || tolerance === null) return { metric, step, unit, edge, k6, difference: null, tolerance, rule, verdict: "n/a" };
  const difference = edge - k6;
  // A hair of slack for floating-point: a tolerance of exactly |Δ| agrees.
  return { metric, step, unit, edge, k6, difference, tolerance, rule, verdict: Math.abs(difference) <= tolerance + 1e-9 ? "agree" : "disagree" };
}

/**
 * A latency row. Its tolerance is never below the two clocks' steps together: two readings
 * quantised by clocks of 1 ms and 1 µs can differ by up to 1.001 ms with nothing between
 * them, so a smaller difference cannot be called a disagreement.
 */
function latencyRow(stat: keyof Latency, step: string | null, edge: Latency, k6: Latency, clockStepsMs: number): CrosscheckRow {
  const t = stat === "p50" ? TOLERANCES.median : stat === "max" ? TOLERANCES.max : stat === "p99" ? TOLERANCES.p99 : TOLERANCES.tail;
  const reference = k6[stat];
  return row(stat, step, "ms", edge[stat], reference, reference === null ? null : Math.max(t.absoluteMs, t.relative * reference, clockStepsMs), t.rule);
}

function requestsRow(step: string | null, edge: number | null, k6: number | null): CrosscheckRow {
  const t = TOLERANCES.requests;
  return row("requests", step, "requests", edge, k6, k6 === null ? null : Math.max(t.absolute, t.relative * k6), t.rule);
}

/** Three standard errors of the difference of two proportions under their pooled rate. */
function errorRateTolerance(edge: LoadFigures, k6: LoadFigures): number | null {
  const [n1, n2] = [edge.requests, k6.requests];
  if (edge.errorRate === null || k6.errorRate === null || !n1 || !n2) return null;
  const pooled = (edge.errorRate * n1 + k6.errorRate * n2) / (n1 + n2);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
  return Math.max(TOLERANCES.errorRate.absolute, TOLERANCES.errorRate.sigmas * se);
}

/**
 * Compares what edgeload and k6 measured of the same load.
 *
 * @example crosscheck(edgeFigures(await client.summary(runId)), parsed.figures)
 *   // → { verdict: "agree", rows: [{ metric: "p95", step: null, edge: 24.1, k6: 23.0, tolerance: 3, verdict: "agree", … }, …] }
 */
export function crosscheck(edge: LoadFigures, k6: LoadFigures): Crosscheck {
  const edgeStepMs = edge.clockResolutionMs ?? null;
  const k6StepMs = k6.clockResolutionMs ?? K6_RESOLUTION_MS;
  const clockStepsMs = (edgeStepMs ?? 0) + k6StepMs;
  const rows: CrosscheckRow[] = [
    requestsRow(null, edge.requests, k6.requests),
    row("rate", null, "/s", edge.ratePerS, k6.ratePerS, k6.ratePerS === null ? null : TOLERANCES.rate.relative * k6.ratePerS, TOLERANCES.rate.rule),
    row("error_rate", null, "ratio", edge.errorRate, k6.errorRate, errorRateTolerance(edge, k6), TOLERANCES.errorRate.rule),
    ...LATENCY_STATS.map((stat) => latencyRow(stat, null, edge.latency, k6.latency, clockStepsMs)),
  ];
  const shared = Object.keys(edge.steps)
    .filter((s) => s in k6.steps)
    .sort();
  for (const step of shared) {
    const [e, k] = [edge.steps[step]!, k6.steps[step]!];
    if (e.requests !== null && k.requests !== null) rows.push(requestsRow(step, e.requests, k.requests));
    rows.push(...STEP_STATS.map((stat) => latencyRow(stat, step, e.latency, k.latency, clockStepsMs)));
  }
  const notes: string[] = [];
  if (edgeStepMs !== null) {
    notes.push(
      `clocks: edgeload timed with ${stepText(edgeStepMs)} steps, k6 with ${stepText(k6StepMs)}: no latency row can agree more closely than ${+clockStepsMs.toFixed(3)} ms`,
    );
  }
  const missing = LATENCY_STATS.filter((s) => k6.latency[s] === null);
  if (missing.length)
    notes.push(`k6's summary has no ${missing.join(", ")} of http_req_duration: set summaryTrendStats (edgeload's k6 scripts do) to compare them`);
  if (shared.length === 0 && Object.keys(k6.steps).length === 0)
    notes.push("k6's summary has no http_req_duration{step:…} sub-metrics: only the whole load is compared");
  const fewest = Math.min(edge.requests ?? Infinity, k6.requests ?? Infinity);
  if (fewest < 1000)
    notes.push(
      `p99 rests on the slowest ${Math.max(1, Math.floor(fewest / 100))} of ${fewest} requests: its row says little; run longer or faster to judge the tail`,
    );
  if (edge.dropped > 0) notes.push(`edgeload dropped ${edge.dropped} iterations: the in-flight cap (maxVUs) was reached, so it sent less load than planned`);
  if (k6.dropped > 0) notes.push(`k6 dropped ${k6.dropped} iterations: its maxVUs was reached, so it sent less load than planned`);
  const used = new Map<string, string>();
  for (const r of rows) {
    const t = Object.values(TOLERANCES).find((x) => x.rule === r.rule);
    if (t) used.set(t.rule, t.reason);
  }
  const outcome = crosscheckOutcome(rows);
  const notCompared = rows.filter((r) => r.verdict === "n/a" && !LOAD_ROWS.has(r.metric));
  if (notCompared.length && outcome.kind !== "inconclusive")
    notes.push(`not compared (one tool has no value): ${notCompared.map((r) => `${ROW_LABELS[r.metric]}${r.step ? ` of ${r.step}` : ""}`).join(", ")}`);
  return {
    verdict: outcome.kind === "failed" ? "disagree" : outcome.kind === "passed" ? "agree" : "n/a",
    outcome,
    rows,
    rules: [...used].map(([rule, reason]) => ({ rule, reason })),
    notes,
  };
}

function stepText(ms: number): string {
  return ms >= 1 ? `${ms} ms` : `${+(ms * 1000).toFixed(3)} µs`;
}

/** How each row's metric is named in tables. */
export const ROW_LABELS: Readonly<Record<RowMetric, string>> = {
  requests: "requests",
  rate: "achieved rate",
  error_rate: "error rate",
  p50: "p50",
  p90: "p90",
  p95: "p95",
  p99: "p99",
  max: "max",
};
