/**
 * An aggregator's intake, held a moment so that every flush of it is one row of its flush log
 * (coordinator/merge/flush-log.ts) instead of a row per child window: a flush waits up to
 * INTAKE_HOLD_MS with the others that arrived meanwhile, they are taken in together in one
 * turn — logged, merged, their senders' progress noted — and each is acknowledged after.
 *
 * Nothing is acknowledged before it is stored: the acknowledgements go out after the turn
 * that wrote the row (a Durable Object's output gate holds them until the write is durable),
 * and a flush held when the object dies is never acknowledged, so its sender sends it again.
 * The tick takes the held flushes in first (takeNow()), so a cut-off never passes a window
 * that has arrived.
 *
 * Why the wait is affordable: a shard flushes once a second and waits for the answer before
 * its next flush (workers/shard/window-flusher.ts); a quarter-second more is a quarter-second
 * later in the aggregator's open windows, which close a second or more after their end.
 */

import { INTAKE_HOLD_MS } from "../../core/run/protocol.ts";

export { INTAKE_HOLD_MS };

interface Held<T, R> {
  readonly item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

export class IntakeBatch<T, R> {
  readonly #takeIn: (items: readonly T[]) => readonly R[];
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #holdMs: number;
  #held: Array<Held<T, R>> = [];

  /** `takeIn` takes a batch in one turn and answers each item, in order; it may throw (nothing taken). */
  constructor(takeIn: (items: readonly T[]) => readonly R[], sleep: (ms: number) => Promise<void>, holdMs = INTAKE_HOLD_MS) {
    this.#takeIn = takeIn;
    this.#sleep = sleep;
    this.#holdMs = holdMs;
  }

  /** Holds `item` until the batch is taken in; its answer then (or the batch's error). */
  add(item: T): Promise<R> {
    const answer = new Promise<R>((resolve, reject) => this.#held.push({ item, resolve, reject }));
    if (this.#held.length === 1) void this.#sleep(this.#holdMs).then(() => this.takeNow());
    return answer;
  }

  /** How many items are held. */
  get heldCount(): number {
    return this.#held.length;
  }

  /** Takes in what is held now, in this turn (a later timer finds nothing, or a new batch). */
  takeNow(): void {
    const held = this.#held;
    if (!held.length) return;
    this.#held = [];
    let answers: readonly R[];
    try {
      answers = this.#takeIn(held.map((h) => h.item));
    } catch (error) {
      for (const h of held) h.reject(error);
      return;
    }
    held.forEach((h, i) => h.resolve(answers[i]!));
  }
}
