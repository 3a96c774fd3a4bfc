/**
 * The billed Durable Object requests of a run, by kind of object (issue 49): every call into a
 * shard, an aggregator or the coordinator, and every alarm it runs, from the run's creation to
 * its clean-up. Each is a billed request (an RPC on a stub, an alarm invocation) and an
 * invocation Workers Logs may log, so the estimate counts them as the code sends them:
 *
 * - the reporting path: the shards' flushes to their parents, the aggregators' flushes up the
 *   tree, and the receivers' ticks. In a run with a tree a shard sends its windows every
 *   WINDOWS_PER_WRITE_IN_A_TREE-th second, and an aggregator passes its merged windows up two
 *   at a time, every other second (AGGREGATOR_FLUSHES_PER_S), from the second its first window
 *   has closed; receivers tick once a second until every child has said done, which comes
 *   reportingEndLagS after the schedule's end;
 * - a shard's alarms: one per invocation that sends (the first warms up before t0);
 * - start() into every object (the coordinator's create()), and its clean-up once the run is
 *   final and in D1: a cleanUp() into every shard and aggregator and the coordinator's own
 *   clean-up alarm (coordinator/run/run-cleanup.ts); a level-1 aggregator's alarm for its
 *   shards' rows (SHARD_ROWS_STAGGER_MS apart);
 * - the coordinator's ticks from its creation, RUN_START_LEAD_S before t0, and a client
 *   watching the run (`?wait=` asks its status once a second until it is final), then its
 *   summary.
 * An abort is not counted: it adds one request to each object of a run that then stops
 * sending, so the run it ends costs less than the run planned (docs/cost-and-limits.md).
 *
 * The counts are held to what `npm run bench -- scale`'s simulated objects were asked
 * (scripts/bench/scale-simulation.test.ts, "prices what the simulated objects were asked";
 * the bench prints each kind beside its figure here). Pure.
 */
import { SHARD_ROWS_STAGGER_MS } from "../run/protocol.ts";
import { WINDOWS_PER_WRITE_IN_A_TREE } from "../schedule/shard-assignment.ts";
import type { AggregationTree } from "./aggregation-tree.ts";
import { AGGREGATOR_FLUSHES_PER_S } from "./receiver-rows.ts";

/**
 * Seconds from a deployed run's creation to its t0: the coordinator ticks meanwhile.
 * START_LEAD_MS.deployed in coordinator/run/run-record.ts (scale-simulation.test.ts holds
 * the two equal); a local run's lead is shorter.
 */
export const RUN_START_LEAD_S = 3;
/**
 * After the schedule's end, before the last reporter's done reaches the coordinator, besides
 * the level-1 aggregators' staggered rows: the last requests' answers (and four times the
 * expected latency on top), the final flushes up the tree, a hop each way a level.
 */
const END_DRAIN_S = 0.5;
const END_DRAIN_LATENCIES = 4;

/** Requests of the reporting path over a whole run, by who receives them. */
export interface ReportingRequests {
  /** Every shard's flushes: its windows as it writes them, one per hand-over, and its last (done). */
  readonly shardFlushes: number;
  /** Flushes into the aggregators: a tree's shards', and each non-root aggregator's to its parent. */
  readonly intoAggregators: number;
  /** Flushes into the coordinator: the region roots' in a tree, else every shard's. */
  readonly intoCoordinator: number;
  /** Each aggregator's ticks (an alarm a second from t0 until its children are done). */
  readonly aggregatorTicks: number;
  /** The coordinator's ticks, from its creation until every reporter is done (the last one included). */
  readonly coordinatorTicks: number;
}

/** Billed requests into each kind of object, the whole run. */
export interface ObjectRequestsByKind {
  readonly shards: number;
  readonly aggregators: number;
  readonly coordinator: number;
}

export interface ReportingShape {
  readonly tree: AggregationTree | null;
  readonly shards: number;
  /** Seconds of schedule (the run's duration, rounded up). */
  readonly durationS: number;
  /** The target's expected time to first byte (the spec's expectedLatency, or the probe's p95). */
  readonly expectedLatencyMs: number;
  /** Invocations each shard sends in: one, and one per hand-over. */
  readonly sendingInvocationsPerShard: number;
}

