/**
 * Runs' measurements in the Prometheus text exposition format (0.0.4), for
 * `GET /v1/runs/:id/metrics` and `GET /metrics`: what Prometheus scrapes so a run shows up
 * in the dashboards its users already watch.
 *
 * Latency is exposed as **classic histograms** (`_bucket{le}`, `_sum`, `_count`), not native
 * ones: native histograms need the protobuf exposition format and a Prometheus started with
 * a feature flag, while classic buckets in text work with every Prometheus, Grafana Agent,
 * VictoriaMetrics and Mimir as they are. `_sum` and `_count` are exact.
 *
 * The `le` bounds are eighth-octave steps, 2^k·(1 + m/8) µs from 64 µs to 2^25 µs (33.6 s),
 * 152 bounds plus +Inf. Every bound is a bucket boundary of core/metrics/histogram.ts, so each
 * cumulative count is exact: it counts every recorded value below the bound. (Values are
 * recorded in whole microseconds; one recorded at exactly a bound counts in the next
 * bucket — a 1 µs difference.) Error bound of `histogram_quantile()` over these buckets:
 * Prometheus interpolates linearly inside the bucket holding the quantile, so its answer
 * lies within that bucket, whose width is at most 1/8 of its lower bound: within
 * **12.5 %** of the true quantile (edgeload's own figures are within 0.39 %). Below the first
 * bound (64 µs) the error is up to 64 µs absolute; above the last (33.6 s) Prometheus answers
 * the last finite bound.
 *
 * Labels: `run_id` on everything, `region` and `step` on per-cell series, `status` on
 * response counts (HTTP code, or "timeout" / "connection"). An ended run has its exit code
 * as `edgeload_run_exit_code` and its verdict's reason on `edgeload_run_info`. Custom metrics of the scenario
 * are `edgeload_custom_<name>…`, their k6 sub-metric tags (`name{type:x}`) as labels.
 */
import type { MetricStats, TrendName } from "../metrics/metric-stats.ts";
import { RunTotals, type RunTotalsWire } from "../run/run-totals.ts";
import type { Histogram } from "../metrics/histogram.ts";
import { exitCodeOf, type RunStatus } from "../run/protocol.ts";
import type { Verdict } from "../run/verdict.ts";
import { parseMetricKey } from "../metrics/metric-key.ts";
import { webVitalMetric } from "../metrics/web-vitals.ts";

/** Longest verdict reason carried as a label (the summary has them whole). */
const MAX_REASON_LABEL = 200;

/** A failed or inconclusive verdict's reasons as one label value; null for none or a pass. */
export function verdictReason(verdict: Verdict | null | undefined): string | null {
  if (!verdict || verdict.kind === "passed") return null;
  const text = verdict.reasons.join("; ");
  return text.length > MAX_REASON_LABEL ? `${text.slice(0, MAX_REASON_LABEL - 1)}…` : text;
}

/** What one run contributes to an exposition. */
export interface RunMetricsSource {
  readonly runId: string;
  readonly name: string;
  readonly status: RunStatus;
  /** The verdict once the run has ended: a run that failed or could not be told says why. */
  readonly verdict?: Verdict | null;
  /** The script aborted the run or threw in setup: its exit code is k6's 108 or 107. */
  readonly endedByScript?: boolean;
  readonly totals: RunTotals;
  /** The schedule's rate now (null for closed-model runs). */
  readonly targetRatePerS: number | null;
  /** Closed-model runs: VUs the schedule has active now. */
  readonly targetVUs: number | null;
  /** Iterations started in the last complete second. */
  readonly achievedRatePerS: number;
  /** Highest in-flight request count any shard reported, summed over shards. */
  readonly peakInFlight: number;
  /** The script's trends that are not times (k6's `new Trend(name, false)`: RunSpec.unitlessTrends). */
  readonly unitlessTrends?: readonly string[];
}

/** A RunMetricsSource as the RunCoordinator sends it over RPC (totals in their wire form). */
export type RunMetricsWire = Omit<RunMetricsSource, "totals"> & { readonly totals: RunTotalsWire };

/** The `le` bounds in microseconds (see the header comment for why these). */
export const LE_BOUNDS_US: readonly number[] = (() => {
  const out: number[] = [];
  for (let k = 6; k < 25; k++) for (let m = 0; m < 8; m++) out.push(2 ** k * (1 + m / 8));
  out.push(2 ** 25);
  return out;
})();

/** Counts of `h`'s values below each of LE_BOUNDS_US (exact: see the header comment). */
export function cumulativeCounts(h: Histogram): number[] {
  const buckets = h.buckets();
  const out: number[] = [];
  let i = 0;
  let cumulative = 0;
  for (const bound of LE_BOUNDS_US) {
    // Bounds are bucket boundaries, so a bucket's midpoint is below a bound exactly when
    // all of the bucket is.
    while (i < buckets.length && buckets[i]![0] < bound) cumulative += buckets[i++]![1];
    out.push(cumulative);
  }
  return out;
}

