/**
 * Deterministic interleaving of integer weights: nginx's smooth weighted round-robin.
 *
 * Used wherever a stream of indices is shared out by weight without coordination: global
 * iterations among shards (each shard derives its own share, like k6's execution
 * segments) and iterations among weighted request steps. Over any prefix of n slots, each
 * owner stays close to its exact share n·w/W — within one slot for two owners, and within
 * 1.5 for more (smooth round-robin can exceed one slot by a fraction with three or more
 * owners of very unequal weights; 1.22 was the worst of 200,000 random weightings) — and
 * one full cycle of W slots holds exactly w slots per owner, so shares always sum to the whole.
 */

/**
 * One cycle of owners, length sum(weights). `cycle[slot]` is the owner of that slot.
 * @example interleaveCycle([2, 1]) → [0, 1, 0]
 */
export function interleaveCycle(weights: readonly number[]): number[] {
  const total = weights.reduce((a, w) => a + w, 0);
  if (!weights.every((w) => Number.isInteger(w) && w >= 0) || total <= 0) {
    throw new RangeError(`weights must be non-negative integers with a positive sum, got ${JSON.stringify(weights)}`);
  }
  // Equal weights (every plan's shards have weight 1): each round of the loop below picks
  // every owner once in order and leaves every counter where it began, so the cycle is plain
  // round robin, w rounds. Built directly: the loop costs total × owners, ~0.1 s for each
  // shard of a 7,146-shard run at every invocation (`npm run bench -- scale`).
  if (weights.every((w) => w === weights[0])) return Array.from({ length: total }, (_, slot) => slot % weights.length);
  const current = weights.map(() => 0);
  const cycle = new Array<number>(total);
  for (let slot = 0; slot < total; slot++) {
    let best = -1;
    for (let i = 0; i < weights.length; i++) {
      current[i]! += weights[i]!;
      if (best < 0 || current[i]! > current[best]!) best = i;
    }
    current[best]! -= total;
    cycle[slot] = best;
  }
  return cycle;
}

/**
 * The positions, within one cycle, owned by `owner`, ascending.
 * @example ownedSlots([2, 1], 0) → [0, 2]
 */
export function ownedSlots(weights: readonly number[], owner: number): number[] {
  const cycle = interleaveCycle(weights);
  const slots: number[] = [];
  for (let s = 0; s < cycle.length; s++) if (cycle[s] === owner) slots.push(s);
  return slots;
}
