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
 *               | "value"                                          (gauges: the last value)
 *   operator    = "<" | "<=" | ">" | ">=" | "==" | "===" | "!="
 *
 * A metric key may carry any tag filter k6 accepts (metric-key.ts reads it by k6's rules), as
 * a k6 sub-metric. edgeload's own dimensions are read off the run's merged cells:
 * `{step:login}`, `{region:weur}`, `{scenario:admin}` in a run of several named scenarios
 * (its step filter then names the scenario's own step), and for custom metrics
 * `{type:revoked}` (the series a scenario records per token type). Any other tag —
 * `{name:…}`, `{group:::login}`, `{status:200}`, a script's own `{staticAsset:yes}` — makes
 * the threshold a recorded sub-metric (`subMetric`): each shard records the samples whose
 * tags hold all the filter's pairs under that name (sub-metrics.ts), at most
 * MAX_SUB_METRICS of them per run, so what a run keeps is bounded by its thresholds, never
 * by the tag values its requests carry. Custom metrics (counters, rates, trends, gauges) are
 * known from the scenario. Trend values are milliseconds, as in k6.
 *
 * Gauges take `value` alone, as k6 checks when a test starts: a custom Gauge's last value
 * (gauge-last.ts says which across shards), filtered by the cells only; and k6's `vus` and
 * `vus_max`, without filters, read off the plan where it fixes them (core/run/vu-gauges.ts).
 */
import { parseDurationMs } from "../spec/duration.ts";
import { parseMetricKey, subMetricName } from "./metric-key.ts";

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
  vus: "gauge",
  vus_max: "gauge",
} as const;

export type MetricName = keyof typeof METRIC_KINDS;
export type MetricKind = (typeof METRIC_KINDS)[MetricName];
/** Tag filters read off the run's merged cells rather than recorded as sub-metrics (`type`: custom metrics only). */
const CELL_TAGS: ReadonlySet<string> = new Set(["step", "region", "scenario"]);
/** Distinct recorded sub-metrics a run may name: each costs a series in every window of every shard. */
export const MAX_SUB_METRICS = 100;
export type Operator = "<" | "<=" | ">" | ">=" | "==" | "===" | "!=";

export type Aggregation =
  | { readonly kind: "avg" | "min" | "max" | "med" }
  | { readonly kind: "percentile"; readonly p: number }
  | { readonly kind: "rate" }
  | { readonly kind: "count" }
  | { readonly kind: "value" };

export interface Threshold {
  /** The metric key as written, e.g. `http_req_duration{step:login}`. */
  readonly key: string;
  /** The expression as written, e.g. `p(95)<300`. */
  readonly source: string;
  /** A built-in metric (METRIC_KINDS) or a custom metric of the run's scenario. */
  readonly metric: string;
  readonly kind: MetricKind;
  readonly custom: boolean;
  /** The key's tag filters, by tag (k6 matches a sample holding all of them). */
  readonly tags: Readonly<Record<string, string>>;
  /**
   * The recorded sub-metric this threshold reads (`http_req_duration{name:home}`), when its
   * filter names a tag beyond the run's cells (step, region, scenario; type for custom
   * metrics); null when the cells alone select its samples.
   */
  readonly subMetric: string | null;
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

const EXPRESSION = /^\s*(avg|min|max|med|rate|count|value|p\(\s*(\d+(?:\.\d+)?)\s*\))\s*(<=|>=|===|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/;
const AGGREGATIONS_BY_KIND: Record<MetricKind, readonly string[]> = {
  trend: ["avg", "min", "max", "med", "percentile"],
  rate: ["rate"],
  counter: ["count", "rate"],
  gauge: ["value"],
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
  const subMetrics = new Set<string>();
  for (const [key, entries] of Object.entries(input)) {
    const parsedKey = thresholdKey(key, custom);
    if (!parsedKey.ok) {
      errors.push(`thresholds.${key}: ${parsedKey.error}`);
      continue;
    }
    const { metric, tags, subMetric } = parsedKey.value;
    const isCustom = Object.hasOwn(custom, metric);
    const kind = isCustom ? custom[metric]! : METRIC_KINDS[metric as MetricName];
    if (subMetric !== null) subMetrics.add(subMetric);
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
        subMetric,
        ...parsed.value,
        abortOnFail: typeof entry === "string" ? false : entry.abortOnFail === true,
        delayAbortEvalMs: delay,
      });
    });
  }
  if (subMetrics.size > MAX_SUB_METRICS) {
    errors.push(
      `thresholds: ${subMetrics.size} tag-filtered sub-metrics beyond step, region and scenario (at most ${MAX_SUB_METRICS}: each is recorded in every window of every shard)`,
    );
  }
  return errors.length ? { ok: false, errors } : { ok: true, value: out };
}

