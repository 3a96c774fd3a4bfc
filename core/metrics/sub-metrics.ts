/**
 * k6 sub-metrics recorded where the samples are: a threshold like
 * `http_req_duration{name:home}` or `checks{myTag:x}` names a filter, and a shard records
 * each sample whose tags hold all of that filter's pairs into a series of that name, beside
 * its parent metric (k6's docs, "Thresholds on tags"). Only the filters a run's thresholds
 * name are kept (thresholds.ts caps them at MAX_SUB_METRICS), never one series per tag value
 * seen, so a request tagged with its URL costs nothing unless a threshold asks for it.
 *
 * The series live in MetricStats' custom metrics under the sub-metric's name, so they merge
 * exactly like every other series from shard to aggregator, coordinator, D1 and summary.
 */
import type { CustomMetrics } from "./metric-stats.ts";
import type { RequestTrail } from "./request-trail.ts";
import type { MetricKind, Threshold } from "./thresholds.ts";

/** One filter a shard records: its series name, the metric it splits and the pairs a sample must hold. */
export interface SubMetricFilter {
  readonly name: string;
  readonly metric: string;
  readonly kind: MetricKind;
  readonly tags: ReadonlyArray<readonly [key: string, value: string]>;
}

/** A sample's tags as k6 would give them (request, check or custom metric). */
export type SampleTags = Readonly<Record<string, string>>;

/**
 * The sub-metric k6 keeps for every test whatever its thresholds, and shows under
 * http_req_duration: the time of the responses it expected. Recorded for k6 scripts' runs.
 */
export const EXPECTED_RESPONSE_DURATION: SubMetricFilter = {
  name: "http_req_duration{expected_response:true}",
  metric: "http_req_duration",
  kind: "trend",
  tags: [["expected_response", "true"]],
};

/** The distinct sub-metrics a run's thresholds name (step and region are the cells', not the sample's). */
export function subMetricFilters(thresholds: readonly Threshold[]): SubMetricFilter[] {
  const out = new Map<string, SubMetricFilter>();
  for (const t of thresholds) {
    if (t.subMetric === null || out.has(t.subMetric)) continue;
    const tags = Object.entries(t.tags).filter(([k]) => k !== "step" && k !== "region");
    out.set(t.subMetric, { name: t.subMetric, metric: t.metric, kind: t.kind, tags });
  }
  return [...out.values()];
}

/** Whether a sample's tags hold every pair of the filter (k6's TagSet.Contains). */
export function matchesFilter(filter: SubMetricFilter, tags: SampleTags): boolean {
  return filter.tags.every(([k, v]) => tags[k] === v);
}

/**
 * Records one sample of `metric` (a check, a custom metric's `add`) into each matching
 * sub-metric: a trend value in ms, a rate's pass, or a counter's increment.
 */
export function recordSubSample(
  custom: () => CustomMetrics,
  filters: readonly SubMetricFilter[],
  metric: string,
  tags: SampleTags,
  value: number | boolean,
): void {
  for (const f of filters) {
    if (f.metric !== metric || !matchesFilter(f, tags)) continue;
    if (f.kind === "rate") custom().rate(f.name, typeof value === "boolean" ? value : value !== 0);
    else if (f.kind === "counter") custom().count(f.name, Number(value));
    else custom().trend(f.name, Number(value) * 1000);
  }
}

/** A request's built-in trends (µs) as k6 names them, for a trail that got a response (null: not recorded). */
function requestTrendUs(metric: string, trail: RequestTrail): number | null {
  const got = trail.error === null;
  switch (metric) {
    case "http_req_duration":
      return got ? (trail.endMs - trail.sendMs) * 1000 : null;
    case "http_req_waiting":
      return got ? trail.ttfbMs * 1000 : null;
    case "http_req_corrected":
      return trail.intendedMs === null ? null : (trail.endMs - trail.intendedMs) * 1000;
    case "schedule_lag":
      return trail.intendedMs === null ? null : (trail.sendMs - trail.intendedMs) * 1000;
    case "client_delay":
      return trail.clientDelayMs * 1000;
    default:
      return null;
  }
}

/**
 * Records a completed request into each matching sub-metric of the request metrics, as
 * recordTrail records it into the parents: `http_reqs` counts it, `http_req_failed` is its
 * failure, the trends take its timings. `tags` are the request's own (params.tags, name,
 * group, method, scenario); `status` and `expected_response` come from the response, as
 * k6 adds them.
 */
export function recordRequestSubMetrics(
  custom: () => CustomMetrics,
  filters: readonly SubMetricFilter[],
  requestTags: SampleTags,
  trail: RequestTrail,
  failed: boolean,
): void {
  if (filters.length === 0) return;
  const tags: SampleTags = { ...requestTags, status: String(trail.status), expected_response: String(!failed) };
  for (const f of filters) {
    if (!matchesFilter(f, tags)) continue;
    if (f.metric === "http_reqs") custom().count(f.name, 1);
    else if (f.metric === "http_req_failed") custom().rate(f.name, failed);
    else {
      const us = requestTrendUs(f.metric, trail);
      if (us !== null) custom().trend(f.name, us);
    }
  }
}
