/**
 * Request timeouts without a timer per request.
 *
 * workerd caps an isolate at 10,000 active timeouts, and each timer wake costs CPU;
 * `AbortSignal.timeout()` per request would hit the cap at high rates with long
 * timeouts. Requests are sent in time order and most share the run's timeout, so deadlines
 * mostly arrive sorted: a queue kept in deadline order, appended to in O(1) in the common
 * case and swept whenever the engine wakes, aborts what has expired in O(1) per request. A
 * deadline that comes before one already queued (a k6 script's own `params.timeout` shorter
 * than an earlier request's, an iteration's graceful stop) is inserted in its place, so it is
 * not held back behind a later one.
 */

/** The reason a request is aborted with when its own timeout came first: a timeout, a result. */
export const TIMED_OUT = new DOMException("request timed out", "TimeoutError");
/**
 * The reason when its iteration's graceful stop came first: cut, as k6 cuts it, and no
 * result. Told apart by identity, never by the time it fired (a timer swept late would pass
 * for the other).
 */
export const CUT_AT_GRACEFUL_STOP = new DOMException("in flight at the iteration's graceful stop", "AbortError");

/** One request's timeout: its signal, and done() once it has settled (nothing left to abort). */
class PendingTimeout {
  #controller: AbortController | null = new AbortController();
  readonly signal = this.#controller!.signal;

  readonly deadlineMs: number;
  readonly reason: DOMException;

  constructor(deadlineMs: number, reason: DOMException) {
    this.deadlineMs = deadlineMs;
    this.reason = reason;
  }

  get settled(): boolean {
    return this.#controller === null;
  }

  done(): void {
    this.#controller = null;
  }

  abort(reason: unknown): void {
    this.#controller?.abort(reason);
    this.#controller = null;
  }
}

export class TimeoutQueue {
  /** In deadline order from #head; entries before #head are swept, kept until compaction. */
  readonly #pending: PendingTimeout[] = [];
  #head = 0;

  /** A signal that aborts with `reason` once `deadlineMs` has passed (see sweep). */
  add(deadlineMs: number, reason: DOMException = TIMED_OUT): { readonly signal: AbortSignal; done(): void } {
    const timeout = new PendingTimeout(deadlineMs, reason);
    const pending = this.#pending;
    if (pending.length === this.#head || pending[pending.length - 1]!.deadlineMs <= deadlineMs) pending.push(timeout);
    else pending.splice(this.#insertionIndex(deadlineMs), 0, timeout);
    return timeout;
  }

  /** Where a deadline earlier than the last queued goes: after every queued one at or before it. */
  #insertionIndex(deadlineMs: number): number {
    let low = this.#head;
    let high = this.#pending.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.#pending[mid]!.deadlineMs <= deadlineMs) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** Aborts every request still in flight with `reason` (the run stopped). */
  abortAll(reason: unknown): void {
    for (let i = this.#head; i < this.#pending.length; i++) this.#pending[i]!.abort(reason);
  }

  /** Aborts every request whose deadline is at or before `nowMs`. */
  sweep(nowMs: number): void {
    const pending = this.#pending;
    while (this.#head < pending.length && pending[this.#head]!.deadlineMs <= nowMs) {
      const timeout = pending[this.#head++]!;
      timeout.abort(timeout.reason);
    }
    this.#skipSettled();
    // Drop swept entries at the front so the queue stays as long as what is in flight.
    if (this.#head > 1024 && this.#head * 2 > pending.length) {
      pending.splice(0, this.#head);
      this.#head = 0;
    }
  }

  /** The earliest deadline of a request still in flight, or Infinity. */
  get nextDeadlineMs(): number {
    this.#skipSettled();
    return this.#head < this.#pending.length ? this.#pending[this.#head]!.deadlineMs : Infinity;
  }

  /** Passes over settled requests at the front: their deadlines wake nobody. */
  #skipSettled(): void {
    while (this.#head < this.#pending.length && this.#pending[this.#head]!.settled) this.#head++;
  }
}
