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
 * plan's notes say (closed-model.ts) — to size the shards and check the request cap. Their
 * VUs are dealt to shards by the same weights (see ShardVus).
 *
 * SSE streams and WebSockets add a second bound: a stream gives its slot back at the headers
 * (as any request) but keeps its memory while open, so a run with stream steps gets enough
 * shards that each holds at most STREAMS_PER_SHARD of them, and the plan's notes say so
 * (held-connections.ts).
 */
import type { LocationHint, Problem, RunSpec } from "../spec/types.ts";
import { withinWallTime } from "./wall-time.ts";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { MAX_FAN_IN, planTree, type AggregationTree } from "./aggregation-tree.ts";
import { PLATFORM_LIMITS } from "./platform-limits.ts";
import { closedModelEstimate, closedModelNote, requestsPerIteration, type ClosedModelEstimate } from "./closed-model.ts";
import { shardsForHeldConnections } from "./held-connections.ts";

// Where the streams bench and the platform limits' notes look for a shard's stream figures.
export { STREAM_MEMORY_BYTES, STREAMS_PER_SHARD } from "./held-connections.ts";

/** Plan shards to run at this fraction of their theoretical capacity, leaving headroom. */
export const TARGET_UTILISATION = 0.7;

export interface Limits {
  readonly maxRatePerS: number;
  readonly maxDurationMs: number;
  readonly maxShards: number;
  readonly maxTotalRequests: number;
  /** Most VUs a closed-model run may have active at once. */
  readonly maxVUs: number;
  /** Subrequests one shard invocation may make (by default the platform's, PLATFORM_LIMITS). */
  readonly subrequestsPerInvocation: number;
  /** Children per aggregator; a run of more shards than this reports through a tree (aggregation-tree.ts). */
  readonly aggregatorFanIn: number;
}

/** A deployment's caps unless its secrets (or vars) set others (coordinator/http/policy.ts). */
export const DEFAULT_LIMITS: Limits = {
  maxRatePerS: 40_000,
  maxDurationMs: 60 * 60_000,
  maxShards: 256,
  maxTotalRequests: 50_000_000,
  maxVUs: 5_000,
  subrequestsPerInvocation: PLATFORM_LIMITS.subrequestsPerInvocation,
  aggregatorFanIn: MAX_FAN_IN,
};

export interface ShardPlan {
  readonly index: number;
  readonly region: LocationHint;
  readonly weight: number;
  /** k6 execution segment notation, e.g. "1/4:2/4". */
  readonly segment: string;
  /** Iterations this shard may have in flight before it drops (its part of maxVUs). */
  readonly maxInFlight: number;
  /** In a run of named scenarios: the scenario this shard runs. */
  readonly scenario?: string;
}

/** How one named scenario of a run is spread: its own shards, weights and budget. */
export interface ScenarioPlan {
  readonly name: string;
  readonly startMs: number;
  /** Its shards are the run's shards [firstShard, firstShard + shardCount). */
  readonly firstShard: number;
  readonly shardCount: number;
  readonly plan: Plan;
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
  /** A run of named scenarios: each one's own plan, its shards numbered within the scenario. */
  readonly scenarios?: readonly ScenarioPlan[];
  /** How the shards report when they are more than one aggregator's fan-in; absent: to the coordinator. */
  readonly tree?: AggregationTree;
}

/**
 * Subrequests a shard keeps back per invocation for its flushes and its colo lookup: the
 * iteration budget is the subrequest limit less this (wrangler.toml says the same).
 */
export const SUBREQUEST_RESERVE = 500;

export type PlanResult = { ok: true; plan: Plan } | { ok: false; problems: Problem[]; status: 403 };

/**
 * Plans a validated spec under the deployment's limits; caps violations are problems.
 * `totalIterations` is the arrival schedule's total (ignored for named scenarios, which
 * are planned one by one).
 */
