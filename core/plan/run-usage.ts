/**
 * The capacity model's second half: what a planned run uses of the platform, and whether
 * that stays within every documented limit (core/plan/platform-limits.ts). The plan
 * (core/plan/plan.ts) decides how many shards and where; this module counts what those shards,
 * the RunCoordinator, D1 and R2 will do for the run's length, so that `edgeload plan` can
 * show it, core/plan/run-cost.ts can price it, and a run that would break a limit is known
 * before any load is sent.
 *
 * The model, per second of run (the window is one second):
 * - each shard invocation (an alarm) sends at most the plan's iteration budget, then hands
 *   over: invocations = 1 + ⌈its iterations / budget⌉ per shard;
 * - each shard flushes its closed windows to the coordinator once a second (one RPC, a
 *   billed Durable Object request) and writes about 3 rows to its own SQLite storage (the
 *   window, its state, the deletion once acknowledged) and reads 1;
 * - the coordinator ticks once a second (an alarm) and logs each flush (1 row written,
 *   1 read when merged);
 * - D1 gets at most regions × steps × (1 window row + 6 histogram rows + custom trends)
 *   rows a second, in multi-row INSERTs of 5 (windows) and 10 (histograms) rows;
 * - a user watching the run polls its status once a second (a Worker request forwarded to
 *   the coordinator), plus creating it and reading its summary;
 * - shards read their seed set from R2 once per object instance.
 * Objects are billed for duration while active: shards and the coordinator are active for
 * the whole run plus a grace of a few seconds.
 */
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { requestsPerIteration, STREAMS_PER_SHARD, type Plan } from "./plan.ts";
import type { RunSpec } from "../spec/types.ts";
import { DURABLE_OBJECT_BILLED_GB } from "./cloudflare-pricing.ts";
import { D1_ROWS_PER_S_BUDGET, PLATFORM_LIMITS } from "./platform-limits.ts";
import { TRENDS } from "../metrics/metric-stats.ts";

/** Subrequests a shard keeps back per invocation for flushes and its colo lookup (core/plan/plan.ts). */
const SUBREQUEST_RESERVE = 500;
/** Seconds objects stay active after the last window: final flushes, the summary. */
const END_GRACE_S = 5;
/** Shard storage rows written and read per window (window, state, deletion; the flush's list). */
const SHARD_ROWS_WRITTEN_PER_S = 3;
const SHARD_ROWS_READ_PER_S = 1;
/** D1 rows per multi-row INSERT (100 bound parameters / columns): windows 18, histograms 10. */
const WINDOW_ROWS_PER_STATEMENT = 5;
const HISTOGRAM_ROWS_PER_STATEMENT = 10;
/** A Worker request of the API (auth, forward to the coordinator): about a millisecond of CPU. */
const API_CPU_MS_PER_REQUEST = 1;

export interface UsageOptions {
  /**
   * Shard CPU per request sent, in ms. Default 0.6: above the 0.43–0.59 ms measured for the
   * whole local engine per request (`npm run bench -- --only generator`, README), which
   * includes the coordinator's merging.
   */
  readonly cpuMsPerRequest?: number;
  /** Whether someone polls the run's status once a second while it runs (the CLI does). */
  readonly watched?: boolean;
}

export interface RunUsage {
  readonly durationS: number;
  readonly shards: number;
  /** Requests sent to the target (subrequests of the shards). */
  readonly requests: number;
  readonly shardInvocations: number;
  readonly durableObjectRequests: number;
  readonly durableObjectGbSeconds: number;
  readonly durableObjectRowsWritten: number;
  readonly durableObjectRowsRead: number;
  readonly d1RowsWritten: number;
  readonly d1RowsRead: number;
  readonly r2Reads: number;
  readonly workersRequests: number;
  readonly workersCpuMs: number;
  /** The busiest second's figures, for the limits. */
  readonly peak: {
    readonly subrequestsPerInvocation: number;
    readonly cpuMsPerInvocation: number;
    readonly coordinatorRequestsPerS: number;
    readonly ratePerShardPerS: number;
    readonly d1RowsPerS: number;
    readonly d1StatementsPerS: number;
    readonly streamsPerShard: number;
  };
}

