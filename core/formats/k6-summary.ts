/**
 * k6 summaries as `edgeload crosscheck` imports them: four formats, detected by shape,
 * validated (every problem named with its path) and reduced to the figures a crosscheck
 * compares (core/results/crosscheck.ts).
 *
 * | format            | what it is                                                      | recognised by                              |
 * |-------------------|-----------------------------------------------------------------|--------------------------------------------|
 * | `summary-export`  | `k6 run --summary-export file.json`                             | `metrics.http_reqs.count` at the top level |
 * | `handle-summary`  | the `data` object handleSummary receives (k6-scripts write it)  | `metrics.<name>.values` and `.type`        |
 * | `machine-readable`| `--new-machine-readable-summary` (k6 ≥ 1.0, schema version 1.x)  | `version` and a `results.metrics` list     |
 * | `k6-cloud`        | a k6 Cloud test run with its aggregate queries (k6-scripts/README.md) | `test_run` and `aggregates`          |
 *
 * The load's own figures come from the `{scenario:NAME}` sub-metrics when the summary has
 * exactly one such scenario (edgeload's k6 scripts declare them), so the seed download in
 * setup() is left out; otherwise from the totals. Durations are in milliseconds.
 */
import type { Problem } from "../spec/input-problem.ts";
import type { Crosscheck, Latency, LoadFigures } from "../results/crosscheck.ts";

export const K6_FORMATS = ["summary-export", "handle-summary", "machine-readable", "k6-cloud"] as const;
export type K6Format = (typeof K6_FORMATS)[number];

export type K6Import = { ok: true; format: K6Format; figures: LoadFigures } | { ok: false; problems: Problem[] };

/** A stored import as the API shows it (POST and GET /v1/runs/:id/crosscheck). */
export interface K6ImportView {
  readonly id: string;
  readonly runId: string;
  readonly format: K6Format;
  readonly importedAt: string;
  /** Null (with `problems`) for a stored summary the current parser no longer reads. */
  readonly comparison: Crosscheck | null;
  readonly problems?: readonly Problem[];
}

const WHAT_IT_TAKES =
  "expected a k6 summary: --summary-export's file ({metrics, root_group}), handleSummary's data ({metrics: {name: {type, values}}, state}), " +
  "the machine-readable summary ({version, results: {metrics: [...]}}) or a k6 Cloud test-run export ({test_run, aggregates})";

type Values = Readonly<Record<string, unknown>>;
/** One metric in a common shape: its values with trend stats keyed as in the classic form (`med`, `p(95)`). */
type MetricMap = ReadonlyMap<string, { readonly type: string | null; readonly values: Values }>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Which format a parsed document is, or null. */
export function detectK6Format(doc: unknown): K6Format | null {
  if (!isObject(doc)) return null;
  if (isObject(doc.test_run) && Array.isArray(doc.aggregates)) return "k6-cloud";
  if (typeof doc.version === "string" && isObject(doc.results) && Array.isArray(doc.results.metrics)) return "machine-readable";
  if (!isObject(doc.metrics)) return null;
  const reqs = doc.metrics.http_reqs ?? Object.values(doc.metrics)[0];
  if (isObject(reqs) && isObject(reqs.values)) return "handle-summary";
  return "summary-export";
}

/**
 * Parses and validates a k6 summary of any supported format.
 *
 * @example parseK6Summary(JSON.parse(await readFile("summary.json", "utf8")))
 *   // → { ok: true, format: "handle-summary", figures: { requests: 3001, latency: { p50: 21.4, … }, … } }
 */
export function parseK6Summary(doc: unknown): K6Import {
  if (isObject(doc) && isObject(doc.edgeload)) {
    return {
      ok: false,
      problems: [{ field: "edgeload", detail: "this is an edgeload run summary, not a k6 one: crosscheck compares a run with what k6 measured" }],
    };
  }
  const format = detectK6Format(doc);
  if (!format) return { ok: false, problems: [{ field: "(body)", detail: WHAT_IT_TAKES }] };
  const problems: Problem[] = [];
  const figures =
    format === "k6-cloud" ? cloudFigures(doc as Record<string, unknown>, problems) : localFigures(format, doc as Record<string, unknown>, problems);
  // A missing metric is reported once, not once per figure read from it.
  const unique = [...new Map(problems.map((p) => [`${p.field}\u0000${p.detail}`, p])).values()];
  return unique.length || !figures ? { ok: false, problems: unique } : { ok: true, format, figures };
}

