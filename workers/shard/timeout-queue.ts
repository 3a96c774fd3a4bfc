/**
 * Request timeouts without a timer per request.
 *
 * workerd caps an isolate at 10,000 active timeouts, and each timer wake costs CPU;
 * `AbortSignal.timeout()` per request would hit the cap at high rates with long
 * timeouts. Every request of a shard has the same timeout and requests are sent in time
 * order, so deadlines arrive already sorted: a FIFO, swept whenever the engine wakes,
 * aborts what has expired in O(1) per request.
 */
/** The reason a request is aborted with when its own timeout came first: a timeout, a result. */
export const TIMED_OUT = new DOMException("request timed out", "TimeoutError");
/**
 * The reason when its iteration's graceful stop came first: cut, as k6 cuts it, and no
 * result. Told apart by identity, never by the time it fired (a timer swept late would pass
 * for the other).
 */
export const CUT_AT_GRACEFUL_STOP = new DOMException("in flight at the iteration's graceful stop", "AbortError");

export class TimeoutQueue {
  readonly #controllers: Array<AbortController | null> = [];
  readonly #deadlines: number[] = [];
  readonly #reasons: DOMException[] = [];
  #head = 0;

  /** A signal that aborts with `reason` once `deadlineMs` has passed (see sweep). */
  add(deadlineMs: number, reason: DOMException = TIMED_OUT): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    const slot = this.#controllers.push(controller) - 1 + this.#offset;
    this.#deadlines.push(deadlineMs);
    this.#reasons.push(reason);
    return { signal: controller.signal, done: () => this.#clear(slot) };
  }

  #offset = 0;

  #clear(slot: number): void {
    const i = slot - this.#offset;
    if (i >= this.#head && i < this.#controllers.length) this.#controllers[i] = null;
  }

  /** Aborts every request still in flight with `reason` (the run stopped). */
  abortAll(reason: unknown): void {
    for (let i = this.#head; i < this.#controllers.length; i++) this.#controllers[i]?.abort(reason);
  }

  /** Aborts every request whose deadline is at or before `nowMs`. */
  sweep(nowMs: number): void {
    while (this.#head < this.#deadlines.length && this.#deadlines[this.#head]! <= nowMs) {
      this.#controllers[this.#head]?.abort(this.#reasons[this.#head]);
      this.#controllers[this.#head] = null;
      this.#head++;
    }
    // Drop settled entries at the front so the arrays stay as long as what is in flight.
    while (this.#head < this.#controllers.length && this.#controllers[this.#head] === null) this.#head++;
    if (this.#head > 1024 && this.#head * 2 > this.#controllers.length) {
      this.#controllers.splice(0, this.#head);
      this.#deadlines.splice(0, this.#head);
      this.#reasons.splice(0, this.#head);
      this.#offset += this.#head;
      this.#head = 0;
    }
  }

  /** The earliest deadline still pending, or Infinity. */
  get nextDeadlineMs(): number {
    return this.#head < this.#deadlines.length ? this.#deadlines[this.#head]! : Infinity;
  }
}
