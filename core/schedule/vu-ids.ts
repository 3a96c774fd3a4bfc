/**
 * k6's VU numbering across a run's scenarios and shards: which `__VU` (`exec.vu.idInTest`)
 * each VU gets, and which `exec.scenario.iterationInTest` each iteration gets.
 *
 * k6 numbers its VUs once for the whole test, so two scenarios running at the same time
 * never share a VU, and per-VU data (`users[__VU - 1]`) belongs to one user. Here each
 * scenario gets its own block of ids, in the plan's order, as large as the most VUs it
 * may have (its peak for the VU executors, its shards' in-flight caps for the arrival-rate
 * ones); within it a VU executor's VU j is id `offset + j + 1` and an arrival-rate shard's
 * pool is its own slice of the block (see `shardVuPool`). Pure: every shard derives its
 * ids from its assignment alone, as k6's execution segments do.
 *
 * @example
 * scenarioVuOffsets([2, 2]) // → [0, 2]: scenario b's VUs are 3 and 4
 */
import type { Plan } from "../plan/plan.ts";
import type { ShardSlice } from "./shard-slice.ts";

/** The ids a planned scenario may use: one per VU at its peak, or one per iteration it may have in flight. */
export function vuIdsNeeded(plan: Pick<Plan, "closedModel" | "shards">): number {
  if (plan.closedModel) return plan.closedModel.peakVUs;
  return plan.shards.reduce((sum, s) => sum + s.maxInFlight, 0);
}

/** Each scenario's offset (its ids are offset + 1 … offset + needed), in the order given. */
export function scenarioVuOffsets(needed: readonly number[]): number[] {
  let next = 0;
  return needed.map((n) => {
    const offset = next;
    next += n;
    return offset;
  });
}

/** The VUs an arrival-rate shard hands out: ids first … first + size − 1. */
export interface VuPoolRange {
  readonly first: number;
  readonly size: number;
  /**
   * k6's preAllocatedVUs, this shard's part: they wait in line from the start, so they are
   * handed out in turn before a VU that has run is taken again (see vuPool).
   */
  readonly preAllocated: number;
}

export interface PoolInput {
  /** The scenario's offset (scenarioVuOffsets; 0 outside named scenarios). */
  readonly offset: number;
  readonly shard: { readonly index: number; readonly maxInFlight: number };
  /** The shard's slice of its plan's weights (shard-slice.ts): where its segment starts, its weight, their sum. */
  readonly slice: ShardSlice;
  /** The scenario's preAllocatedVUs; absent: every VU of the pool is pre-allocated. */
  readonly preAllocatedVUs?: number;
}

/**
 * An arrival-rate shard's pool: the block of its scenario after the shards before it (each
 * holds its in-flight cap, so no two shards' ids meet), with its part of preAllocatedVUs
 * by weight (the parts sum to the whole, as k6 scales it by execution segment).
 */
export function shardVuPool(input: PoolInput): VuPoolRange {
  const { offset, shard, slice } = input;
  const size = shard.maxInFlight;
  const first = offset + shard.index * size + 1;
  if (input.preAllocatedVUs === undefined) return { first, size, preAllocated: size };
  const total = slice.cycle;
  const before = slice.before;
  const through = before + slice.slots.length;
  const part = Math.floor((input.preAllocatedVUs * through) / total) - Math.floor((input.preAllocatedVUs * before) / total);
  return { first, size, preAllocated: Math.min(size, part) };
}

/**
 * The scenario-wide number of a shard's k-th iteration (k from 0): the k-th slot this shard
 * owns in the interleaved cycle of the weights, as ShardShare numbers arrival-rate
 * iterations and k6's SegmentedIndex numbers `iterationInTest`. Unique across the scenario's
 * shards; shards that run at different speeds leave gaps, as in a distributed k6 test.
 */
export function segmentedIndex(slice: ShardSlice): (k: number) => number {
  const { slots, cycle } = slice;
  if (slots.length === 0) throw new RangeError(`the shard owns no slot of its plan's cycle of ${cycle}`);
  return (k) => Math.floor(k / slots.length) * cycle + slots[k % slots.length]!;
}
