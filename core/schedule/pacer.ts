/**
 * A shard's own share of the global schedule, and the pacing rule that never sends early.
 *
 * The plan gives every shard an integer weight; global iterations are dealt out by
 * `interleaveCycle(weights)`, so shard s owns the global indices whose position in the
 * cycle it holds (its ShardSlice). From that alone a shard computes its k-th iteration's global index and
 * due time: no per-tick coordination, and the shards' shares sum exactly to the whole.
 * Like vegeta's pacer, this is a function of elapsed time with no clock inside.
 */
import type { ArrivalSchedule } from "./arrival-schedule.ts";
import type { ShardSlice } from "./shard-slice.ts";

export class ShardShare {
  readonly schedule: ArrivalSchedule;
  /** Iterations this shard owns. */
  readonly total: number;
  readonly #slots: readonly number[];
  readonly #cycleLength: number;

  constructor(schedule: ArrivalSchedule, slice: ShardSlice) {
    if (slice.slots.length === 0) throw new RangeError("a shard that owns no slot of its plan's cycle has no share");
    this.schedule = schedule;
    this.#slots = slice.slots;
    this.#cycleLength = slice.cycle;
    const fullCycles = Math.floor(schedule.total / this.#cycleLength);
    const remainder = schedule.total % this.#cycleLength;
    this.total = fullCycles * this.#slots.length + this.#slots.filter((s) => s < remainder).length;
  }

  /** Global iteration index of this shard's k-th iteration. */
  globalIndex(k: number): number {
    const w = this.#slots.length;
    return Math.floor(k / w) * this.#cycleLength + this.#slots[k % w]!;
  }

  /** Due offset from T0 (ms) of this shard's k-th iteration. */
  dueMs(k: number): number {
    return this.schedule.dueMs(this.globalIndex(k));
  }

  /** The first own iteration due at or after `elapsedMs` (binary search; used on resume). */
  firstDueAtOrAfter(elapsedMs: number): number {
    let lo = 0;
    let hi = this.total;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.dueMs(mid) < elapsedMs) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

export interface DueBatch {
  /** Own iterations [from, to) are due now. */
  readonly from: number;
  readonly to: number;
  /** How long to wait before the next one is due; Infinity when the share is exhausted. */
  readonly waitMs: number;
}

/**
 * Which iterations are due at `elapsedMs` (since T0), starting at `cursor`. An iteration
 * is due only once elapsed time has reached its due time: never early.
 */
export function dueBatch(share: ShardShare, cursor: number, elapsedMs: number, maxBatch = Infinity): DueBatch {
  let to = cursor;
  while (to < share.total && to - cursor < maxBatch && share.dueMs(to) <= elapsedMs) to++;
  const waitMs = to >= share.total ? Infinity : Math.max(0, share.dueMs(to) - elapsedMs);
  return { from: cursor, to, waitMs };
}