/** The three formats k6 writes itself, brought to one metric map. */
function metricMap(format: Exclude<K6Format, "k6-cloud">, doc: Record<string, unknown>, problems: Problem[]): MetricMap {
  const out = new Map<string, { type: string | null; values: Values }>();
  if (format === "machine-readable") {
    (doc.results as { metrics: unknown[] }).metrics.forEach((m, i) => {
      if (!isObject(m) || typeof m.name !== "string" || !isObject(m.values))
        return problems.push({ field: `results.metrics[${i}]`, detail: "must be {name, type, values}" });
      // This form names trend stats p90, p95 and counts a rate as matches of total.
      const values: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(m.values)) values[/^p\d/.test(k) ? `p(${k.slice(1)})` : k] = v;
      if (m.type === "rate" && typeof m.values.matches === "number" && typeof m.values.total === "number") {
        Object.assign(values, { passes: m.values.matches, fails: m.values.total - m.values.matches });
      }
      out.set(m.name, { type: typeof m.type === "string" ? m.type : null, values });
    });
    return out;
  }
  for (const [name, m] of Object.entries(doc.metrics as Record<string, unknown>)) {
    if (!isObject(m)) {
      problems.push({ field: `metrics.${name}`, detail: "must be an object" });
      continue;
    }
    if (format === "handle-summary") {
      if (!isObject(m.values))
        problems.push({ field: `metrics.${name}.values`, detail: "must be an object (handleSummary's data keeps each metric's figures under values)" });
      else out.set(name, { type: typeof m.type === "string" ? m.type : null, values: m.values });
    } else {
      out.set(name, { type: null, values: m });
    }
  }
  return out;
}

/** The single `{scenario:NAME}` sub-metric suffix, or "" for the totals. */
function loadSuffix(metrics: MetricMap): string {
  const scenarios = [...metrics.keys()].filter((k) => /^http_reqs\{scenario:[^}]+\}$/.test(k));
  return scenarios.length === 1 ? scenarios[0]!.slice("http_reqs".length) : "";
}

function localFigures(format: Exclude<K6Format, "k6-cloud">, doc: Record<string, unknown>, problems: Problem[]): LoadFigures | null {
  const metrics = metricMap(format, doc, problems);
  const base = format === "machine-readable" ? "results.metrics" : "metrics";
  const at = (name: string) => (format === "machine-readable" ? `${base}[name=${name}]` : `${base}.${name}`);
  const suffix = loadSuffix(metrics);
  const valuesAt = format === "summary-export" ? "" : "values.";
  const number = (name: string, key: string, required: boolean): number | null => {
    const m = metrics.get(name);
    const v = m?.values[key];
    if (typeof v === "number" && Number.isFinite(v)) return v;
    if (!m && required) problems.push({ field: at(name), detail: "is missing (k6 reports it whenever the test sent HTTP requests)" });
    else if (m && (required || v !== undefined))
      problems.push({ field: `${at(name)}.${valuesAt}${key}`, detail: v === undefined ? "is missing" : `must be a number, not ${JSON.stringify(v)}` });
    return null;
  };
  const latency = (name: string, required: boolean): Latency => ({
    p50: number(name, "med", required),
    p90: number(name, "p(90)", false),
    p95: number(name, "p(95)", required),
    p99: number(name, "p(99)", false),
    max: number(name, "max", required),
  });

  // The totals must be sound whatever is compared; the load's own sub-metrics, when there
  // are some, are what is compared.
  const totalRequests = number("http_reqs", "count", true);
  const totalLatency = latency("http_req_duration", true);
  const requests = suffix ? number(`http_reqs${suffix}`, "count", true) : totalRequests;
  const durationS =
    format === "handle-summary"
      ? seconds((doc.state as Record<string, unknown> | undefined)?.testRunDurationMs, 1000)
      : format === "machine-readable"
        ? seconds((doc.config as Record<string, unknown> | undefined)?.duration, 1)
        : null;
  const rate = number(`http_reqs${suffix}`, "rate", false) ?? (requests !== null && durationS ? requests / durationS : null);
  const failedName = `http_req_failed${suffix}`;
  const failed = number(failedName, "passes", false);
  const errorRate = number(failedName, format === "summary-export" ? "value" : "rate", false);
  const overall = suffix ? latency(`http_req_duration${suffix}`, true) : totalLatency;
  const steps: Record<string, { requests: number | null; latency: Latency }> = {};
  for (const name of metrics.keys()) {
    const step = /^http_req_duration\{step:([^}]+)\}$/.exec(name)?.[1];
    if (step && step !== "seed") steps[step] = { requests: number(`http_reqs{step:${step}}`, "count", false), latency: latency(name, false) };
  }
  if (problems.length) return null;
  return { requests, ratePerS: rate, errorRate, failed, durationS, latency: overall, steps, dropped: number("dropped_iterations", "count", false) ?? 0 };
}

