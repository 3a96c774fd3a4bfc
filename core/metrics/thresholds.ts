/**
 * k6 thresholds: parsed into typed expressions, evaluated against merged metrics. A spec's
 * are parsed when it is validated, and again once per run into a ThresholdSet, which the
 * RunCoordinator keeps from the run's creation (or its restore after eviction) to its end.
 *
 * Grammar (k6's, https://grafana.com/docs/k6/latest/using-k6/thresholds/):
 *
 *   threshold   = aggregation operator number
 *   aggregation = "avg" | "min" | "max" | "med" | "p(" number ")"   (trends)
 *               | "rate"                                           (rates, counters)
 *               | "count"                                          (counters)
 *   operator    = "<" | "<=" | ">" | ">=" | "==" | "===" | "!="
 *
 * A metric key may carry tag filters like k6 sub-metrics: `http_req_duration{step:login}`
 * or `{region:weur}`, `{scenario:admin}` in a run of several named scenarios (its step
 * filter then names the scenario's own step), and for a scenario's custom metrics `{type:revoked}` (the token type
 * they were recorded for). Custom metrics (counters, rates, trends) are known from the
 * scenario. Trend values are milliseconds, as in k6.
 */
import { parseDurationMs } from "../spec/duration.ts";

export const METRIC_KINDS = {
  http_req_duration: "trend",
  http_req_waiting: "trend",
  http_req_corrected: "trend",
  schedule_lag: "trend",
  client_delay: "trend",
  http_req_failed: "rate",
  checks: "rate",
  http_reqs: "counter",
  iterations: "counter",
  dropped_iterations: "counter",
} as const;

export type MetricName = keyof typeof METRIC_KINDS;
export type MetricKind = (typeof METRIC_KINDS)[MetricName];
export type TagFilter = "step" | "region" | "type" | "scenario";
export type Operator = "<" | "<=" | ">" | ">=" | "==" | "===" | "!=";

export type Aggregation =
  | { readonly kind: "avg" | "min" | "max" | "med" }
  | { readonly kind: "percentile"; readonly p: number }
  | { readonly kind: "rate" }
  | { readonly kind: "count" };

export interface Threshold {
  /** The metric key as written, e.g. `http_req_duration{step:login}`. */
  readonly key: string;
  /** The expression as written, e.g. `p(95)<300`. */
  readonly source: string;
  /** A built-in metric (METRIC_KINDS) or a custom metric of the run's scenario. */
  readonly metric: string;
  readonly kind: MetricKind;
  readonly custom: boolean;
  readonly tags: Readonly<Partial<Record<TagFilter, string>>>;
  readonly aggregation: Aggregation;
  readonly operator: Operator;
  readonly value: number;
  readonly abortOnFail: boolean;
  readonly delayAbortEvalMs: number;
}

/**
 * A run's thresholds, parsed once — when the run is created or restored — and then only
 * evaluated: at each tick (abortOnFail), in each live status and once at the end, as k6
 * parses them when the test is set up.
 */
export interface ThresholdSet {
  readonly thresholds: readonly Threshold[];
  /** Whether any has abortOnFail: only then are they evaluated while the run goes. */
  readonly abortOnFail: boolean;
  /**
   * Why the spec's thresholds could not be parsed, if they could not: a run's verdict is
   * then never a pass (an empty set would read as one). Absent or empty: they parsed.
   */
  readonly problems?: readonly string[];
}