/** Worst-case relative error of histogram_quantile() over LE_BOUNDS_US. */
export const QUANTILE_RELATIVE_ERROR = 1 / 8;

export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const TREND_FAMILIES: ReadonlyArray<readonly [TrendName, string, string]> = [
  ["duration", "edgeload_http_req_duration_seconds", "Time from sending a request to reading its body (k6 http_req_duration)."],
  ["ttfb", "edgeload_http_req_waiting_seconds", "Time from sending a request to its response headers (k6 http_req_waiting)."],
  [
    "corrected",
    "edgeload_http_req_corrected_duration_seconds",
    "Time from a request's intended send time to reading its body (coordinated-omission corrected).",
  ],
];

type Labels = Readonly<Record<string, string>>;

/** Collects samples by family so each family's HELP and TYPE appear once, before its samples. */
class Families {
  readonly #families = new Map<string, { type: string; help: string; lines: string[] }>();

  add(family: string, type: string, help: string, name: string, labels: Labels, value: number): void {
    let f = this.#families.get(family);
    if (!f) this.#families.set(family, (f = { type, help, lines: [] }));
    f.lines.push(`${name}${labelText(labels)} ${formatValue(value)}`);
  }

  /** `perUnit`: the histogram's units in one exported unit (a time's µs in a second; a score's thousandths in one). */
  histogram(family: string, help: string, labels: Labels, h: Histogram, perUnit = 1e6): void {
    const cumulative = cumulativeCounts(h);
    LE_BOUNDS_US.forEach((bound, i) =>
      this.add(family, "histogram", help, `${family}_bucket`, { ...labels, le: formatValue(bound / perUnit) }, cumulative[i]!),
    );
    this.add(family, "histogram", help, `${family}_bucket`, { ...labels, le: "+Inf" }, h.count);
    this.add(family, "histogram", help, `${family}_sum`, labels, h.sum / perUnit);
    this.add(family, "histogram", help, `${family}_count`, labels, h.count);
  }

