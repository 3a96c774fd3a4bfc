/**
 * The summary's `metrics`, in k6's `--summary-export` layout so k6 tooling reads it: the
 * built-in metrics, the sub-metrics the thresholds name, and the run's custom metrics, each
 * with its thresholds' verdicts. Apart from summary.ts because this half follows k6's
 * layout key by key, while the `edgeload` half is edgeload's own.
 */
import type { MetricStats } from "../metrics/metric-stats.ts";
import { METRIC_KINDS, thresholdKey, type MetricName, type ThresholdOutcome } from "../metrics/thresholds.ts";
import { EXPECTED_RESPONSE_DURATION } from "../metrics/sub-metrics.ts";
import { ITERATION_DURATION } from "../metrics/aggregate.ts";
import { round3 } from "../metrics/rounding.ts";
import { isScriptRun } from "../spec/script-schema.ts";
import type { RunSpec } from "../spec/types.ts";
import type { RunTotals } from "./run-totals.ts";
import { builtInValues, seriesSummary, type CustomMetricSummary } from "./summary-figures.ts";
import { selectTagged } from "./run-thresholds.ts";
import { vuGauges } from "./vu-gauges.ts";

/**
 * Every metric of the run, keyed as k6 keys them: built-ins first, then the thresholds'
 * sub-metrics (`http_req_duration{step:login}`), then `customFigures` (the run's custom
 * metrics, summary-figures.ts customMetricsSummary). `all` is the whole run's merged stats.
 */
export function k6Metrics(
  spec: RunSpec,
  totals: RunTotals,
  all: MetricStats,
  elapsedS: number,
  outcomes: readonly ThresholdOutcome[],
  customFigures: Readonly<Record<string, CustomMetricSummary>>,
): Record<string, unknown> {
  const metrics = builtInMetrics(spec, all, elapsedS, outcomes);
  addThresholdSubMetrics(metrics, spec, totals, elapsedS, outcomes);
  for (const [key, value] of Object.entries(customFigures)) metrics[key] = { ...value, ...failedByMetric(outcomes, key) };
  return metrics;
}

/**
 * A metric's thresholds as k6 lays them out: one boolean, "failed", per threshold. A
 * threshold without data did not fail, and the verdict (edgeload.verdict) says the run
 * could not pass because of it.
 */
function failedByMetric(outcomes: readonly ThresholdOutcome[], metricKey: string) {
  const entries = outcomes.filter((o) => o.key === metricKey);
  return entries.length ? { thresholds: Object.fromEntries(entries.map((o) => [o.source, o.state === "failed"])) } : {};
}

/** k6's built-in metrics with their thresholds' verdicts; one without samples is left out. */
function builtInMetrics(spec: RunSpec, all: MetricStats, elapsedS: number, outcomes: readonly ThresholdOutcome[]): Record<string, unknown> {
  // k6's summaryTrendStats: the trend figures the run asked for beside the usual ones.
  const extra = spec.summaryTrendStats ?? [];
  const metric = (name: MetricName) => {
    const values = builtInValues(all, name, elapsedS, extra);
    return values ? { ...values, ...failedByMetric(outcomes, name) } : undefined;
  };
  const metrics: Record<string, unknown> = {
    http_reqs: metric("http_reqs"),
    iterations: metric("iterations"),
    dropped_iterations: metric("dropped_iterations"),
    http_req_duration: metric("http_req_duration"),
    http_req_waiting: metric("http_req_waiting"),
    http_req_failed: metric("http_req_failed"),
    data_received: { count: all.counters.bytesReceived, rate: round3(all.counters.bytesReceived / elapsedS) },
    checks: metric("checks"),
  };
  // k6's vus and vus_max where the plan fixes them (vu-gauges.ts), with their thresholds' verdicts.
  for (const [name, gauge] of Object.entries(vuGauges(spec))) metrics[name] = { ...gauge, ...failedByMetric(outcomes, name) };
  // The sub-metric k6 shows for every script (its shards record it, core/metrics/sub-metrics.ts).
  if (isScriptRun(spec) && !(EXPECTED_RESPONSE_DURATION.name in metrics)) {
    metrics[EXPECTED_RESPONSE_DURATION.name] = withoutType(
      seriesSummary(all.hasCustom ? all.custom : null, EXPECTED_RESPONSE_DURATION.name, "trend", elapsedS, extra),
    );
  }
  // A k6 script's iteration_duration (the shards time its iterations), with k6's trend figures.
  metrics[ITERATION_DURATION] = withoutType(seriesSummary(all.hasCustom ? all.custom : null, ITERATION_DURATION, "trend", elapsedS, extra));
  for (const [k, v] of Object.entries(metrics)) if (v === undefined) delete metrics[k];
  return metrics;
}

/**
 * Tag-filtered threshold keys are k6 sub-metrics, e.g. "http_req_duration{step:login}",
 * with their own figures; a key with no expression still shows them, as in k6. A key the
 * thresholds evaluated without figures gets its verdicts alone.
 */
function addThresholdSubMetrics(
  metrics: Record<string, unknown>,
  spec: RunSpec,
  totals: RunTotals,
  elapsedS: number,
  outcomes: readonly ThresholdOutcome[],
): void {
  const extra = spec.summaryTrendStats ?? [];
  for (const key of Object.keys(spec.thresholds)) {
    const parsed = key.includes("{") && !(key in metrics) ? thresholdKey(key) : null;
    if (!parsed?.ok) continue;
    const { metric: name, tags, subMetric } = parsed.value;
    const selected = selectTagged(spec, totals, tags);
    // A recorded sub-metric (`{name:…}`, `{group:…}`) is a series of its own, without the kind's label.
    const values = subMetric
      ? withoutType(seriesSummary(selected.hasCustom ? selected.custom : null, subMetric, METRIC_KINDS[name as MetricName], elapsedS, extra))
      : builtInValues(selected, name as MetricName, elapsedS, extra);
    metrics[key] = { ...values, ...failedByMetric(outcomes, key) };
  }
  for (const o of outcomes) {
    if (o.key.includes("{") && !(o.key in metrics)) metrics[o.key] = failedByMetric(outcomes, o.key);
  }
}

/** A series' figures in the shape of its built-in parent (which carries no `type`). */
function withoutType(summary: CustomMetricSummary | undefined): Record<string, number> | undefined {
  if (!summary) return undefined;
  const { type: _type, ...values } = summary;
  return values as Record<string, number>;
}