/** Counts what a planned run uses (see the model in the header). */
export function estimateUsage(spec: RunSpec, plan: Plan, options: UsageOptions = {}): RunUsage {
  const cpuMsPerRequest = options.cpuMsPerRequest ?? 0.6;
  const shards = plan.shards.length;
  const durationS = Math.ceil(spec.durationMs / 1000);
  const activeS = durationS + END_GRACE_S;
  const perIteration = requestsPerIteration(spec);
  const requests = plan.closedModel ? plan.closedModel.estimatedRequests : plan.totalIterations * perIteration;
  const budgetRequests = plan.closedModel ? plan.iterationsPerInvocation : plan.iterationsPerInvocation * perIteration;
  const requestsPerShard = requests / Math.max(1, shards);
  const invocationsPerShard = 1 + Math.ceil(requestsPerShard / Math.max(1, budgetRequests));
  const shardInvocations = shards * invocationsPerShard;

  const regions = new Set(plan.shards.map((s) => s.region)).size;
  const customTrends = Object.values(spec.metrics).filter((kind) => kind === "trend").length;
  const d1RowsPerS = regions * spec.steps.length * (1 + TRENDS.length + customTrends);
  const d1StatementsPerS =
    Math.ceil((regions * spec.steps.length) / WINDOW_ROWS_PER_STATEMENT) +
    Math.ceil((regions * spec.steps.length * (TRENDS.length + customTrends)) / HISTOGRAM_ROWS_PER_STATEMENT);

  const pollRequests = options.watched === false ? 0 : durationS;
  const apiRequests = 2 + pollRequests; // create, summary, polls
  const flushRpcs = shards * (durationS + 1);
  const coordinatorTicks = activeS;
  const durableObjectRequests = shards /* start */ + shardInvocations + flushRpcs + coordinatorTicks + apiRequests;
  const seeded = Boolean(spec.scenario?.seed ?? spec.data?.seed);

  const d1RowsWritten = d1RowsPerS * durationS + 2 * shards + 4; // windows + shards rows (insert, update) + run row and its updates
  return {
    durationS,
    shards,
    requests,
    shardInvocations,
    durableObjectRequests,
    durableObjectGbSeconds: (shards + 1) * activeS * DURABLE_OBJECT_BILLED_GB,
    durableObjectRowsWritten: shards * durationS * SHARD_ROWS_WRITTEN_PER_S + flushRpcs + coordinatorTicks,
    durableObjectRowsRead: shards * durationS * SHARD_ROWS_READ_PER_S + flushRpcs,
    d1RowsWritten,
    // One full read of the stored rows (the summary, a query or the report) is the estimate.
    d1RowsRead: d1RowsWritten,
    r2Reads: seeded ? shards : 0,
    workersRequests: apiRequests,
    workersCpuMs: apiRequests * API_CPU_MS_PER_REQUEST,
    peak: {
      subrequestsPerInvocation: budgetRequests + SUBREQUEST_RESERVE,
      cpuMsPerInvocation: Math.min(budgetRequests, requestsPerShard) * cpuMsPerRequest,
      coordinatorRequestsPerS: shards + 1 /* tick */ + (pollRequests ? 1 : 0),
      ratePerShardPerS: plan.peakPerShardPerS,
      d1RowsPerS,
      d1StatementsPerS,
      streamsPerShard: streamsPerShard(spec, plan),
    },
  };
}

function streamsPerShard(spec: RunSpec, plan: Plan): number {
  const streamSteps = spec.steps.filter((s) => s.sse);
  if (streamSteps.length === 0) return 0;
  const shards = Math.max(1, plan.shards.length);
  if (plan.closedModel) return Math.ceil(plan.closedModel.peakVUs / shards);
  const holdMs = Math.max(...streamSteps.map((s) => s.sse!.holdMs ?? spec.durationMs));
  return Math.ceil(Math.min(spec.peakRatePerS * (holdMs / 1000), new ArrivalSchedule(spec.stages).total) / shards);
}

/** One documented limit set against what the run would use. */
export interface LimitCheck {
  readonly limit: string;
  readonly value: number;
  readonly max: number;
  readonly ok: boolean;
  /** What the limit is and, when it is broken, what to change. */
  readonly note: string;
}

/**
 * The run's peak figures against each platform limit; `cpuMsPerInvocation` against the
 * Worker's configured `limits.cpu_ms` (wrangler.toml sets 300,000).
 */
export function checkPlatformLimits(spec: RunSpec, plan: Plan, usage: RunUsage, cpuLimitMs: number = PLATFORM_LIMITS.maxCpuMsPerInvocation): LimitCheck[] {
  const p = usage.peak;
  const check = (limit: string, value: number, max: number, note: string): LimitCheck => ({ limit, value: round(value), max, ok: value <= max, note });
  return [
    check(
      "subrequests per shard invocation",
      p.subrequestsPerInvocation,
      PLATFORM_LIMITS.subrequestsPerInvocation,
      "each invocation sends its budget, then hands over to a fresh one (limits.subrequests)",
    ),
    check("CPU ms per shard invocation", p.cpuMsPerInvocation, cpuLimitMs, "limits.cpu_ms in wrangler.toml (at most 300,000)"),
    check(
      "connections per invocation",
      spec.connectionSlots,
      PLATFORM_LIMITS.connectionsPerInvocation,
      "production lets 6 requests wait for headers at once; more slots only queue there (connectionSlots)",
    ),
    check(
      "requests/s into the coordinator object",
      p.coordinatorRequestsPerS,
      PLATFORM_LIMITS.durableObjectRequestsPerS,
      "one flush per shard per second; a Durable Object soft-limits near 1,000 requests/s",
    ),
    check(
      "requests/s per shard",
      p.ratePerShardPerS,
      plan.capacityPerShardPerS,
      "slots / expected latency; above it requests queue for a slot (shards, expectedLatency)",
    ),
    check("D1 rows written per second", p.d1RowsPerS, D1_ROWS_PER_S_BUDGET, "regions × steps × (1 + 5 + custom trends), whatever the rate; D1 has one writer"),
    check(
      "D1 statements per coordinator tick",
      p.d1StatementsPerS,
      PLATFORM_LIMITS.d1QueriesPerInvocation,
      "multi-row INSERTs of ≤ 100 bound parameters, one batch a second",
    ),
    check("SSE streams per shard", p.streamsPerShard, STREAMS_PER_SHARD, "each held stream keeps ~160 KiB of a shard's 128 MB isolate"),
  ];
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