  text(): string {
    const out: string[] = [];
    for (const [name, f] of this.#families) out.push(`# HELP ${name} ${f.help}`, `# TYPE ${name} ${f.type}`, ...f.lines);
    return out.length ? `${out.join("\n")}\n` : "";
  }
}

/** The exposition for the given runs (an empty document when there are none). */
export function runsExposition(runs: readonly RunMetricsSource[]): string {
  const f = new Families();
  for (const run of runs) addRun(f, run);
  return f.text();
}

/** The exposition straight from what RunCoordinators send. */
export function wireRunsExposition(runs: readonly RunMetricsWire[]): string {
  return runsExposition(runs.map((r) => ({ ...r, totals: RunTotals.fromWire(r.totals) })));
}

function addRun(f: Families, run: RunMetricsSource): void {
  const id = { run_id: run.runId };
  const reason = verdictReason(run.verdict);
  f.add(
    "edgeload_run_info",
    "gauge",
    "1 per run, its name, status and (when it failed or was inconclusive) the verdict's reason as labels.",
    "edgeload_run_info",
    { ...id, name: run.name, status: run.status, ...(reason ? { reason } : {}) },
    1,
  );
  const exitCode = exitCodeOf(run.status, run.endedByScript);
  if (exitCode !== null)
    f.add(
      "edgeload_run_exit_code",
      "gauge",
      "The exit code of an ended run: 0 passed, 99 failed, 75 inconclusive, 105/108 aborted (docs/cli.md).",
      "edgeload_run_exit_code",
      id,
      exitCode,
    );
  if (run.targetRatePerS !== null)
    f.add("edgeload_target_rate", "gauge", "Iterations per second the schedule asks for now.", "edgeload_target_rate", id, run.targetRatePerS);
  if (run.targetVUs !== null) f.add("edgeload_vus", "gauge", "VUs the schedule has active now (closed-model runs; k6 vus).", "edgeload_vus", id, run.targetVUs);
  f.add("edgeload_achieved_rate", "gauge", "Iterations started in the last complete second.", "edgeload_achieved_rate", id, run.achievedRatePerS);
  f.add(
    "edgeload_peak_in_flight_requests",
    "gauge",
    "Peak concurrent requests, summed over shards' own peaks.",
    "edgeload_peak_in_flight_requests",
    id,
    run.peakInFlight,
  );

  // A trend that is not a time is exported as itself, not in seconds: the script's, and CLS (a score).
  const unitless = new Set([...(run.unitlessTrends ?? []), webVitalMetric("cls")].map((name) => customName(name).family));
  for (const region of run.totals.regions()) {
    for (const step of run.totals.steps()) {
      const stats = run.totals.select({ region, step });
      if (stats.isEmpty) continue;
      addCell(f, { ...id, region, step: String(step) }, stats, unitless);
    }
  }
}

function addCell(f: Families, labels: Labels, stats: MetricStats, unitless: ReadonlySet<string>): void {
  const c = stats.counters;
  const counter = (family: string, help: string, value: number, extra: Labels = {}) =>
    f.add(family, "counter", help, `${family}_total`, { ...labels, ...extra }, value);
  for (const [status, n] of Object.entries(stats.statuses).sort())
    counter("edgeload_http_reqs", 'Completed requests by status code, "timeout" or "connection" (k6 http_reqs).', n, { status });
  counter("edgeload_http_req_failed", "Requests that failed: unexpected status, timeout or connection error.", c.failed);
  counter("edgeload_requests_sent", "Requests sent.", c.sent);
  counter("edgeload_iterations", "Finished iterations (k6 iterations).", c.iterations);
  counter("edgeload_dropped_iterations", "Iterations not started: no in-flight capacity at their due time (k6 dropped_iterations).", c.dropped);
  counter("edgeload_interrupted_iterations", "Iterations lost to a shard restart.", c.interrupted);
  // edgeload's own failure to send part of the schedule, by cause: never the target's doing (core/run/not-sent.ts).
  const notSentHelp = "Iterations edgeload itself did not send: lost to a shard restart, or never started before a shard's deadline.";
  counter("edgeload_not_sent_iterations", notSentHelp, c.interrupted, { cause: "shard_restart" });
  counter("edgeload_not_sent_iterations", notSentHelp, c.unstarted, { cause: "deadline" });
  counter("edgeload_checks", "Check results (k6 checks).", c.checksPassed, { result: "pass" });
  counter("edgeload_checks", "Check results (k6 checks).", c.checksFailed, { result: "fail" });
  counter("edgeload_data_received_bytes", "Response bytes received (k6 data_received).", c.bytesReceived);
  for (const [trend, family, help] of TREND_FAMILIES) if (stats.trends[trend].count > 0) f.histogram(family, help, labels, stats.trends[trend]);
  if (stats.hasCustom) addCustom(f, labels, stats, unitless);
}

function addCustom(f: Families, labels: Labels, stats: MetricStats, unitless: ReadonlySet<string>): void {
  const custom = stats.custom;
  for (const [key, n] of [...custom.counters].sort()) {
    const { family, extra } = customName(key);
    f.add(family, "counter", `Scenario counter ${family.slice(16)}.`, `${family}_total`, { ...labels, ...extra }, n);
  }
  for (const [key, [passes, total]] of [...custom.rates].sort()) {
    const { family, extra } = customName(key);
    f.add(family, "counter", `Scenario rate ${family.slice(16)}: samples by result.`, `${family}_total`, { ...labels, ...extra, result: "pass" }, passes);
    f.add(
      family,
      "counter",
      `Scenario rate ${family.slice(16)}: samples by result.`,
      `${family}_total`,
      { ...labels, ...extra, result: "fail" },
      total - passes,
    );
  }
  for (const [key, h] of [...custom.trends].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const { family, extra } = customName(key);
    if (h.count === 0) continue;
    // A trend's values are kept ×1000 (ms as µs); one that is not a time is exported as itself, not as seconds.
    if (unitless.has(family)) f.histogram(family, `Scenario trend ${family.slice(16)} (not a time).`, { ...labels, ...extra }, h, 1e3);
    else f.histogram(`${family}_seconds`, `Scenario trend ${family.slice(16)}.`, { ...labels, ...extra }, h);
  }
}

/**
 * `false_positives{type:revoked}` → family `edgeload_custom_false_positives`, label
 * type="revoked"; a threshold's sub-metric (`checks{myTag:x}`, core/metrics/sub-metrics.ts)
 * likewise, each tag a label (renamed `tag_<name>` where Prometheus or our own labels would
 * not take it as it is).
 */
function customName(key: string): { family: string; extra: Labels } {
  const parsed = parseMetricKey(key);
  const open = key.indexOf("{");
  const base = (parsed.ok ? parsed.value.metric : open === -1 ? key : key.slice(0, open)).replace(/[^a-zA-Z0-9_]/g, "_");
  const extra: Record<string, string> = {};
  for (const [tag, value] of parsed.ok ? parsed.value.tags : []) {
    const clean = tag.replace(/[^a-zA-Z0-9_]/g, "_");
    extra[/^[a-zA-Z_]/.test(clean) && !RESERVED_LABELS.has(clean) ? clean : `tag_${clean}`] = value;
  }
  return { family: `edgeload_custom_${base}`, extra };
}

/** Labels the writer sets itself, which a sub-metric's tag may not take over. */
const RESERVED_LABELS: ReadonlySet<string> = new Set(["run_id", "region", "step", "result", "le", "status"]);

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
}

function formatValue(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  return String(n);
}