/**
 * Seconds from the schedule's end until the last reporter's done is at the coordinator: the
 * level-1 aggregators write their shards' rows SHARD_ROWS_STAGGER_MS apart by index before
 * their done goes up (aggregator-book.ts finishStep), after the drain (END_DRAIN_S).
 */
export function reportingEndLagS(tree: AggregationTree | null, expectedLatencyMs: number): number {
  const lastLevel1 = Math.max(0, ...(tree?.aggregators.filter((a) => a.level === 1).map((a) => a.index) ?? []));
  return (lastLevel1 * SHARD_ROWS_STAGGER_MS) / 1000 + END_DRAIN_S + (END_DRAIN_LATENCIES * expectedLatencyMs) / 1000;
}

/**
 * Flushes one shard sends. Its windows close once a second; the last one (or the last few a
 * tree's shard holds) goes with its final flush, the done flag. Before that it flushes what
 * it wrote: every window in a flat run, every WINDOWS_PER_WRITE_IN_A_TREE-th in a tree (at its
 * own phase, so on average that share of the windows closed before the last second). A
 * hand-over flushes what it holds too.
 */
export function flushesPerShard(inATree: boolean, durationS: number, sendingInvocations: number): number {
  const closedBeforeTheEnd = Math.max(0, durationS - 1);
  return closedBeforeTheEnd / (inATree ? WINDOWS_PER_WRITE_IN_A_TREE : 1) + 1 + Math.max(0, sendingInvocations - 1);
}

/** The reporting path's requests of a run (see the header). */
export function reportingRequests(shape: ReportingShape): ReportingRequests {
  const { tree, shards, durationS } = shape;
  const endLagS = reportingEndLagS(tree, shape.expectedLatencyMs);
  const shardFlushes = shards * flushesPerShard(tree !== null, durationS, shape.sendingInvocationsPerShard);
  const coordinatorTicks = Math.ceil(RUN_START_LEAD_S + durationS + endLagS);
  if (!tree) return { shardFlushes, intoAggregators: 0, intoCoordinator: shardFlushes, aggregatorTicks: 0, coordinatorTicks };
  const rootSet = new Set(tree.roots);
  let intoCoordinator = 0;
  let upTheTree = 0;
  for (const a of tree.aggregators) {
    if (rootSet.has(a.index)) intoCoordinator += upFlushesOf(a.level, durationS);
    else upTheTree += upFlushesOf(a.level, durationS);
  }
  return {
    shardFlushes,
    intoAggregators: shardFlushes + upTheTree,
    intoCoordinator,
    aggregatorTicks: tree.aggregators.length * Math.ceil(durationS + endLagS),
    coordinatorTicks,
  };
}

/**
 * Flushes an aggregator at `level` sends its parent: AGGREGATOR_FLUSHES_PER_S a second from
 * the second its first window may pass up, then its done. A window passes a level-1 node once
 * it has closed (the first second); each level above waits for the one below, which passes
 * up every other second: two seconds more a level.
 */
function upFlushesOf(level: number, durationS: number): number {
  const firstPassS = 1 + 2 * (level - 1);
  return AGGREGATOR_FLUSHES_PER_S * Math.max(0, durationS - firstPassS) + 1;
}

/**
 * Every billed request into each kind of object (see the header); `watched`: a client asks the
 * run's status once a second while it goes.
 */
export function objectRequestsByKind(shape: ReportingShape, reporting: ReportingRequests, watched: boolean): ObjectRequestsByKind {
  const aggregators = shape.tree?.aggregators ?? [];
  const level1 = aggregators.filter((a) => a.level === 1).length;
  return {
    // start(), its alarms, cleanUp().
    shards: shape.shards * (2 + shape.sendingInvocationsPerShard),
    // start(), the flushes in, its ticks, a level-1 node's alarm for its rows, cleanUp().
    aggregators: aggregators.length * 2 + reporting.intoAggregators + reporting.aggregatorTicks + level1,
    // create(), the flushes in, its ticks, its clean-up alarm, and the API's status polls and summary.
    coordinator: 1 + reporting.intoCoordinator + reporting.coordinatorTicks + 1 + statusPolls(reporting, watched) + 1,
  };
}

/** A watching client's status calls: one a second from the run's creation until it is final. */
export function statusPolls(reporting: ReportingRequests, watched: boolean): number {
  return watched ? reporting.coordinatorTicks : 0;
}
