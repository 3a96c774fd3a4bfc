/**
 * Planning a run: how many shards, where, and what share each one takes.
 *
 * Capacity per shard is bounded by its outgoing-connection slots: a request holds a slot
 * until its response headers arrive, so one shard sustains about slots / TTFB requests
 * per second. The plan sizes the shard count for the peak rate at a target utilisation,
 * spreads shards evenly over the requested regions, and gives each an equal weight in the
 * global schedule (see ShardShare), written as a k6-style execution segment.
 *
 * Closed-model runs (`constant-vus`, `ramping-vus`) have no rate to plan for: each VU
 * sends its next request when the last one (and its think time) is over, so the rate
 * follows the target's latency. The plan caps their VUs, and estimates their rate and
 * total requests from `expectedLatency` and the steps' think time — an estimate, which the
 * plan's notes say — to size the shards and check the request cap. Their VUs are dealt to
 * shards by the same weights (see ShardVus).
 */
import type { LocationHint, Problem, RunSpec } from "./run-spec.ts";
import { VuSchedule } from "./vu-schedule.ts";

/** Plan shards to run at this fraction of their theoretical capacity, leaving headroom. */
export const TARGET_UTILISATION = 0.7;

export interface Limits {
  readonly maxRatePerS: number;
  readonly maxDurationMs: number;
  readonly maxShards: number;
  readonly maxTotalRequests: number;
  /** Most VUs a closed-model run may have active at once. */
  readonly maxVUs: number;
  /** Subrequests one shard invocation may make (Workers paid plan default: 10,000). */
  readonly subrequestsPerInvocation: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxRatePerS: 20_000,
  maxDurationMs: 60 * 60_000,
  maxShards: 256,
  maxTotalRequests: 50_000_000,
  maxVUs: 5_000,
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
  /** Iterations in the run (an estimate for closed-model runs, see `closedModel`). */
  readonly totalIterations: number;
  /** For closed-model runs: VUs and the estimate of what they will send; absent otherwise. */
  readonly closedModel?: {
    readonly peakVUs: number;
    readonly vuSeconds: number;
    readonly estimatedIterations: number;
    readonly estimatedRequests: number;
  };
  readonly notes: readonly string[];
}

/** Subrequests kept back per invocation for flushes to the coordinator and colo lookups. */
const SUBREQUEST_RESERVE = 500;

export type PlanResult = { ok: true; plan: Plan } | { ok: false; problems: Problem[]; status: 403 };

/** Plans a validated spec under the deployment's limits; caps violations are problems. */
export function planRun(spec: RunSpec, totalIterations: number, limits: Limits = DEFAULT_LIMITS): PlanResult {
  const problems: Problem[] = [];
  const notes: string[] = [];
  const rateField = spec.executor === "constant-arrival-rate" ? "rate" : spec.executor === "constant-vus" ? "vus" : "stages";
  const closed = spec.vus ? closedModelEstimate(spec) : null;
  const peakRatePerS = closed ? closed.peakRatePerS : spec.peakRatePerS;
  const totalRequests = closed ? closed.estimatedRequests : totalIterations;
  if (closed) {
    if (closed.peakVUs > limits.maxVUs) problems.push({ field: rateField, detail: `${closed.peakVUs} VUs exceed this deployment's cap of ${limits.maxVUs}` });
    notes.push(`closed model: the total cannot be known in advance; estimated ~${closed.estimatedRequests} requests (~${closed.estimatedIterations} iterations, peak ~${round(peakRatePerS)}/s) from ${closed.vuSeconds} VU-seconds at ${spec.expectedLatencyMs} ms expected latency and ${closed.thinkMs} ms think time per iteration`);
  } else if (spec.peakRatePerS > limits.maxRatePerS) {
    problems.push({ field: rateField, detail: `peak rate ${round(spec.peakRatePerS)}/s exceeds this deployment's cap of ${limits.maxRatePerS}/s` });
  }
  if (spec.durationMs > limits.maxDurationMs) {
    problems.push({ field: rateField === "rate" || rateField === "vus" ? "duration" : "stages", detail: `duration ${spec.durationMs / 1000}s exceeds the cap of ${limits.maxDurationMs / 1000}s` });
  }
  if (totalRequests > limits.maxTotalRequests) {
    problems.push({ field: rateField, detail: `${closed ? "an estimated " : ""}${totalRequests} requests in total exceed the cap of ${limits.maxTotalRequests}` });
  }

  const capacityPerShardPerS = spec.connectionSlots / (Math.max(1, spec.expectedLatencyMs) / 1000);
  const needed = Math.ceil(peakRatePerS / (capacityPerShardPerS * TARGET_UTILISATION));
  const regionCount = spec.regions.length;
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
      notes.push(`${count} shards give ~${round(count * capacityPerShardPerS)}/s at ${spec.expectedLatencyMs} ms latency with ${spec.connectionSlots} slots each; the peak of ${round(peakRatePerS)}/s may saturate them (auto would pick ${needed})`);
    }
  }
  if (problems.length) return { ok: false, problems, status: 403 };
  // A VU run's budget counts requests; iterations still running at the budget may each
  // send the rest of their flow, so keep that back too.
  const vusPerShard = closed ? Math.ceil(closed.peakVUs / count) : 0;
  const inFlightReserve = closed ? vusPerShard * closed.requestsPerIteration : 0;

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
      peakPerShardPerS: round(peakRatePerS / count),
      iterationsPerInvocation: Math.max(1, limits.subrequestsPerInvocation - SUBREQUEST_RESERVE - inFlightReserve),
      totalIterations: closed ? closed.estimatedIterations : totalIterations,
      ...(closed ? { closedModel: { peakVUs: closed.peakVUs, vuSeconds: closed.vuSeconds, estimatedIterations: closed.estimatedIterations, estimatedRequests: closed.estimatedRequests } } : {}),
      notes,
    },
  };
}

/**
 * What a closed-model run will roughly send: an iteration takes its requests at the
 * expected latency each plus its mean think time, and every active VU runs iterations
 * back to back.
 */
function closedModelEstimate(spec: RunSpec) {
  const schedule = new VuSchedule(spec.vus!);
  const steps = spec.steps;
  const meanThink = (s: RunSpec["steps"][number]) => (s.think ? (s.think.minMs + s.think.maxMs) / 2 : 0);
  const totalWeight = steps.reduce((a, s) => a + s.weight, 0);
  const sequence = spec.flow === "sequence" || spec.scenario !== null;
  const requestsPerIteration = sequence ? Math.max(1, steps.length) : 1;
  const thinkMs = sequence ? steps.reduce((a, s) => a + meanThink(s), 0) : steps.reduce((a, s) => a + meanThink(s) * s.weight, 0) / Math.max(1, totalWeight);
  const iterationMs = Math.max(1, requestsPerIteration * Math.max(1, spec.expectedLatencyMs) + thinkMs);
  const vuSeconds = round(schedule.vuSeconds());
  const estimatedIterations = Math.ceil((vuSeconds * 1000) / iterationMs);
  return {
    peakVUs: schedule.peak,
    vuSeconds,
    thinkMs: round(thinkMs),
    requestsPerIteration,
    estimatedIterations,
    estimatedRequests: estimatedIterations * requestsPerIteration,
    peakRatePerS: (schedule.peak * requestsPerIteration * 1000) / iterationMs,
  };
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
