import { describe, expect, it } from "vitest";
import { otlpMetricsBody } from "./otlp-metrics.ts";
import { RunTotals } from "../run/run-totals.ts";
import { MetricStats } from "../metrics/metric-stats.ts";

interface KeyValue {
  key: string;
  value: { stringValue?: string };
}
interface OtlpJson {
  resourceMetrics: Array<{
    resource: { attributes: KeyValue[] };
    scopeMetrics: Array<{
      metrics: Array<{
        name: string;
        unit: string;
        sum?: {
          dataPoints: Array<{ attributes: KeyValue[]; asInt?: number | string; startTimeUnixNano: string }>;
          isMonotonic: boolean;
          aggregationTemporality: number;
        };
        histogram?: {
          dataPoints: Array<{ attributes: KeyValue[]; count: number | string; sum: number; bucketCounts: Array<number | string>; explicitBounds: number[] }>;
        };
      }>;
    }>;
  }>;
}
const attrs = (kv: KeyValue[]) => Object.fromEntries(kv.map((a) => [a.key, a.value.stringValue]));

describe("otlpMetricsBody", () => {
  const stats = new MetricStats();
  for (const us of [900, 2_000, 2_000, 45_000]) stats.trends.duration.record(us);
  for (let i = 0; i < 3; i++) stats.countStatus(200);
  stats.countStatus(503);
  stats.counters.failed = 1;
  stats.counters.dropped = 2;
  const totals = new RunTotals();
  totals.add(0, "weur", 1, stats);
  const T0 = Date.parse("2026-11-25T03:00:00Z");
  const body = JSON.parse(new TextDecoder().decode(otlpMetricsBody({ runId: "r-abc123-0000abcd", name: "otel", t0Ms: T0 }, totals, T0 + 5_000))) as OtlpJson;
  const [resource] = body.resourceMetrics;
  const metrics = resource!.scopeMetrics[0]!.metrics;
  const byName = (name: string) => metrics.find((m) => m.name === name)!;

  it("names the run in the resource", () => {
    expect(attrs(resource!.resource.attributes)).toMatchObject({
      "service.name": "edgeload",
      "edgeload.run_id": "r-abc123-0000abcd",
      "edgeload.run_name": "otel",
    });
  });

  it("gives cumulative monotonic sums per region, step and status, from T0", () => {
    const reqs = byName("edgeload_http_reqs").sum!;
    expect(reqs.isMonotonic).toBe(true);
    expect(reqs.aggregationTemporality).toBe(2); // CUMULATIVE
    expect(reqs.dataPoints.map((p) => [attrs(p.attributes), Number(p.asInt)])).toEqual([
      [{ region: "weur", step: "1", status: "200" }, 3],
      [{ region: "weur", step: "1", status: "503" }, 1],
    ]);
    expect(BigInt(reqs.dataPoints[0]!.startTimeUnixNano)).toBe(BigInt(T0) * 1_000_000n);
    expect(Number(byName("edgeload_dropped_iterations").sum!.dataPoints[0]!.asInt)).toBe(2);
  });

  it("gives the latency histogram in seconds with exact per-bucket counts", () => {
    const h = byName("edgeload_http_req_duration");
    expect(h.unit).toBe("s");
    const point = h.histogram!.dataPoints[0]!;
    expect(Number(point.count)).toBe(4);
    expect(point.sum).toBeCloseTo(0.0499, 9);
    const counts = point.bucketCounts.map(Number);
    expect(counts).toHaveLength(point.explicitBounds.length + 1);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(4);
    const bucketOf = (s: number) => point.explicitBounds.findIndex((b) => s < b);
    expect(counts[bucketOf(0.0009)]).toBe(1);
    expect(counts[bucketOf(0.002)]).toBe(2);
    expect(counts[bucketOf(0.045)]).toBe(1);
  });
});