export function planRun(spec: RunSpec, totalIterations: number, limits: Limits = DEFAULT_LIMITS): PlanResult {
  if (spec.scenarios?.length) return planScenarios(spec, limits);
  const notes: string[] = [];
  const closed = spec.vus ? closedModelEstimate(spec) : null;
  if (closed) notes.push(closedModelNote(spec, closed));
  const problems = capProblems(spec, closed, totalIterations, limits);

  const demand: ShardDemand = {
    capacityPerShardPerS: spec.connectionSlots / (Math.max(1, spec.expectedLatencyMs) / 1000),
    peakRatePerS: closed ? closed.peakRatePerS : spec.peakRatePerS,
    forStreams: shardsForHeldConnections(spec, closed?.peakVUs ?? null, notes),
  };
  const count = shardCount(spec, demand, limits, problems, notes);
  if (problems.length) return { ok: false, problems, status: 403 };

  const weights = Array.from({ length: count }, () => 1);
  const shards: ShardPlan[] = weights.map((_, index) => ({
    index,
    region: spec.regions[index % spec.regions.length]!,
    weight: 1,
    segment: `${index}/${count}:${index + 1}/${count}`,
    maxInFlight: Math.max(1, Math.ceil(spec.maxInFlight / count)),
  }));
  const tree = planTree(shards, limits.aggregatorFanIn);
  return {
    ok: true,
    plan: {
      shards,
      weights,
      ...(tree ? { tree } : {}),
      capacityPerShardPerS: round(demand.capacityPerShardPerS),
      peakPerShardPerS: round(demand.peakRatePerS / count),
      iterationsPerInvocation: iterationBudget(spec, closed, count, limits, notes),
      totalIterations: closed ? closed.estimatedIterations : totalIterations,
      ...(closed
        ? {
            closedModel: {
              peakVUs: closed.peakVUs,
              vuSeconds: closed.vuSeconds,
              estimatedIterations: closed.estimatedIterations,
              estimatedRequests: closed.estimatedRequests,
            },
          }
        : {}),
      notes,
    },
  };
}

/**
 * The deployment's caps a run of one scenario breaks: its VUs (closed model) or its peak
 * rate, its duration, and its requests in total (an estimate for a closed model).
 */
function capProblems(spec: RunSpec, closed: ClosedModelEstimate | null, totalIterations: number, limits: Limits): Problem[] {
  const problems: Problem[] = [];
  // The field a cap problem names: the option that set the load (externally-controlled's is the most it may be scaled to).
  const rateField =
    spec.executor === "constant-arrival-rate"
      ? "rate"
      : spec.executor === "constant-vus"
        ? "vus"
        : spec.executor === "externally-controlled"
          ? "maxVUs"
          : "stages";
  const totalRequests = closed ? closed.estimatedRequests : totalIterations;
  if (closed) {
    if (closed.peakVUs > limits.maxVUs) problems.push({ field: rateField, detail: `${closed.peakVUs} VUs exceed this deployment's cap of ${limits.maxVUs}` });
  } else if (spec.peakRatePerS > limits.maxRatePerS) {
    problems.push({ field: rateField, detail: `peak rate ${round(spec.peakRatePerS)}/s exceeds this deployment's cap of ${limits.maxRatePerS}/s` });
  }
  if (spec.durationMs > limits.maxDurationMs) {
    problems.push({
      field: rateField === "stages" ? "stages" : "duration",
      detail: `duration ${spec.durationMs / 1000}s exceeds the cap of ${limits.maxDurationMs / 1000}s`,
    });
  }
  if (totalRequests > limits.maxTotalRequests) {
    problems.push({
      field: rateField,
      detail: `${closed ? "an estimated " : ""}${totalRequests} requests in total exceed the cap of ${limits.maxTotalRequests}`,
    });
  }
  return problems;
}

/** What the shard count must carry: the peak rate at each shard's capacity, and the held connections. */
interface ShardDemand {
  /** Estimated sustainable rate per shard at the expected latency (requests/s). */
  readonly capacityPerShardPerS: number;
  readonly peakRatePerS: number;
  /** The fewest shards that hold the run's streams and sockets (held-connections.ts). */
  readonly forStreams: number;
}

/**
 * How many shards: with `shards: "auto"` enough for the demand at TARGET_UTILISATION, a
 * multiple of the regions, capped by the deployment (a note says it may saturate); a
 * count the spec gives is kept, its caps broken are problems and a shortfall a note.
 */
