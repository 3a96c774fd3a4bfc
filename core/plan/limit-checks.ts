/**
 * A planned run's peak figures (core/plan/run-usage.ts) set against each platform limit
 * (core/plan/platform-limits.ts), level by level, so that a run that would break one is
 * known before any load is sent (`edgeload plan` and the API's plan response show them).
 * Every figure a note quotes is read from the limit it is about, so each limit is stated
 * once. This sits apart from platform-limits.ts, which is data that the plan and the
 * coordinator also read: the checks need the plan, and the plan needs the limits.
 */
import type { Plan } from "./plan.ts";
import { STREAMS_PER_SHARD, STREAM_MEMORY_BYTES } from "./held-connections.ts";
import { D1_ROWS_PER_S_BUDGET, PLATFORM_LIMITS, R2_READS_PER_S_BUDGET } from "./platform-limits.ts";
import { SHARD_ROWS_PER_STATEMENT, type RunUsage } from "./run-usage.ts";
import type { RunSpec } from "../spec/types.ts";
import { TRENDS } from "../metrics/metric-stats.ts";

/** A tick runs once a second: more than a second of merging per tick falls behind. */
const TICK_CPU_BUDGET_MS = 1_000;

/** A figure as a note shows it: `300000` is "300,000". */
const figure = (n: number) => n.toLocaleString("en-US");

/** Which object (or store) a limit is about, so that `edgeload plan` can show them level by level. */
export type LimitLevel = "shard" | "aggregator" | "coordinator" | "D1" | "R2" | "Browser Run";

/** One documented limit set against what the run would use. */
export interface LimitCheck {
  readonly level: LimitLevel;
  readonly limit: string;
  readonly value: number;
  readonly max: number;
  readonly ok: boolean;
  /** What the limit is and, when it is broken, what to change. */
  readonly note: string;
}

/**
 * The run's peak figures against each platform limit, level by level (shards, aggregators
 * when the run has a tree, the coordinator, D1, R2); `cpuMsPerInvocation` against the
 * Worker's configured `limits.cpu_ms` (by default the platform's most, which wrangler.toml sets).
 */
export function checkPlatformLimits(spec: RunSpec, plan: Plan, usage: RunUsage, cpuLimitMs: number = PLATFORM_LIMITS.maxCpuMsPerInvocation): LimitCheck[] {
  const p = usage.peak;
  return [
    ...shardChecks(spec, plan, p, cpuLimitMs),
    ...(plan.tree ? aggregatorChecks(plan.tree.fanIn, p, cpuLimitMs) : []),
    ...coordinatorChecks(Boolean(plan.tree), p),
    ...storeChecks(p),
  ];
}

type Peak = RunUsage["peak"];

/** One limit against the run's figure (rounded as shown); ok when the figure is within it. */
function check(level: LimitLevel, limit: string, value: number, max: number, note: string): LimitCheck {
  return { level, limit, value: round(value), max, ok: value <= max, note };
}

/** What one shard invocation sends, spends and holds. */
function shardChecks(spec: RunSpec, plan: Plan, p: Peak, cpuLimitMs: number): LimitCheck[] {
  return [
    check(
      "shard",
      "subrequests per shard invocation",
      p.subrequestsPerInvocation,
      PLATFORM_LIMITS.subrequestsPerInvocation,
      "each invocation sends its budget, then hands over to a fresh one (limits.subrequests)",
    ),
    check(
      "shard",
      "wall time s per shard invocation",
      p.invocationWallTimeMs / 1000,
      PLATFORM_LIMITS.alarmWallTimeMs / 1000,
      "an alarm handler may run 15 minutes; a shard hands over within 12 at its quietest (core/plan/wall-time.ts)",
    ),
    check(
      "shard",
      "CPU ms per shard invocation",
      p.cpuMsPerInvocation,
      cpuLimitMs,
      `limits.cpu_ms in wrangler.toml (at most ${figure(PLATFORM_LIMITS.maxCpuMsPerInvocation)})`,
    ),
    check(
      "shard",
      "connections per invocation",
      spec.connectionSlots,
      PLATFORM_LIMITS.connectionsPerInvocation,
      `production lets ${PLATFORM_LIMITS.connectionsPerInvocation} requests wait for headers at once; more slots only queue there (connectionSlots)`,
    ),
    check(
      "shard",
      "requests/s per shard",
      p.ratePerShardPerS,
      plan.capacityPerShardPerS,
      "slots / expected latency; above it requests queue for a slot (shards, expectedLatency)",
    ),
    check(
      "shard",
      "SSE streams and WebSockets per shard",
      p.streamsPerShard,
      STREAMS_PER_SHARD,
      `each held stream or socket keeps ~${STREAM_MEMORY_BYTES / 1024} KiB of a shard's ${PLATFORM_LIMITS.isolateMemoryBytes / (1024 * 1024)} MB isolate; a WebSocket's handshake also waits among the ${PLATFORM_LIMITS.connectionsPerInvocation} connections per invocation, an open socket does not`,
    ),
  ];
}

