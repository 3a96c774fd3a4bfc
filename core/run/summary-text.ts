/**
 * The end-of-test summary as text, in k6's style: thresholds first, then one dotted line
 * per metric, then edgeload's own breakdown per region (and per step when there are
 * several), and saturation notes. renderSummary lists the sections in their order, one
 * function each; the metric lines are summary-metrics-text.ts's.
 */
import { formatMs } from "../metrics/clock-resolution.ts";
import type { ErrorSample, Summary } from "./summary.ts";
import { scriptErrorsSection } from "./script-report.ts";
import { baseName, customMetricsSection, type FigureStyle, figureStyle, scenarioMetricsSection, totalResultsSection } from "./summary-metrics-text.ts";
import { dotted, pct, table } from "./text-format.ts";
import { costLine } from "../plan/actual-cost.ts";

type Edgeload = Summary["edgeload"];

export function renderSummary(summary: Summary): string {
  const e = summary.edgeload;
  const style = figureStyle(summary);
  return [
    ...headerLines(e),
    ...thresholdsSection(summary, style),
    ...verdictSection(e),
    ...totalResultsSection(summary, style),
    // Summaries stored before error samples were kept have none.
    ...statusSection(e.totals.statuses, e.steps, e.errors ?? []),
    // A k6 script's uncaught errors; summaries stored before they were counted have none.
    ...scriptErrorsSection(e.scriptErrors),
    ...(e.scenario ? scenarioMetricsSection(e.scenario, style) : customMetricsSection(e.customMetrics, style)),
    ...scenariosSection(e, style.fmt),
    ...phasesSection(e),
    ...groupsSection(e, style.fmt),
    ...saturationLines(e),
    ...readingNotes(e),
  ].join("\n");
}

/** The run, its status and its shape: target, executor, shards and regions, duration. */
function headerLines(e: Edgeload): string[] {
  return [
    `  edgeload run ${e.runId} · ${e.name} · ${e.status.toUpperCase()}${e.abortReason ? ` (${e.abortReason})` : ""}`,
    `  target ${e.target} · ${e.executor} · ${e.plan.shards} shard${e.plan.shards === 1 ? "" : "s"} in ${e.plan.regions.join(", ")} · ${e.durationS}s`,
    // A summary stored before the cost was recorded has none.
    ...((e as Partial<Edgeload>).cost ? [`  cost ${costLine(e.cost)}`] : []),
    "",
  ];
}

/** THRESHOLDS: each with its mark and the value observed, a latency to the clock's step. */
function thresholdsSection(summary: Summary, style: FigureStyle): string[] {
  const e = summary.edgeload;
  const m = summary.metrics as Record<string, any>;
  if (!e.thresholds.length) return [];
  const lines = e.thresholds.map((t) => {
    const isTrend =
      (t.metric.startsWith("http_req_") && !t.metric.startsWith("http_req_failed")) ||
      (m[t.metric]?.type === "trend" && !style.unitless.has(baseName(t.metric)));
    const observed = t.observed === null ? "no data" : isTrend ? style.fmt(t.observed) : String(t.observed);
    return `    ${thresholdMark(t)} ${t.metric} '${t.threshold}' observed ${observed}${t.abortOnFail ? " (abortOnFail)" : ""}`;
  });
  return ["  THRESHOLDS", ...lines, ""];
}

/** FAILED or INCONCLUSIVE with the exit code and the reasons; nothing for a pass or a run still going. */
function verdictSection(e: Edgeload): string[] {
  if (!e.verdict || e.verdict.kind === "passed") return [];
  return [`  ${e.verdict.kind.toUpperCase()} (exit ${e.exitCode}):`, ...e.verdict.reasons.map((reason) => `    - ${reason}`), ""];
}

/** SCENARIOS: one row per named scenario, each on its own shards with the thresholds filtered to it. */
function scenariosSection(e: Edgeload, fmt: FigureStyle["fmt"]): string[] {
  const scenarios = Object.entries(e.scenarios ?? {});
  if (!scenarios.length) return [];
  return [
    "  SCENARIOS (each on its own shards, thresholds filtered to it)",
    ...table(
      ["scenario", "executor", "start", "shards", "reqs", "rps", "failed", "p95", "thresholds"],
      scenarios.map(([name, sc]) => [
        name,
        sc.executor,
        `${sc.startS}s`,
        String(sc.shards),
        String(sc.totals.requests),
        sc.totals.ratePerS.toFixed(1),
        pct(sc.totals.failedRate),
        sc.totals.http_req_duration ? fmt(sc.totals.http_req_duration["p(95)"]) : "-",
        sc.thresholds.length ? `${sc.thresholdsPassed ? "✓" : "✗"} ${sc.thresholds.filter((t) => t.ok).length}/${sc.thresholds.length}` : "-",
      ]),
    ),
    "",
  ];
}