function shardCount(spec: RunSpec, demand: ShardDemand, limits: Limits, problems: Problem[], notes: string[]): number {
  const { capacityPerShardPerS, peakRatePerS } = demand;
  const needed = Math.max(demand.forStreams, Math.ceil(peakRatePerS / (capacityPerShardPerS * TARGET_UTILISATION)));
  const regionCount = spec.regions.length;
  if (spec.shards === "auto") {
    const count = Math.max(regionCount, Math.ceil(Math.max(1, needed) / regionCount) * regionCount);
    if (count <= limits.maxShards) return count;
    notes.push(`the peak rate needs ${count} shards at ${spec.expectedLatencyMs} ms latency; capped at ${limits.maxShards}, so the generator may saturate`);
    return limits.maxShards;
  }
  const count = spec.shards;
  if (count > limits.maxShards) problems.push({ field: "shards", detail: `${count} shards exceed the cap of ${limits.maxShards}` });
  if (count < regionCount) problems.push({ field: "shards", detail: `${count} shards cannot cover ${regionCount} regions; use at least ${regionCount}` });
  if (needed > count) {
    notes.push(
      `${count} shards give ~${round(count * capacityPerShardPerS)}/s at ${spec.expectedLatencyMs} ms latency with ${spec.connectionSlots} slots each; the peak of ${round(peakRatePerS)}/s may saturate them (auto would pick ${needed})`,
    );
  }
  return count;
}

/**
 * Iterations a shard sends per invocation. A closed model's budget counts requests, keeping
 * back what VUs still running at the budget may send (each the rest of its flow); an open
 * model's counts iterations, each sending its whole flow. Either hands over in time for the
 * alarm's wall time (wall-time.ts, which may add a note).
 */
function iterationBudget(spec: RunSpec, closed: ClosedModelEstimate | null, shards: number, limits: Limits, notes: string[]): number {
  const subrequests = limits.subrequestsPerInvocation - SUBREQUEST_RESERVE;
  const budget = closed
    ? Math.max(1, subrequests - Math.ceil(closed.peakVUs / shards) * closed.requestsPerIteration)
    : Math.max(1, Math.floor(subrequests / requestsPerIteration(spec)));
  return withinWallTime(budget, { spec, shards, requestsPerS: closed ? closed.estimatedRequests / (spec.durationMs / 1000) : null }, notes);
}

/**
 * Each named scenario planned as a run of its own, its shards appended to the run's list;
 * the run's caps apply to the sums (rate, requests, VUs, shards).
 */
function planScenarios(spec: RunSpec, limits: Limits): PlanResult {
  const problems: Problem[] = [];
  const scenarios: ScenarioPlan[] = [];
  let firstShard = 0;
  for (const s of spec.scenarios!) {
    const planned = planRun(s.spec, new ArrivalSchedule(s.spec.stages).total, limits);
    if (!planned.ok) {
      problems.push(...planned.problems.map((p) => ({ field: `scenarios.${s.name}.${p.field}`, detail: p.detail })));
      continue;
    }
    scenarios.push({ name: s.name, startMs: s.startMs, firstShard, shardCount: planned.plan.shards.length, plan: planned.plan });
    firstShard += planned.plan.shards.length;
  }
  if (firstShard > limits.maxShards) problems.push({ field: "scenarios", detail: `${firstShard} shards in all exceed the cap of ${limits.maxShards}` });
  const requests = scenarios.reduce((a, s) => a + (s.plan.closedModel?.estimatedRequests ?? s.plan.totalIterations), 0);
  if (requests > limits.maxTotalRequests)
    problems.push({ field: "scenarios", detail: `${requests} requests in all exceed the cap of ${limits.maxTotalRequests}` });
  if (spec.durationMs > limits.maxDurationMs)
    problems.push({
      field: "scenarios",
      detail: `the run lasts ${spec.durationMs / 1000}s with its start times, over the cap of ${limits.maxDurationMs / 1000}s`,
    });
  if (problems.length) return { ok: false, problems, status: 403 };
  const shards = scenarios.flatMap((s) =>
    s.plan.shards.map((shard) => ({
      ...shard,
      index: s.firstShard + shard.index,
      segment: `${s.name}:${shard.segment}`,
      scenario: s.name,
    })),
  );
  return {
    ok: true,
    plan: {
      shards,
      weights: shards.map((s) => s.weight),
      capacityPerShardPerS: Math.min(...scenarios.map((s) => s.plan.capacityPerShardPerS)),
      peakPerShardPerS: Math.max(...scenarios.map((s) => s.plan.peakPerShardPerS)),
      iterationsPerInvocation: Math.min(...scenarios.map((s) => s.plan.iterationsPerInvocation)),
      totalIterations: scenarios.reduce((a, s) => a + s.plan.totalIterations, 0),
      notes: scenarios.flatMap((s) => s.plan.notes.map((n) => `${s.name}: ${n}`)),
      scenarios,
    },
  };
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
