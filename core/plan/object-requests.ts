/**
 * The billed Durable Object requests of a run's reporting path (issue 49): the shards'
 * flushes to their parents, the aggregators' flushes up the tree, and the receivers' ticks.
 * Each is a billed request (an RPC on a stub, an alarm invocation), so the estimate counts
 * them as the code sends them, not one a window: in a run with a tree a shard sends its
 * windows every WINDOWS_PER_WRITE_IN_A_TREE-th second, and an aggregator passes its merged
 * windows up two at a time, every other second (AGGREGATOR_FLUSHES_PER_S). The counts are
 * held to what `npm run bench -- scale`'s simulated objects were asked
 * (scripts/bench/scale-simulation.test.ts, "prices what the simulated objects were asked").
 * Pure.
 */
import { WINDOWS_PER_WRITE_IN_A_TREE } from "../schedule/shard-assignment.ts";
import type { AggregationTree } from "./aggregation-tree.ts";
import { AGGREGATOR_FLUSHES_PER_S } from "./receiver-rows.ts";

/** Requests of the reporting path over a whole run, by who receives them. */
export interface ReportingRequests {
  /** Every shard's flushes: its windows as it writes them, one per hand-over, and its last (done). */
  readonly shardFlushes: number;
  /** Flushes into the aggregators: a tree's shards', and each non-root aggregator's to its parent. */
  readonly intoAggregators: number;
  /** Flushes into the coordinator: the region roots' in a tree, else every shard's. */
  readonly intoCoordinator: number;
  /** Each aggregator's ticks (an alarm a second while it is active). */
  readonly aggregatorTicks: number;
  readonly coordinatorTicks: number;
}

export interface ReportingShape {
  readonly tree: AggregationTree | null;
  readonly shards: number;
  /** Seconds of schedule (the run's duration, rounded up). */
  readonly durationS: number;
  /** Seconds the receivers are active: the schedule and the end's grace. */
  readonly activeS: number;
  /** Invocations each shard sends in: one, and one per hand-over. */
  readonly sendingInvocationsPerShard: number;
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
  const { tree, shards, durationS, activeS } = shape;
  const shardFlushes = shards * flushesPerShard(tree !== null, durationS, shape.sendingInvocationsPerShard);
  if (!tree) return { shardFlushes, intoAggregators: 0, intoCoordinator: shardFlushes, aggregatorTicks: 0, coordinatorTicks: activeS };
  // Each aggregator passes windows up AGGREGATOR_FLUSHES_PER_S a second, then its done flush.
  const upFlushesEach = AGGREGATOR_FLUSHES_PER_S * durationS + 1;
  const roots = tree.roots.length;
  const nonRoots = tree.aggregators.length - roots;
  return {
    shardFlushes,
    intoAggregators: shardFlushes + nonRoots * upFlushesEach,
    intoCoordinator: roots * upFlushesEach,
    aggregatorTicks: tree.aggregators.length * activeS,
    coordinatorTicks: activeS,
  };
}