/** Requests into and merging at the busiest aggregator of the tree, and a level-1's end batch. */
function aggregatorChecks(fanIn: number, p: Peak, cpuLimitMs: number): LimitCheck[] {
  return [
    check(
      "aggregator",
      "requests/s into the busiest aggregator",
      p.aggregatorRequestsPerS,
      PLATFORM_LIMITS.durableObjectRequestsPerS,
      `one flush per child per second (at most ${fanIn}) and its tick; a Durable Object soft-limits near ${figure(PLATFORM_LIMITS.durableObjectRequestsPerS)} requests/s (AGGREGATOR_FAN_IN)`,
    ),
    check(
      "aggregator",
      "CPU ms per aggregator tick",
      p.aggregatorCpuMsPerTick,
      Math.min(TICK_CPU_BUDGET_MS, cpuLimitMs),
      "merging one window per child, once a second: more than a second of it falls behind (AGGREGATOR_FAN_IN)",
    ),
    check(
      "aggregator",
      "D1 statements per aggregator end batch",
      p.d1AggregatorEndStatements,
      PLATFORM_LIMITS.d1QueriesPerInvocation,
      "one UPDATE per shard under a level-1 aggregator, at most its fan-in",
    ),
  ];
}

/** Requests into the coordinator object and its D1 batches; `inATree`: the run reports through a tree. */
function coordinatorChecks(inATree: boolean, p: Peak): LimitCheck[] {
  return [
    check(
      "coordinator",
      "requests/s into the coordinator object",
      p.coordinatorRequestsPerS,
      PLATFORM_LIMITS.durableObjectRequestsPerS,
      inATree
        ? `one flush per region root per second, a tick and a status poll; a Durable Object soft-limits near ${figure(PLATFORM_LIMITS.durableObjectRequestsPerS)} requests/s`
        : `one flush per shard per second, a tick and a status poll; a Durable Object soft-limits near ${figure(PLATFORM_LIMITS.durableObjectRequestsPerS)} requests/s (a run of more shards than AGGREGATOR_FAN_IN reports through a tree)`,
    ),
    check(
      "coordinator",
      "D1 statements per coordinator tick",
      p.d1StatementsPerS,
      PLATFORM_LIMITS.d1QueriesPerInvocation,
      `multi-row INSERTs of ≤ ${PLATFORM_LIMITS.d1BoundParameters} bound parameters, one batch a second`,
    ),
    check(
      "coordinator",
      "D1 statements per coordinator create batch",
      p.d1CoordinatorCreateStatements,
      PLATFORM_LIMITS.d1QueriesPerInvocation,
      `the run's row and the shards' rows, ${SHARD_ROWS_PER_STATEMENT} to a multi-row INSERT, in one batch`,
    ),
    check(
      "coordinator",
      "D1 statements per coordinator end batch",
      p.d1CoordinatorEndStatements,
      PLATFORM_LIMITS.d1QueriesPerInvocation,
      inATree ? "the run's row; the level-1 aggregators write their shards' rows" : "the run's row and one UPDATE per shard",
    ),
  ];
}

/** The stores: D1's one writer and row size, R2's reads at the start. */
function storeChecks(p: Peak): LimitCheck[] {
  return [
    check(
      "D1",
      "D1 rows written per second",
      p.d1RowsPerS,
      D1_ROWS_PER_S_BUDGET,
      `regions × steps × (1 + ${TRENDS.length} + custom trends), whatever the rate; D1 has one writer`,
    ),
    check(
      "D1",
      "bytes of the run's D1 row",
      p.runRowBytes,
      PLATFORM_LIMITS.d1MaxRowBytes,
      "its spec and plan (one entry per shard and the tree); the summary joins them at the end",
    ),
    check(
      "R2",
      "R2 reads/s at start (seed set, script)",
      p.r2ReadsPerSAtStart,
      R2_READS_PER_S_BUDGET,
      "every shard reads its seed set (and a script run its bundle) within its warm-up second; R2 documents no read rate, this is edgeload's budget",
    ),
  ];
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
