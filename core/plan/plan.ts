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
 *
 * SSE streams add a second bound: a stream gives its slot back at the headers (as any
 * request) but keeps its memory while open, so a run with stream steps gets enough shards
 * that each holds at most STREAMS_PER_SHARD of them, and the plan's notes say so.
 */
import type { LocationHint, Problem, RunSpec } from "../spec/types.ts";
import { withinWallTime } from "./wall-time.ts";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { VuSchedule } from "../schedule/vu-schedule.ts";
import { MAX_FAN_IN, planTree, type AggregationTree } from "./aggregation-tree.ts";
import { PLATFORM_LIMITS } from "./platform-limits.ts";

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

const MIB = 1024 * 1024;
/** Memory of one Worker isolate (a Durable Object shard), the platform limit. */
const ISOLATE_MEMORY_BYTES = PLATFORM_LIMITS.isolateMemoryBytes;
/** What a shard keeps for itself: runtime, engine, windows, flushes. */
export const SHARD_MEMORY_RESERVE_BYTES = 32 * MIB;
/**
 * Memory an open SSE stream costs a shard (request, response body stream, reader, parser
 * buffers, socket): 155 KiB measured in workerd (`npm run bench -- --only streams`, the
 * slope of resident memory over 0 → 1,000 held streams), rounded up.
 */
export const STREAM_MEMORY_BYTES = 160 * 1024;
export const STREAMS_PER_SHARD = Math.floor((ISOLATE_MEMORY_BYTES - SHARD_MEMORY_RESERVE_BYTES) / STREAM_MEMORY_BYTES);

/**
 * How many SSE streams the run may hold open at once: one per VU (closed model), or the
 * peak arrival rate times how long each is held (open model; held to the end, every
 * arrival's stream).
 */
function concurrentStreams(spec: RunSpec, peakVUs: number | null): number {
  const streamSteps = spec.steps.filter((s) => s.sse);
  if (streamSteps.length === 0) return 0;
  if (peakVUs !== null) return peakVUs;
  const holdMs = Math.max(...streamSteps.map((s) => s.sse!.holdMs ?? spec.durationMs));
  return Math.min(spec.peakRatePerS * (holdMs / 1000), new ArrivalSchedule(spec.stages).total);
}

/**
 * Whether a k6 script opens WebSockets: one that imports k6/websockets declares k6's ws_*
 * metrics in its init context (k6-compat/runtime/vu-modules.ts), so its spec carries them.
 */
export const usesWebSockets = (spec: Pick<RunSpec, "script" | "metrics">): boolean => Boolean(spec.script) && spec.metrics.ws_sessions !== undefined;

/**
 * How many WebSockets the run may hold open at once: one per VU that may run at the same
 * time (maxInFlight: the peak VUs, or k6's maxVUs). A script that opens several per VU
 * holds more; the plan's note says the figure is per VU.
 */