export function thresholdSet(thresholds: readonly Threshold[], problems: readonly string[] = []): ThresholdSet {
  return { thresholds, abortOnFail: thresholds.some((t) => t.abortOnFail), ...(problems.length ? { problems } : {}) };
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/** A metric name as k6 accepts it (letters, digits and `_`, not starting with a digit), then optional tag filters. */
const KEY = /^([A-Za-z_][A-Za-z0-9_]{0,127})(?:\{([^}]*)\})?$/;
const EXPRESSION = /^\s*(avg|min|max|med|rate|count|p\(\s*(\d+(?:\.\d+)?)\s*\))\s*(<=|>=|===|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/;
const AGGREGATIONS_BY_KIND: Record<MetricKind, readonly string[]> = {
  trend: ["avg", "min", "max", "med", "percentile"],
  rate: ["rate"],
  counter: ["count", "rate"],
};

/** One threshold entry as accepted in a spec: a string or k6's object form. */
export type ThresholdInput = string | { threshold: string; abortOnFail?: boolean; delayAbortEval?: string | number };

/**
 * Parses a spec's `thresholds` map, collecting every problem with its path. `custom` are
 * the custom metrics of the run's scenario, by kind.
 */
export function parseThresholds(input: Record<string, readonly ThresholdInput[]>, custom: Readonly<Record<string, MetricKind>> = {}): ParseResult<Threshold[]> {
  const errors: string[] = [];
  const out: Threshold[] = [];
  for (const [key, entries] of Object.entries(input)) {
    const keyMatch = KEY.exec(key);
    const metric = keyMatch?.[1];
    const isCustom = metric !== undefined && Object.hasOwn(custom, metric);
    if (!keyMatch || !metric || !(Object.hasOwn(METRIC_KINDS, metric) || isCustom)) {
      const known = [...Object.keys(METRIC_KINDS), ...Object.keys(custom)].join(", ");
      errors.push(`thresholds.${key}: unknown metric; expected one of ${known} with optional {step:…}, {region:…}, {scenario:…} or {type:…}`);
      continue;
    }
    const kind = isCustom ? custom[metric]! : METRIC_KINDS[metric as MetricName];
    const tags = parseTags(keyMatch[2], `thresholds.${key}`, errors);
    if (tags.type !== undefined && !isCustom) errors.push(`thresholds.${key}: {type:…} applies to a scenario's custom metrics only`);
    entries.forEach((entry, i) => {
      const path = `thresholds.${key}[${i}]`;
      if (typeof entry !== "string" && (typeof entry !== "object" || entry === null)) {
        errors.push(`${path}: must be a string like "p(95)<300" or an object {threshold, abortOnFail, delayAbortEval}`);
        return;
      }
      const source = typeof entry === "string" ? entry : entry.threshold;
      const parsed = parseExpression(source, kind, path);
      if (!parsed.ok) {
        errors.push(...parsed.errors);
        return;
      }
      const delay = typeof entry === "string" ? 0 : parseDurationMs(entry.delayAbortEval ?? 0);
      if (delay === undefined) {
        errors.push(`${path}.delayAbortEval: not a duration (use e.g. "10s")`);
        return;
      }
      out.push({
        key,
        source,
        metric,
        kind,
        custom: isCustom,
        tags,
        ...parsed.value,
        abortOnFail: typeof entry === "string" ? false : entry.abortOnFail === true,
        delayAbortEvalMs: delay,
      });
    });
  }
  return errors.length ? { ok: false, errors } : { ok: true, value: out };
}

/** A metric key's name and tag filters (`http_req_duration{step:login}`), or null when malformed. */
export function parseMetricKey(key: string): { metric: string; tags: Partial<Record<TagFilter, string>> } | null {
  const match = KEY.exec(key);
  if (!match) return null;
  const errors: string[] = [];
  const tags = parseTags(match[2], key, errors);
  return errors.length ? null : { metric: match[1]!, tags };
}

function parseTags(raw: string | undefined, path: string, errors: string[]): Partial<Record<TagFilter, string>> {
  const tags: Partial<Record<TagFilter, string>> = {};
  if (raw === undefined || raw.trim() === "") return tags;
  for (const part of raw.split(",")) {
    const [name, value] = part.split(":").map((s) => s.trim());
    if ((name === "step" || name === "region" || name === "type" || name === "scenario") && value) tags[name] = value;
    else errors.push(`${path}: tag filter "${part}" must be step:<name>, region:<hint>, scenario:<name> or type:<token type>`);
  }
  return tags;
}

function parseExpression(source: string, kind: MetricKind, path: string): ParseResult<Pick<Threshold, "aggregation" | "operator" | "value">> {
  const m = typeof source === "string" ? EXPRESSION.exec(source) : null;
  if (!m) return { ok: false, errors: [`${path}: "${source}" is not a threshold like "p(95)<300" or "rate<0.01"`] };
  const [, agg, p, operator, value] = m;
  const aggregation: Aggregation = p !== undefined ? { kind: "percentile", p: Number(p) } : { kind: agg as "avg" | "min" | "max" | "med" | "rate" | "count" };
  if (aggregation.kind === "percentile" && !(aggregation.p >= 0 && aggregation.p <= 100)) {
    return { ok: false, errors: [`${path}: percentile ${p} must be between 0 and 100`] };
  }
  if (!AGGREGATIONS_BY_KIND[kind].includes(aggregation.kind)) {
    const allowed = AGGREGATIONS_BY_KIND[kind].map((a) => (a === "percentile" ? "p(N)" : a)).join(", ");
    return { ok: false, errors: [`${path}: "${agg}" does not apply to a ${kind} metric; use ${allowed}`] };
  }
  return { ok: true, value: { aggregation, operator: operator as Operator, value: Number(value) } };
}

export function compare(observed: number, operator: Operator, limit: number): boolean {
  switch (operator) {
    case "<":
      return observed < limit;
    case "<=":
      return observed <= limit;
    case ">":
      return observed > limit;
    case ">=":
      return observed >= limit;
    case "==":
    case "===":
      return observed === limit;
    case "!=":
      return observed !== limit;
  }
}

/** A threshold held, broke, or could not be told: its metric has no samples (yet). */
export type ThresholdState = "passed" | "failed" | "no-data";

export interface ThresholdOutcome {
  readonly key: string;
  readonly source: string;
  /** The observed aggregate, or null when the metric has no samples yet. */
  readonly observed: number | null;
  readonly state: ThresholdState;
  readonly abortOnFail: boolean;
}

/** Looks up an aggregate of a (possibly tag-filtered) metric; null when there is no data. */
export type AggregateLookup = (t: Threshold) => number | null;

/**
 * Evaluates thresholds. A threshold whose metric has no samples is `no-data`, neither
 * passed nor failed: k6 passes it, but a limit nobody measured is not a result, and the
 * run's verdict says so (core/run/run-verdict.ts). A declared counter that stayed at 0 is
 * data (aggregate.ts returns 0 for it, not null).
 */
export function evaluateThresholds(thresholds: readonly Threshold[], lookup: AggregateLookup): ThresholdOutcome[] {
  return thresholds.map((t) => {
    const observed = lookup(t);
    const state: ThresholdState = observed === null ? "no-data" : compare(observed, t.operator, t.value) ? "passed" : "failed";
    return { key: t.key, source: t.source, observed, state, abortOnFail: t.abortOnFail };
  });
}

/** Whether a failing abortOnFail threshold should stop the run now (`elapsedMs` since T0). */
export function shouldAbort(thresholds: readonly Threshold[], outcomes: readonly ThresholdOutcome[], elapsedMs: number): Threshold | undefined {
  return thresholds.find((t, i) => t.abortOnFail && outcomes[i]!.state === "failed" && elapsedMs >= t.delayAbortEvalMs);
}