/** The setup and teardown steps, each with its status, when the run has them. */
function phasesSection(e: Edgeload): string[] {
  const out: string[] = [];
  for (const [phase, result] of [
    ["setup", e.setup],
    ["teardown", e.teardown],
  ] as const) {
    if (!result) continue;
    const steps = result.steps.map((st) => `${st.name} ${st.status || "-"}${st.ok ? "" : ` ✗ ${st.problem}`}`).join(", ");
    out.push(dotted(phase, `${result.ok ? "✓" : "✗"} ${steps}`));
  }
  if (e.setup || e.teardown) out.push("");
  return out;
}

/** BY REGION, and BY STEP when there are several steps: load, failures and percentiles per group. */
function groupsSection(e: Edgeload, fmt: FigureStyle["fmt"]): string[] {
  const groupRows = (groups: Record<string, any>) =>
    Object.entries(groups).map(([name, g]) => [
      name,
      String(g.requests),
      g.ratePerS.toFixed(1),
      pct(g.failedRate),
      String(g.dropped),
      g.http_req_duration ? fmt(g.http_req_duration.med) : "-",
      g.http_req_duration ? fmt(g.http_req_duration["p(95)"]) : "-",
      g.http_req_duration ? fmt(g.http_req_duration["p(99)"]) : "-",
      g.corrected ? fmt(g.corrected["p(99)"]) : "-",
    ]);
  const header = ["", "reqs", "rps", "failed", "dropped", "p50", "p95", "p99", "corr p99"];
  const out = ["  BY REGION (percentiles from merged histograms)", ...table(["region", ...header.slice(1)], groupRows(e.regions))];
  if (Object.keys(e.steps).length > 1) {
    out.push("", "  BY STEP", ...table(["step", ...header.slice(1)], groupRows(e.steps)));
  }
  out.push("");
  return out;
}

/**
 * Whether edgeload or the target limited the load, with the reasons; or that nothing did. With
 * no cause named, what held it back was edgeload not sending part of the schedule (restarts,
 * late starts: core/run/not-sent.ts), which is not the target's doing either.
 */
function saturationLines(e: Edgeload): string[] {
  if (!e.saturated) return ["  generator not saturated (no drops, schedule lag within bounds)"];
  // Summaries stored before causes were named have none: they read as the generator's.
  const causes = e.saturationCauses ?? ["generator"];
  return [
    causes.includes("generator")
      ? "  ⚠ GENERATOR SATURATED — the numbers above are limited by edgeload, not only by the target:"
      : causes.includes("target")
        ? "  ⚠ LOAD HELD BACK BY THE TARGET — its slow responses held edgeload's connection slots:"
        : "  ⚠ LOAD NOT FULLY SENT — edgeload itself did not send part of the schedule:",
    ...e.saturation.map((r) => `    - ${r}`),
  ];
}

/** How to read the figures: the clock's step, the path through Cloudflare, the plan's notes. */
function readingNotes(e: Edgeload): string[] {
  const out: string[] = [];
  if (e.clock?.resolutionMs != null) {
    out.push(
      `  clock: ${e.clock.resolutionMs >= 1 ? `${e.clock.resolutionMs} ms steps` : `${Math.round(e.clock.resolutionMs * 1000)} µs`} (detected from the shards' readings); latencies are shown to that step`,
    );
  }
  if (e.path?.targetBehindCloudflare) out.push(`  path: ${e.path.note}`);
  for (const note of e.plan.notes) out.push(`  note: ${note}`);
  return out;
}

/** ✓ held, ✗ failed, ? no data: a summary stored before `state` was has only `ok`. */
function thresholdMark(t: Summary["edgeload"]["thresholds"][number]): string {
  const state = (t as { state?: string }).state ?? (t.ok ? "passed" : "failed");
  return state === "passed" ? "✓" : state === "failed" ? "✗" : "?";
}

