/**
 * What a run report is made from: the run's summary and a few analytics queries over its
 * stored windows (core/results/query.ts), plus the whole run's merged latency histogram.
 *
 * Every latency figure in a report comes from these query rows, so the markdown, the HTML
 * and the charts agree to the digit, and no percentile is ever averaged across groups.
 * The coordinator builds this from D1 (coordinator/http/report-api.ts); the CLI fetches it as
 * JSON from the same route and renders it locally.
 */
import type { DeliveryOutcome } from "./delivery-section.ts";
import type { Reconciliation } from "../cloudflare/analytics/reconciliation.ts";
import { aggregateGroups, runQuery, type Query, type QueryInput, type QueryMetric, type QueryRow } from "../core/results/query.ts";
import { parseRunSpec } from "../core/spec/run-spec.ts";
import { ArrivalSchedule } from "../core/schedule/arrival-schedule.ts";
import type { Summary } from "../core/run/summary.ts";
import { round3 } from "../core/metrics/rounding.ts";

export interface ReportInput {
  readonly summary: Summary;
  /** Per second and region: iterations, requests, rps, error_rate, p50, p95, p99. */
  readonly perSecond: readonly QueryRow[];
  /** The whole run, one row (absent when nothing was stored). */
  readonly overall: QueryRow | null;
  /** The whole run by region and by step: requests, rps, error_rate, p50, mean, p95, p99, max. */
  readonly byRegion: readonly QueryRow[];
  readonly byStep: readonly QueryRow[];
  /** The whole run's http_req_duration histogram: non-empty buckets as [µs, count]. */
  readonly latencyBuckets: ReadonlyArray<readonly [number, number]>;
  /** `edgeload cf-analytics --format json` for the run, when the report should include it. */
  readonly cloudflare?: Reconciliation;
  /**
   * What the target received of the run (core/run/delivery.ts), or why a target that counts
   * could not be read; absent when none was asked, which the report says (delivery-section.ts).
   */
  readonly delivery?: DeliveryOutcome;
}

const PER_SECOND_METRICS: readonly QueryMetric[] = ["iterations", "requests", "rps", "error_rate", "p50", "p95", "p99"];
const WHOLE_RUN_METRICS: readonly QueryMetric[] = ["requests", "rps", "error_rate", "p50", "mean", "p95", "p99", "max"];

/** The queries behind a report, as GET /v1/runs/:id/query would run them. */
export const REPORT_QUERIES = {
  perSecond: { by: ["region"], everyS: 1, metrics: PER_SECOND_METRICS, trend: "duration" },
  overall: { by: [], everyS: null, metrics: WHOLE_RUN_METRICS, trend: "duration" },
  byRegion: { by: ["region"], everyS: null, metrics: WHOLE_RUN_METRICS, trend: "duration" },
  byStep: { by: ["step"], everyS: null, metrics: WHOLE_RUN_METRICS, trend: "duration" },
} as const satisfies Record<string, Query>;

/** Runs the report's queries over a run's stored rows (http_req_duration histograms). */
export function reportInput(summary: Summary, rows: QueryInput): ReportInput {
  const whole = aggregateGroups(rows, REPORT_QUERIES.overall)[0];
  return {
    summary,
    perSecond: runQuery(rows, REPORT_QUERIES.perSecond),
    overall: runQuery(rows, REPORT_QUERIES.overall)[0] ?? null,
    byRegion: runQuery(rows, REPORT_QUERIES.byRegion),
    byStep: runQuery(rows, REPORT_QUERIES.byStep),
    latencyBuckets: whole ? whole.h.buckets() : [],
  };
}

/**
 * The planned load: the run's duration and the target iterations in each second of it, from
 * the executor options the summary echoes, decoded by the run-spec schema into rate stages
 * and integrated over each second by the same ArrivalSchedule the shards pace by.
 */
export function targetProfile(summary: Summary): { readonly durationS: number; readonly perSecond: readonly number[] } {
  const e = summary.edgeload;
  const parsed = parseRunSpec({ target: e.target, steps: [{}], executor: e.executor, ...e.options });
  if (!parsed.ok) return { durationS: 0, perSecond: [] };
  // A closed-model run has no planned rate (its VUs are the load): its duration only.
  if (parsed.spec.vus) return { durationS: parsed.spec.durationMs / 1000, perSecond: [] };
  const schedule = new ArrivalSchedule(parsed.spec.stages);
  const seconds = Math.ceil(schedule.durationMs / 1000);
  return {
    durationS: schedule.durationMs / 1000,
    perSecond: Array.from({ length: seconds }, (_, t) => round3(schedule.arrivalsBy((t + 1) * 1000) - schedule.arrivalsBy(t * 1000))),
  };
}
