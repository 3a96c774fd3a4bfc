/**
 * A shard's slice of its plan's weights: all that a shard needs of them, whatever the shard
 * count. The plan deals global iterations (and VUs) out by `interleaveCycle(weights)`
 * (core/data/interleave.ts); a shard only ever asks which positions of that cycle are its
 * own, how long the cycle is, where its execution segment starts and how many shards there
 * are. Handing each shard those instead of the whole weight list makes an assignment O(its
 * own weight): a list of 7,000 weights in every one of 7,000 shards' storage was ~64 KB a
 * shard, ~0.46 GB of Durable Object storage per 1M/s run (issue 49).
 */
import { interleaveCycle } from "../data/interleave.ts";

export interface ShardSlice {
  /** The positions of one cycle of `interleaveCycle(weights)` this shard owns, ascending: as many as its weight. */
  readonly slots: readonly number[];
  /** The cycle's length: the plan's weights summed. */
  readonly cycle: number;
  /** The weights of the shards before this one, summed: where its execution segment starts, in cycle units. */
  readonly before: number;
  /** Shards in the plan (in a run of named scenarios, in its scenario's plan). */
  readonly shards: number;
}

/**
 * Every shard's slice of `weights`, in shard order: one pass over one cycle, so a plan of
 * 10,000 shards is sliced as fast as it is interleaved.
 * @example shardSlices([2, 1]) → [{ slots: [0, 2], cycle: 3, before: 0, shards: 2 }, { slots: [1], cycle: 3, before: 2, shards: 2 }]
 */
export function shardSlices(weights: readonly number[]): ShardSlice[] {
  const cycle = interleaveCycle(weights);
  const slots: number[][] = weights.map(() => []);
  cycle.forEach((owner, position) => slots[owner]!.push(position));
  let before = 0;
  return weights.map((weight, index) => {
    const slice = { slots: slots[index]!, cycle: cycle.length, before, shards: weights.length };
    before += weight;
    return slice;
  });
}

/** Shard `index`'s slice of `weights` alone (an assignment stored before slices, a test). */
export function shardSliceOf(weights: readonly number[], index: number): ShardSlice {
  if (!(Number.isInteger(index) && index >= 0 && index < weights.length)) throw new RangeError(`shard ${index} not in a plan of ${weights.length} shards`);
  return shardSlices(weights)[index]!;
}

/** This shard's weight: the positions it owns in one cycle. */
export function sliceWeight(slice: ShardSlice): number {
  return slice.slots.length;
}

/**
 * An assignment as it is read back from a shard's storage: one stored before slices (a
 * deploy during a run) carries the whole weight list instead, and is given its slice here.
 */
export function withSlice<A extends { readonly shard: { readonly index: number } }>(
  stored: A & ({ readonly slice: ShardSlice } | { readonly weights: readonly number[] }),
): A & { readonly slice: ShardSlice } {
  if ("slice" in stored && stored.slice) return stored;
  const { weights, ...rest } = stored as A & { readonly weights: readonly number[] };
  return { ...(rest as unknown as A), slice: shardSliceOf(weights, stored.shard.index) };
}
