/**
 * The end-of-test summary as text, in k6's style: thresholds first, then one dotted line
 * per metric, then edgeload's own breakdown per region (and per step when there are
 * several), and saturation notes.
 */
import { formatMs } from "../metrics/clock-resolution.ts";
import type { ErrorSample, Summary } from "./summary.ts";
import { scriptErrorsSection } from "./script-report.ts";
import { customValue, dotted, formatBytes, pct, table, TREND_ORDER, trendLine } from "./text-format.ts";

/** A metric key's metric: `asset_size` of `asset_size{staticAsset:yes}`. */
const baseName = (key: string) => key.replace(/\{.*$/, "");

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

export function renderSummary(summary: Summary): string {
  const e = summary.edgeload;
  const m = summary.metrics as Record<string, any>;
  const out: string[] = [];
  // Runs stored before the clock was detected have no `clock`: full digits, as before.
  const resolution = e.clock?.resolutionMs ?? null;
  const fmt = (ms: number) => formatMs(ms, resolution);
  // A k6 Trend without isTime holds plain numbers (summaries stored before this have none).
  const unitless = new Set<string>(e.unitlessTrends ?? []);
  // k6's summaryTrendStats, when the run set them: which trend figures each line shows.
  const stats = (summary.options as { summaryTrendStats?: readonly string[] } | undefined)?.summaryTrendStats ?? TREND_ORDER;
  out.push(`  edgeload run ${e.runId} · ${e.name} · ${e.status.toUpperCase()}${e.abortReason ? ` (${e.abortReason})` : ""}`);
  out.push(`  target ${e.target} · ${e.executor} · ${e.plan.shards} shard${e.plan.shards === 1 ? "" : "s"} in ${e.plan.regions.join(", ")} · ${e.durationS}s`);
  out.push("");

  if (e.thresholds.length) {
    out.push("  THRESHOLDS");
    for (const t of e.thresholds) {
      const isTrend =
        (t.metric.startsWith("http_req_") && !t.metric.startsWith("http_req_failed")) || (m[t.metric]?.type === "trend" && !unitless.has(baseName(t.metric)));
      const observed = t.observed === null ? "no data" : isTrend ? fmt(t.observed) : String(t.observed);
      out.push(`    ${thresholdMark(t)} ${t.metric} '${t.threshold}' observed ${observed}${t.abortOnFail ? " (abortOnFail)" : ""}`);
    }
    out.push("");
  }
  if (e.verdict && e.verdict.kind !== "passed") {
    out.push(`  ${e.verdict.kind.toUpperCase()} (exit ${e.exitCode}):`);
    for (const reason of e.verdict.reasons) out.push(`    - ${reason}`);
    out.push("");
  }

  // k6's sub-metrics (`http_req_duration{name:home}`) each on a line under their metric.
  const subs = (parent: string) => subMetricLines(m, parent, resolution, stats);
  out.push("  TOTAL RESULTS");
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
  // edgeload's own trends: latency from the intended send time (coordinated omission
  // corrected), how late requests left compared with the schedule, and how long the
  // generator's own event loop kept responses waiting (its share of every latency above).
  if (e.totals.corrected) out.push(dotted("http_req_corrected", trendLine(e.totals.corrected, resolution)));
  if (e.totals.schedule_lag) out.push(dotted("schedule_lag", trendLine(e.totals.schedule_lag, resolution)));
  if (e.totals.client_delay) out.push(dotted("client_delay", trendLine(e.totals.client_delay, resolution)));
  if (e.vus) {
    // Closed model: the load is the VUs, the rate is whatever the target's latency allows.
    const stages = e.vus.stages.map((s) => `${s.target} for ${s.durationS}s`).join(", ");
    const it = e.vus.iterations;
    out.push(
      dotted(
        "vus",
        it
          ? `${e.vus.peak} · ${it.kind === "per-vu" ? `${it.count} iteration${it.count === 1 ? "" : "s"} each` : `${it.count} iteration${it.count === 1 ? "" : "s"} shared`} · maxDuration ${e.vus.stages[0]?.durationS ?? 0}s`
          : `peak ${e.vus.peak} · from ${e.vus.startVUs}: ${stages}`,
      ),
    );
    out.push(dotted("achieved iteration rate", `${e.achievedRatePerS.toFixed(2)}/s`));
  } else if (e.targetRatePerS !== null) {
    out.push(dotted("target vs achieved rate", `${e.targetRatePerS.toFixed(2)}/s → ${e.achievedRatePerS.toFixed(2)}/s`));
  }
  out.push("");
  // Summaries stored before error samples were kept have none.
  out.push(...statusSection(e.totals.statuses, e.steps, e.errors ?? []));
  // A k6 script's uncaught errors; summaries stored before they were counted have none.
  out.push(...scriptErrorsSection(e.scriptErrors));

  if (e.scenario) {
    out.push(`  SCENARIO ${e.scenario.name}${e.scenario.seed ? ` · seed ${e.scenario.seed}` : ""}${e.scenario.preset ? ` · preset ${e.scenario.preset}` : ""}`);
    for (const [name, metric] of Object.entries(e.scenario.metrics)) {
      out.push(dotted(name, customValue(metric, resolution, stats), 40));
    }
    out.push("");
  }

  if (!e.scenario && Object.keys(e.customMetrics).length) {
    out.push("  CUSTOM METRICS");
    for (const [name, metric] of Object.entries(e.customMetrics)) {
      out.push(dotted(seriesLabel(name), customValue(metric, resolution, stats, unitless.has(baseName(name))), 40));
    }
    out.push("");
  }

  const scenarios = Object.entries(e.scenarios ?? {});
  if (scenarios.length) {
    out.push("  SCENARIOS (each on its own shards, thresholds filtered to it)");
    out.push(
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
    );
    out.push("");
  }
  for (const [phase, result] of [
    ["setup", e.setup],
    ["teardown", e.teardown],
  ] as const) {
    if (!result) continue;
    const steps = result.steps.map((st) => `${st.name} ${st.status || "-"}${st.ok ? "" : ` ✗ ${st.problem}`}`).join(", ");
    out.push(dotted(phase, `${result.ok ? "✓" : "✗"} ${steps}`));
  }
  if (e.setup || e.teardown) out.push("");

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
  out.push("  BY REGION (percentiles from merged histograms)");
  out.push(...table(["region", ...header.slice(1)], groupRows(e.regions)));
  if (Object.keys(e.steps).length > 1) {
    out.push("");
    out.push("  BY STEP");
    out.push(...table(["step", ...header.slice(1)], groupRows(e.steps)));
  }
  out.push("");
  if (e.saturated) {
    // Summaries stored before causes were named have none: they read as the generator's.
    const causes = e.saturationCauses ?? ["generator"];
    out.push(
      causes.includes("generator")
        ? "  ⚠ GENERATOR SATURATED — the numbers above are limited by edgeload, not only by the target:"
        : "  ⚠ LOAD HELD BACK BY THE TARGET — its slow responses held edgeload's connection slots:",
    );
    for (const r of e.saturation) out.push(`    - ${r}`);
  } else {
    out.push("  generator not saturated (no drops, schedule lag within bounds)");
  }
  if (e.clock?.resolutionMs != null) {
    out.push(
      `  clock: ${e.clock.resolutionMs >= 1 ? `${e.clock.resolutionMs} ms steps` : `${Math.round(e.clock.resolutionMs * 1000)} µs`} (detected from the shards' readings); latencies are shown to that step`,
    );
  }
  if (e.path?.targetBehindCloudflare) out.push(`  path: ${e.path.note}`);
  for (const note of e.plan.notes) out.push(`  note: ${note}`);
  return out.join("\n");
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
