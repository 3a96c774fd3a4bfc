/**
 * Planning a run: how many shards, where, and what share each one takes.
 *
 * Capacity per shard is bounded by its outgoing-connection slots: a request holds a slot
 * until its response headers arrive, so one shard sustains about slots / TTFB requests
 * per second. The plan sizes the shard count for the peak rate at a target utilisation,
 * spreads shards evenly over the requested regions, and gives each an equal weight in the
 * global schedule (see ShardShare), written as a k6-style execution segment.
 */
import type { LocationHint, Problem, RunSpec } from "./run-spec.ts";

/** Plan shards to run at this fraction of their theoretical capacity, leaving headroom. */
export const TARGET_UTILISATION = 0.7;

export interface Limits {
  readonly maxRatePerS: number;
  readonly maxDurationMs: number;
  readonly maxShards: number;
  readonly maxTotalRequests: number;
  /** Subrequests one shard invocation may make (Workers paid plan default: 10,000). */
  readonly subrequestsPerInvocation: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxRatePerS: 20_000,
  maxDurationMs: 60 * 60_000,
  maxShards: 256,
  maxTotalRequests: 50_000_000,
  subrequestsPerInvocation: 10_000,
};

export interface ShardPlan {
  readonly index: number;
  readonly region: LocationHint;
  readonly weight: number;
  /** k6 execution segment notation, e.g. "1/4:2/4". */
  readonly segment: string;
  /** Iterations this shard may have in flight before it drops (its part of maxVUs). */
  readonly maxInFlight: number;
}

export interface Plan {
  readonly shards: readonly ShardPlan[];
  readonly weights: readonly number[];
  /** Estimated sustainable rate per shard at the expected latency (requests/s). */
  readonly capacityPerShardPerS: number;
  /** Peak rate each shard is asked for (requests/s). */
  readonly peakPerShardPerS: number;
  /** Iterations a shard sends per alarm invocation before handing over to the next one. */
  readonly iterationsPerInvocation: number;
  readonly totalIterations: number;
  readonly notes: readonly string[];
}

/** Subrequests kept back per invocation for flushes to the coordinator and colo lookups. */
const SUBREQUEST_RESERVE = 500;

export type PlanResult = { ok: true; plan: Plan } | { ok: false; problems: Problem[]; status: 403 };

/** Plans a validated spec under the deployment's limits; caps violations are problems. */
export function planRun(spec: RunSpec, totalIterations: number, limits: Limits = DEFAULT_LIMITS): PlanResult {
  const problems: Problem[] = [];
  const rateField = spec.executor === "constant-arrival-rate" ? "rate" : "stages";
  if (spec.peakRatePerS > limits.maxRatePerS) {
    problems.push({ field: rateField, detail: `peak rate ${round(spec.peakRatePerS)}/s exceeds this deployment's cap of ${limits.maxRatePerS}/s` });
  }
  if (spec.durationMs > limits.maxDurationMs) {
    problems.push({ field: rateField === "rate" ? "duration" : "stages", detail: `duration ${spec.durationMs / 1000}s exceeds the cap of ${limits.maxDurationMs / 1000}s` });
  }
  if (totalIterations > limits.maxTotalRequests) {
    problems.push({ field: rateField, detail: `${totalIterations} requests in total exceed the cap of ${limits.maxTotalRequests}` });
  }

  const capacityPerShardPerS = spec.connectionSlots / (Math.max(1, spec.expectedLatencyMs) / 1000);
  const needed = Math.ceil(spec.peakRatePerS / (capacityPerShardPerS * TARGET_UTILISATION));
  const regionCount = spec.regions.length;
  const notes: string[] = [];
  let count: number;
  if (spec.shards === "auto") {
    count = Math.max(regionCount, Math.ceil(Math.max(1, needed) / regionCount) * regionCount);
    if (count > limits.maxShards) {
      notes.push(`the peak rate needs ${count} shards at ${spec.expectedLatencyMs} ms latency; capped at ${limits.maxShards}, so the generator may saturate`);
      count = limits.maxShards;
    }
  } else {
    count = spec.shards;
    if (count > limits.maxShards) problems.push({ field: "shards", detail: `${count} shards exceed the cap of ${limits.maxShards}` });
    if (count < regionCount) problems.push({ field: "shards", detail: `${count} shards cannot cover ${regionCount} regions; use at least ${regionCount}` });
    if (needed > count) {
      notes.push(`${count} shards give ~${round(count * capacityPerShardPerS)}/s at ${spec.expectedLatencyMs} ms latency with ${spec.connectionSlots} slots each; the peak of ${round(spec.peakRatePerS)}/s may saturate them (auto would pick ${needed})`);
    }
  }
  if (problems.length) return { ok: false, problems, status: 403 };

  const weights = Array.from({ length: count }, () => 1);
  const shards: ShardPlan[] = weights.map((_, index) => ({
    index,
    region: spec.regions[index % regionCount]!,
    weight: 1,
    segment: `${index}/${count}:${index + 1}/${count}`,
    maxInFlight: Math.max(1, Math.ceil(spec.maxInFlight / count)),
  }));
  return {
    ok: true,
    plan: {
      shards,
      weights,
      capacityPerShardPerS: round(capacityPerShardPerS),
      peakPerShardPerS: round(spec.peakRatePerS / count),
      iterationsPerInvocation: Math.max(1, limits.subrequestsPerInvocation - SUBREQUEST_RESERVE),
      totalIterations,
      notes,
    },
  };
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
