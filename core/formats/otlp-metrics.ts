/**
 * A run's totals as an OTLP metrics export request, encoded by the OpenTelemetry JS
 * project's own serializer (`@opentelemetry/otlp-transformer`) — no wire code of ours. The
 * body is OTLP/HTTP's JSON encoding (`application/json`, part of the OTLP spec and accepted
 * by the Collector's otlp receiver, Grafana Alloy, Mimir's and most vendors' OTLP
 * endpoints); the library's protobuf serializer is one line away (otlpMetricsBody). The coordinator posts it to each `opentelemetry` output once per
 * merged window (coordinator/run/metrics-push.ts).
 *
 * Cumulative temporality from the run's T0, as Prometheus-style backends expect: every
 * push carries the totals so far, so a lost push loses resolution, never counts.
 * Metrics (names as in the Prometheus exposition, without its suffixes):
 *
 *   edgeload_http_reqs             sum   {region, step, status}
 *   edgeload_http_req_failed,      sum   {region, step}
 *   edgeload_iterations, edgeload_dropped_iterations
 *   edgeload_http_req_duration     histogram, seconds, {region, step}: explicit buckets
 *                                  on LE_BOUNDS_US (exact counts; see prometheus-text-writer.ts)
 *
 * Resource: service.name=edgeload, edgeload.run_id, edgeload.run_name; once the run has
 * ended, edgeload.run_status, edgeload.exit_code and (failed or inconclusive)
 * edgeload.verdict_reason.
 */
import { ValueType } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AggregationTemporality, DataPointType, type HistogramMetricData, type MetricData, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { JsonMetricsSerializer, ProtobufMetricsSerializer } from "@opentelemetry/otlp-transformer";
import { cumulativeCounts, LE_BOUNDS_US, verdictReason } from "./prometheus-text-writer.ts";
import { exitCodeOf, type RunStatus } from "../run/protocol.ts";
import type { Verdict } from "../run/verdict.ts";
import type { RunTotals } from "../run/run-totals.ts";

export const OTLP_CONTENT_TYPES = { json: "application/json", protobuf: "application/x-protobuf" } as const;

type HrTime = [number, number];
const hr = (ms: number): HrTime => [Math.floor(ms / 1000), (ms % 1000) * 1e6];

/** The run an export describes: its status and verdict too once it has ended. */
export interface OtlpRun {
  readonly runId: string;
  readonly name: string;
  readonly t0Ms: number;
  readonly status?: RunStatus;
  readonly verdict?: Verdict | null;
  readonly endedByScript?: boolean;
}

export function otlpResourceMetrics(run: OtlpRun, totals: RunTotals, nowMs: number): ResourceMetrics {
  const startTime = hr(run.t0Ms);
  const endTime = hr(Math.max(nowMs, run.t0Ms));
  const sums = new Map<string, Array<{ attributes: Record<string, string>; value: number }>>();
  const addSum = (name: string, attributes: Record<string, string>, value: number) => {
    let points = sums.get(name);
    if (!points) sums.set(name, (points = []));
    points.push({ attributes, value });
  };
  const histogramPoints: HistogramMetricData["dataPoints"] = [];
  for (const region of totals.regions()) {
    for (const step of totals.steps()) {
      const stats = totals.select({ region, step });
      if (stats.isEmpty) continue;
      const attributes = { region, step: String(step) };
      for (const [status, n] of Object.entries(stats.statuses).sort()) addSum("edgeload_http_reqs", { ...attributes, status }, n);
      addSum("edgeload_http_req_failed", attributes, stats.counters.failed);
      addSum("edgeload_iterations", attributes, stats.counters.iterations);
      addSum("edgeload_dropped_iterations", attributes, stats.counters.dropped);
      const h = stats.trends.duration;
      if (h.count === 0) continue;
      const cumulative = cumulativeCounts(h);
      // OTLP's explicit buckets hold counts per bucket, not cumulative ones; the last is +Inf.
      const counts = [...cumulative.map((c, i) => c - (i ? cumulative[i - 1]! : 0)), h.count - cumulative.at(-1)!];
      histogramPoints.push({
        attributes,
        startTime,
        endTime,
        value: { buckets: { boundaries: LE_BOUNDS_US.map((b) => b / 1e6), counts }, count: h.count, sum: h.sum / 1e6, min: h.min / 1e6, max: h.max / 1e6 },
      });
    }
  }
  const metrics: MetricData[] = [...sums].map(([name, points]) => ({
    descriptor: { name, description: "", unit: "1", valueType: ValueType.INT },
    aggregationTemporality: AggregationTemporality.CUMULATIVE,
    dataPointType: DataPointType.SUM,
    isMonotonic: true,
    dataPoints: points.map((p) => ({ attributes: p.attributes, startTime, endTime, value: p.value })),
  }));
  if (histogramPoints.length) {
    metrics.push({
      descriptor: {
        name: "edgeload_http_req_duration",
        description: "Time from sending a request to reading its body.",
        unit: "s",
        valueType: ValueType.DOUBLE,
      },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.HISTOGRAM,
      dataPoints: histogramPoints,
    });
  }
  return {
    resource: resourceFromAttributes({ "service.name": "edgeload", "edgeload.run_id": run.runId, "edgeload.run_name": run.name, ...outcomeAttributes(run) }),
    scopeMetrics: [{ scope: { name: "edgeload" }, metrics }],
  };
}

/** An ended run's status, exit code and verdict reason, as resource attributes. */
function outcomeAttributes(run: OtlpRun): Record<string, string | number> {
  const exitCode = run.status ? exitCodeOf(run.status, run.endedByScript) : null;
  if (exitCode === null) return {};
  const reason = verdictReason(run.verdict);
  return { "edgeload.run_status": run.status!, "edgeload.exit_code": exitCode, ...(reason ? { "edgeload.verdict_reason": reason } : {}) };
}

/** The OTLP/HTTP body (JSON unless asked for protobuf) for a run's totals now. */
export function otlpMetricsBody(run: OtlpRun, totals: RunTotals, nowMs: number, encoding: keyof typeof OTLP_CONTENT_TYPES = "json"): Uint8Array {
  const serializer = encoding === "json" ? JsonMetricsSerializer : ProtobufMetricsSerializer;
  const body = serializer.serializeRequest(otlpResourceMetrics(run, totals, nowMs));
  if (!body) throw new Error("the OTLP serializer returned nothing");
  return body;
}