export interface ThresholdKey {
  readonly metric: string;
  readonly tags: Readonly<Record<string, string>>;
  readonly subMetric: string | null;
}

/**
 * k6 metrics of connection setup that a Worker cannot measure: refused by name, so a
 * threshold on one never passes on a zero (a script's `res.timings.connecting` and
 * `tls_handshaking` are 0, as k6 reports for a request on a reused connection; docs/k6.md).
 */
const CONNECTION_SETUP =
  "k6 times connection setup apart, which a Worker's fetch() does not expose (the runtime pools its connections); that time is inside http_req_waiting and http_req_duration";
const UNMEASURED_K6_METRICS: Readonly<Record<string, string>> = {
  http_req_connecting: CONNECTION_SETUP,
  http_req_tls_handshaking: CONNECTION_SETUP,
  http_req_blocked: CONNECTION_SETUP,
};

/**
 * A threshold's metric key: a known metric (built-in, or one of `custom`) with k6's tag
 * filters, and the sub-metric it records when a filter goes beyond the run's cells.
 */
export function thresholdKey(key: string, custom: Readonly<Record<string, MetricKind>> = {}): { ok: true; value: ThresholdKey } | { ok: false; error: string } {
  const parsed = parseMetricKey(key);
  if (!parsed.ok) return parsed;
  const { metric, tags: pairs } = parsed.value;
  const isCustom = Object.hasOwn(custom, metric);
  if (Object.hasOwn(UNMEASURED_K6_METRICS, metric) && !isCustom) return { ok: false, error: `${metric}: ${UNMEASURED_K6_METRICS[metric]}` };
  if (!Object.hasOwn(METRIC_KINDS, metric) && !isCustom) {
    const known = [...Object.keys(METRIC_KINDS), ...Object.keys(custom)].join(", ");
    return { ok: false, error: `unknown metric ${metric}; expected one of ${known}, with optional k6 tag filters {tag:value,…}` };
  }
  const tags = Object.fromEntries(pairs);
  const sampleTags = pairs.filter(([k]) => k !== "step" && k !== "region");
  const beyondCells = sampleTags.some(([k]) => !CELL_TAGS.has(k) && !(isCustom && k === "type"));
  const gaugeFilter =
    (isCustom ? custom[metric] : METRIC_KINDS[metric as MetricName]) === "gauge" ? gaugeFilterProblem(metric, isCustom, pairs.length, beyondCells) : null;
  if (gaugeFilter) return { ok: false, error: gaugeFilter };
  return { ok: true, value: { metric, tags, subMetric: beyondCells ? subMetricName(metric, sampleTags) : null } };
}

/**
 * Why a gauge's threshold cannot take its tag filter, or null: `vus` and `vus_max` are read off
 * the plan, which has no tags; a custom gauge keeps one last value per step, region and
 * scenario, not one per any tag a sample carries.
 */
function gaugeFilterProblem(metric: string, isCustom: boolean, filters: number, beyondCells: boolean): string | null {
  if (!isCustom && filters > 0) return `${metric}: the run's VU count has no tags here (it is read off the plan); give the threshold without a filter`;
  if (isCustom && beyondCells) return `${metric}: a gauge's last value is kept per step, region and scenario only; filter on those, or on none`;
  return null;
}

function parseExpression(source: string, kind: MetricKind, path: string): ParseResult<Pick<Threshold, "aggregation" | "operator" | "value">> {
  const m = typeof source === "string" ? EXPRESSION.exec(source) : null;
  if (!m) return { ok: false, errors: [`${path}: "${source}" is not a threshold like "p(95)<300" or "rate<0.01"`] };
  const [, agg, p, operator, value] = m;
  const aggregation: Aggregation =
    p !== undefined ? { kind: "percentile", p: Number(p) } : { kind: agg as "avg" | "min" | "max" | "med" | "rate" | "count" | "value" };
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
