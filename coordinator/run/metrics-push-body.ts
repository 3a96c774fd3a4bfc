/**
 * The body each push output type sends, from the same source the scrape endpoint reads:
 * `opentelemetry` → OTLP/HTTP JSON (core/formats/otlp-metrics.ts), `prometheus-rw` → the scrape's
 * series as a remote-write request (core/formats/remote-write.ts).
 */
import { runsExposition, type RunMetricsSource } from "../../core/formats/prometheus-text-writer.ts";
import { OTLP_CONTENT_TYPES, otlpMetricsBody } from "../../core/formats/otlp-metrics.ts";
import { parsePrometheusText } from "../../core/formats/prometheus-text-parser.ts";
import { REMOTE_WRITE_HEADERS, remoteWriteBody } from "../../core/formats/remote-write.ts";
import type { OutputSpec } from "../../core/spec/outputs-schema.ts";
import type { MetricsPusher, PushBody } from "./metrics-push.ts";
import type { RunRecord } from "./run-record.ts";

export function metricsPushBody(type: OutputSpec["type"], source: RunMetricsSource & { readonly t0Ms: number }, nowMs: number): PushBody {
  if (type === "opentelemetry") {
    return {
      bytes: otlpMetricsBody(
        {
          runId: source.runId,
          name: source.name,
          t0Ms: source.t0Ms,
          status: source.status,
          verdict: source.verdict ?? null,
          endedByScript: source.endedByScript === true,
        },
        source.totals,
        nowMs,
      ),
      headers: { "content-type": OTLP_CONTENT_TYPES.json },
    };
  }
  const parsed = parsePrometheusText(runsExposition([source]));
  if (!parsed.ok) throw new Error(`exposition did not parse: ${parsed.problems[0]?.detail}`);
  return { bytes: remoteWriteBody(parsed.samples, nowMs), headers: REMOTE_WRITE_HEADERS };
}

/**
 * Starts the run's push outputs' requests (never awaited: see metrics-push.ts), each with
 * the body of its type over `source()`; a body that cannot be built is logged, not thrown:
 * an output never stops a run.
 */
export function pushRunMetrics(pusher: MetricsPusher, run: RunRecord, source: () => RunMetricsSource, nowMs: number): void {
  const outputs = run.spec.outputs ?? [];
  if (!outputs.length || nowMs < run.t0Ms) return;
  try {
    pusher.push(outputs, (type) => metricsPushBody(type, { ...source(), t0Ms: run.t0Ms }, nowMs));
  } catch (error) {
    console.error(`run ${run.runId}: metrics push not started: ${error instanceof Error ? error.message : String(error)}`);
  }
}