export function concurrentSockets(spec: Pick<RunSpec, "script" | "metrics" | "maxInFlight">): number {
  return usesWebSockets(spec) ? spec.maxInFlight : 0;
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
  const problems: Problem[] = [];
  const notes: string[] = [];
  const rateField = spec.executor === "constant-arrival-rate" ? "rate" : spec.executor === "constant-vus" ? "vus" : "stages";
  const closed = spec.vus ? closedModelEstimate(spec) : null;
  const peakRatePerS = closed ? closed.peakRatePerS : spec.peakRatePerS;
  const totalRequests = closed ? closed.estimatedRequests : totalIterations;
  if (closed) {
    if (closed.peakVUs > limits.maxVUs) problems.push({ field: rateField, detail: `${closed.peakVUs} VUs exceed this deployment's cap of ${limits.maxVUs}` });
    notes.push(
      `closed model: the total cannot be known in advance; estimated ~${closed.estimatedRequests} requests (~${closed.estimatedIterations} iterations, peak ~${round(peakRatePerS)}/s) from ${closed.vuSeconds} VU-seconds at ${spec.expectedLatencyMs} ms expected latency and ${closed.thinkMs} ms think (and stream hold) time per iteration`,
    );
  } else if (spec.peakRatePerS > limits.maxRatePerS) {
    problems.push({ field: rateField, detail: `peak rate ${round(spec.peakRatePerS)}/s exceeds this deployment's cap of ${limits.maxRatePerS}/s` });
  }
  if (spec.durationMs > limits.maxDurationMs) {
    problems.push({
      field: rateField === "rate" || rateField === "vus" ? "duration" : "stages",
      detail: `duration ${spec.durationMs / 1000}s exceeds the cap of ${limits.maxDurationMs / 1000}s`,
    });
  }
  if (totalRequests > limits.maxTotalRequests) {
    problems.push({
      field: rateField,
      detail: `${closed ? "an estimated " : ""}${totalRequests} requests in total exceed the cap of ${limits.maxTotalRequests}`,
    });
  }

  const capacityPerShardPerS = spec.connectionSlots / (Math.max(1, spec.expectedLatencyMs) / 1000);
  const sseStreams = concurrentStreams(spec, closed?.peakVUs ?? null);
  const sockets = concurrentSockets(spec);
  // A held WebSocket is a held connection as an SSE stream is: both count against a shard's memory.
  const streams = sseStreams + sockets;
  const forStreams = Math.ceil(streams / STREAMS_PER_SHARD);
  if (sseStreams > 0) {
    notes.push(
      `SSE: up to ~${Math.ceil(sseStreams)} streams open at once; a stream holds a connection slot only until its headers arrive, but its memory (~${STREAM_MEMORY_BYTES / 1024} KiB) while open, so a shard (${ISOLATE_MEMORY_BYTES / MIB} MB isolate, ${SHARD_MEMORY_RESERVE_BYTES / MIB} MB kept for itself) holds at most ${STREAMS_PER_SHARD}: at least ${forStreams} shard${forStreams === 1 ? "" : "s"} for the streams`,
    );
  }
  if (sockets > 0) {
    notes.push(
      `WebSockets: up to ~${sockets} open at once (one per VU); a handshake is one of the ${PLATFORM_LIMITS.connectionsPerInvocation} connections a shard may have waiting for response headers, an open socket is not, but it keeps a held connection's memory (~${STREAM_MEMORY_BYTES / 1024} KiB), so a shard holds at most ${STREAMS_PER_SHARD}: at least ${forStreams} shard${forStreams === 1 ? "" : "s"}`,
    );
  }
  const needed = Math.max(forStreams, Math.ceil(peakRatePerS / (capacityPerShardPerS * TARGET_UTILISATION)));
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
      notes.push(
        `${count} shards give ~${round(count * capacityPerShardPerS)}/s at ${spec.expectedLatencyMs} ms latency with ${spec.connectionSlots} slots each; the peak of ${round(peakRatePerS)}/s may saturate them (auto would pick ${needed})`,
      );
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
  const tree = planTree(shards, limits.aggregatorFanIn);
  return {
    ok: true,
    plan: {
      shards,
      weights,
      ...(tree ? { tree } : {}),
      capacityPerShardPerS: round(capacityPerShardPerS),
      peakPerShardPerS: round(peakRatePerS / count),
      // A closed model's budget counts requests, keeping back what VUs still running may
      // send; an open model's counts iterations, each sending its whole flow. Either hands
      // over in time for the alarm's wall time (wall-time.ts).
      iterationsPerInvocation: withinWallTime(
        closed
          ? Math.max(1, limits.subrequestsPerInvocation - SUBREQUEST_RESERVE - inFlightReserve)
          : Math.max(1, Math.floor((limits.subrequestsPerInvocation - SUBREQUEST_RESERVE) / requestsPerIteration(spec))),
        { spec, shards: count, requestsPerS: closed ? closed.estimatedRequests / (spec.durationMs / 1000) : null },
        notes,
      ),
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
  const perIteration = requestsPerIteration(spec);
  // A stream step is held open (its hold time, or to the end) before the flow goes on.
  const meanWait = (s: RunSpec["steps"][number]) => meanThink(s) + (s.sse ? (s.sse.holdMs ?? spec.durationMs) : 0);
  const thinkMs = sequence ? steps.reduce((a, s) => a + meanWait(s), 0) : steps.reduce((a, s) => a + meanWait(s) * s.weight, 0) / Math.max(1, totalWeight);
  const iterationMs = Math.max(1, perIteration * Math.max(1, spec.expectedLatencyMs) + thinkMs);
  const vuSeconds = round(schedule.vuSeconds());
  const byTime = Math.ceil((vuSeconds * 1000) / iterationMs);
  // Iteration-count executors run their count, unless maxDuration comes first.
  const count = schedule.profile.iterations;
  const estimatedIterations = count ? Math.min(byTime, count.kind === "per-vu" ? count.count * schedule.peak : count.count) : byTime;
  return {
    peakVUs: schedule.peak,
    vuSeconds,
    thinkMs: round(thinkMs),
    requestsPerIteration: perIteration,
    estimatedIterations,
    estimatedRequests: estimatedIterations * perIteration,
    peakRatePerS: (schedule.peak * perIteration * 1000) / iterationMs,
  };
}

/**
 * Requests one iteration sends: every step of a sequence or a built-in scenario's flow, one
 * step of a weighted pick. (A refresh or login flow may stop early; this is the most.)
 */
export function requestsPerIteration(spec: Pick<RunSpec, "flow" | "scenario" | "steps">): number {
  const sequence = spec.flow === "sequence" || spec.scenario !== null;
  return sequence ? Math.max(1, spec.steps.length) : 1;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
