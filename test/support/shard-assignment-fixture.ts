/**
 * A shard's assignment for tests that drive one shard's engine without a coordinator: the
 * spec parsed as the API parses it, the shard's slice of `weights`, a deadline at the spec's
 * end plus its graceful stop, and (when asked) the sub-metrics its thresholds name, as the
 * coordinator gives them.
 */
import { parseRunSpec } from "../../core/spec/run-spec.ts";
import { afterEndMs } from "../../core/schedule/graceful-stop.ts";
import { shardSliceOf } from "../../core/schedule/shard-slice.ts";
import { subMetricFilters } from "../../core/metrics/sub-metrics.ts";
import { parseRunThresholds } from "../../core/run/run-thresholds.ts";
import type { ShardAssignment } from "../../core/run/protocol.ts";

export interface TestShard {
  readonly runId: string;
  readonly t0Ms: number;
  /** The shard's index among `weights` (default: the only shard, [1]). */
  readonly index?: number;
  readonly weights?: readonly number[];
  readonly maxInFlight?: number;
  /** Give the shard the sub-metrics its spec's thresholds name. */
  readonly subMetrics?: boolean;
}

/** `spec` (over a loopback target and one step, which it may replace) as `shard` of a run gets it. */
export function testAssignment(spec: Record<string, unknown>, shard: TestShard): ShardAssignment {
  const parsed = parseRunSpec({ target: "http://127.0.0.1:9", steps: [{ path: "/" }], ...spec });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const index = shard.index ?? 0;
  return {
    runId: shard.runId,
    slice: shardSliceOf(shard.weights ?? [1], index),
    iterationsPerInvocation: 1_000_000,
    t0Ms: shard.t0Ms,
    mode: "local",
    flushGraceMs: 0,
    deadlineMs: shard.t0Ms + parsed.spec.durationMs + afterEndMs(parsed.spec),
    spec: parsed.spec,
    shard: { index, region: "wnam", weight: 1, segment: "0/1:1/1", maxInFlight: shard.maxInFlight ?? 1000 },
    ...(shard.subMetrics ? { subMetrics: subMetricFilters(parseRunThresholds(parsed.spec).thresholds) } : {}),
  };
}
