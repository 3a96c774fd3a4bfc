/**
 * Which VU an arrival-rate shard's next iteration runs on, by k6's rule: k6 starts its
 * preAllocatedVUs at once and each waits in line for an iteration (a Go channel hands a
 * value to the receiver that has waited longest); a VU that finishes an iteration joins the
 * back of the line; only when nobody waits does k6 start another VU, up to maxVUs. So
 * per-VU data (`users[__VU - 1]`) is spread over every pre-allocated VU, where handing
 * out the VU that came back last would pile it onto a few.
 *
 * Pure: a pre-allocated VU that never ran stands ahead of every VU that came back (it has
 * waited since the start), so it is started only when its turn comes.
 *
 * @example
 * const pool = new VuPool({ first: 1, size: 4, preAllocated: 2 });
 * pool.take(); pool.take(); // → 1, 2
 * pool.give(2); pool.give(1);
 * pool.take() // → 2, the one that has waited longest
 */
import type { VuPoolRange } from "../../core/schedule/vu-ids.ts";

export class VuPool {
  readonly range: VuPoolRange;
  /** VUs started so far: ids first … first + started − 1. */
  #started = 0;
  /** VUs that ran and wait for their next iteration, longest waiting first. */
  readonly #idle: number[] = [];
  #head = 0;

  constructor(range: VuPoolRange) {
    this.range = range;
  }

  /**
   * The id of the VU to run the next iteration on; null when all `size` VUs are busy (the
   * shard's in-flight cap keeps that from happening).
   */
  take(): number | null {
    const { first, size, preAllocated } = this.range;
    if (this.#started < preAllocated) return first + this.#started++;
    if (this.#head < this.#idle.length) {
      const id = this.#idle[this.#head++]!;
      // Compact now and then, so the line does not grow with every iteration.
      if (this.#head > 64 && this.#head * 2 > this.#idle.length) {
        this.#idle.splice(0, this.#head);
        this.#head = 0;
      }
      return id;
    }
    if (this.#started < size) return first + this.#started++;
    return null;
  }

  /** VU `id` finished its iteration: it joins the back of the line. */
  give(id: number): void {
    this.#idle.push(id);
  }
}