/** Status codes shown before the rest are summed into one row. */
const STATUS_ROWS = 8;
/** (step, status) pairs shown under ERRORS. */
const ERROR_ROWS = 5;

/** A response that counts as an error here: 4xx, 5xx, or no response at all ("timeout", "connection"). */
const isError = (status: string) => !/^[123]\d\d$/.test(status);

/**
 * The responses by status code, most first, then the run's first distinct errors with
 * their counts (what failed: "HTTP 503 Service Unavailable", "timeout after 10000 ms",
 * "connection error: …"), by step when the run has several. A summary without error
 * samples (stored before they were kept) shows which steps the error statuses came from.
 */
export function statusSection(
  statuses: Readonly<Record<string, number>>,
  steps: Readonly<Record<string, { readonly statuses: Readonly<Record<string, number>> }>>,
  samples: readonly ErrorSample[] = [],
): string[] {
  const total = Object.values(statuses).reduce((a, n) => a + n, 0);
  if (total === 0) return [];
  const sorted = Object.entries(statuses).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const shown = sorted.slice(0, STATUS_ROWS);
  const rest = sorted.slice(STATUS_ROWS).reduce((a, [, n]) => a + n, 0);
  const share = (n: number) => `${((n / total) * 100).toFixed(2)}%`;
  const out = [
    "  STATUS CODES",
    ...table(
      ["status", "count", "share"],
      [
        ...shown.map(([status, n]) => [`${status}${isError(status) ? " ✗" : ""}`, String(n), share(n)]),
        ...(rest ? [[`${sorted.length - STATUS_ROWS} others`, String(rest), share(rest)]] : []),
      ],
    ),
  ];
  const severalSteps = Object.keys(steps).length > 1;
  if (samples.length) {
    out.push("", "  ERRORS (first distinct, most frequent first)");
    out.push(
      ...table(
        severalSteps ? ["step", "error", "count"] : ["error", "count"],
        samples.map((x) => (severalSteps ? [x.step, x.error, String(x.count)] : [x.error, String(x.count)])),
      ),
    );
    out.push("");
    return out;
  }
  const errors = severalSteps
    ? Object.entries(steps).flatMap(([step, g]) =>
        Object.entries(g.statuses)
          .filter(([status]) => isError(status))
          .map(([status, n]) => [step, status, n] as const),
      )
    : [];
  if (errors.length) {
    errors.sort((a, b) => b[2] - a[2] || a[0].localeCompare(b[0]));
    out.push("", `  ERRORS BY STEP (${errors.length > ERROR_ROWS ? `the ${ERROR_ROWS} most frequent of ${errors.length}` : "most frequent first"})`);
    out.push(
      ...table(
        ["step", "status", "count"],
        errors.slice(0, ERROR_ROWS).map(([step, status, n]) => [step, status, String(n)]),
      ),
    );
  }
  out.push("");
  return out;
}

/**
 * One row per scenario run: load, latency, success and — for introspection — correctness,
 * the figures the reference suite's reports lead with.
 */
export function renderScenarioTable(summaries: readonly Summary[]): string {
  const rows = summaries.map((s) => {
    const m = s.metrics as Record<string, any>;
    const name = s.edgeload.scenario?.name ?? s.edgeload.name;
    const prefix = name.replace(/-/g, "_");
    const success = m[`${prefix}_success`];
    const correct = m.active_correct;
    return [
      name,
      String(m.http_reqs.count),
      s.edgeload.achievedRatePerS.toFixed(1),
      m.http_req_duration ? formatMs(m.http_req_duration.med, s.edgeload.clock?.resolutionMs) : "-",
      m.http_req_duration ? formatMs(m.http_req_duration["p(95)"], s.edgeload.clock?.resolutionMs) : "-",
      m.http_req_duration ? formatMs(m.http_req_duration["p(99)"], s.edgeload.clock?.resolutionMs) : "-",
      success ? pct(success.value) : "-",
      correct ? `${pct(correct.value)} (FP ${m.false_positives?.count ?? 0}, FN ${m.false_negatives?.count ?? 0})` : "-",
      s.edgeload.thresholdsPassed ? "✓" : "✗",
    ];
  });
  return [
    "",
    "  RESULTS BY SCENARIO",
    ...table(["scenario", "reqs", "rps", "p50", "p95", "p99", "success", "introspection correct", "thresholds"], rows),
    "",
  ].join("\n");
}