function seconds(v: unknown, perSecond: number): number | null {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? v / perSecond : null;
}

/** `http_req_duration{step="verify"}` → ["http_req_duration", "verify"]. */
function cloudMetric(selector: string): [name: string, step: string | null] {
  const m = /^([a-z_]+)(?:\{step=["']([^"']+)["']\})?$/.exec(selector.trim());
  return m ? [m[1]!, m[2] ?? null] : [selector, null];
}

/** The one value of a query_aggregate_k6 response (Prometheus-like vector). */
function aggregateValue(response: unknown): number | null {
  const result = isObject(response) && isObject(response.data) && Array.isArray(response.data.result) ? response.data.result : null;
  const first = result?.[0];
  if (!isObject(first)) return null;
  const pair = Array.isArray(first.value) ? first.value : Array.isArray(first.values) ? first.values.at(-1) : null;
  const raw = Array.isArray(pair) ? pair[1] : null;
  const n = typeof raw === "string" ? Number(raw) : raw;
  return typeof n === "number" && Number.isFinite(n) ? n : null;
}

const QUANTILE_STAT: Readonly<Record<string, keyof Latency>> = { "0.5": "p50", "0.50": "p50", "0.9": "p90", "0.90": "p90", "0.95": "p95", "0.99": "p99" };

function cloudFigures(doc: Record<string, unknown>, problems: Problem[]): LoadFigures | null {
  const run = doc.test_run as Record<string, unknown>;
  const empty = (): Latency => ({ p50: null, p90: null, p95: null, p99: null, max: null });
  const overall = empty();
  const steps: Record<string, { requests: number | null; latency: Latency }> = {};
  let requests: number | null = null;
  let rate: number | null = null;
  let errorRate: number | null = null;
  (doc.aggregates as unknown[]).forEach((a, i) => {
    if (!isObject(a) || typeof a.metric !== "string" || typeof a.query !== "string") {
      return problems.push({ field: `aggregates[${i}]`, detail: "must be {metric, query, response} (one query_aggregate_k6 call and its answer)" });
    }
    const value = aggregateValue(a.response);
    if (value === null)
      return problems.push({
        field: `aggregates[${i}].response`,
        detail: `no value: expected query_aggregate_k6's answer ({status, data: {result: [{values: [[time, value]]}]}}) for ${a.query} of ${a.metric}`,
      });
    const [name, step] = cloudMetric(a.metric);
    const quantile = /^histogram_quantile\((0?\.\d+)\)$/.exec(a.query)?.[1];
    const stat = quantile ? QUANTILE_STAT[quantile.replace(/^\./, "0.")] : a.query === "max" ? "max" : undefined;
    if (name === "http_req_duration" && stat) {
      const target = step ? (steps[step] ??= { requests: null, latency: empty() }).latency : overall;
      (target as Record<keyof Latency, number | null>)[stat] = a.unit === "s" ? value * 1000 : value;
    } else if (name === "http_reqs" && a.query === "increase") {
      if (step) (steps[step] ??= { requests: null, latency: empty() }).requests = value;
      else requests = value;
    } else if (name === "http_reqs" && a.query === "rate" && !step) rate = value;
    else if (name === "http_req_failed" && a.query === "ratio" && !step) errorRate = value;
  });
  const started = Date.parse(String(run.started ?? run.created ?? ""));
  const ended = Date.parse(String(run.ended ?? ""));
  const durationS = Number.isFinite(started) && Number.isFinite(ended) && ended > started ? (ended - started) / 1000 : null;
  if (requests === null) problems.push({ field: "aggregates", detail: 'needs http_reqs with query "increase" (the request count)' });
  for (const stat of ["p50", "p95"] as const) {
    if (overall[stat] === null)
      problems.push({ field: "aggregates", detail: `needs http_req_duration with query "histogram_quantile(${stat === "p50" ? "0.50" : "0.95"})"` });
  }
  if (problems.length) return null;
  return {
    requests,
    ratePerS: rate ?? (requests !== null && durationS ? requests / durationS : null),
    errorRate,
    failed: errorRate !== null && requests !== null ? Math.round(errorRate * requests) : null,
    durationS,
    latency: overall,
    steps,
    dropped: 0,
  };
}

/**
 * What to store of an imported summary: everything but setup()'s data (a seed set:
 * credentials) and the script's source.
 */
export function storableK6Summary(doc: Record<string, unknown>): Record<string, unknown> {
  const { setup_data: _setup, ...rest } = doc;
  if (isObject(rest.config) && "script" in rest.config) {
    const { script: _script, ...config } = rest.config;
    return { ...rest, config };
  }
  return rest;
}
