/**
 * Outgoing-connection slots: at most `limit` requests may be awaiting response headers.
 *
 * Production Workers allow 6 such connections per invocation and queue the rest;
 * `wrangler dev` does not enforce it. Enforcing it ourselves in every mode makes a local
 * run show the production bottleneck, and lets us measure the time spent queued (which
 * k6 would call "blocked"). Waiters are served first in, first out.
 */
export class ConnectionSlots {
  #free: number;
  readonly #waiters: Array<() => void> = [];
  #head = 0;

  readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
    this.#free = limit;
  }

  /** Resolves once a slot is held; synchronous fast path when one is free. */
  acquire(): Promise<void> | undefined {
    if (this.#free > 0) {
      this.#free--;
      return undefined;
    }
    return new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  release(): void {
    if (this.#head < this.#waiters.length) {
      const next = this.#waiters[this.#head]!;
      this.#waiters[this.#head++] = noop;
      if (this.#head > 1024 && this.#head * 2 > this.#waiters.length) {
        this.#waiters.splice(0, this.#head);
        this.#head = 0;
      }
      next(); // the slot passes straight to the next waiter
    } else {
      this.#free++;
    }
  }

  get waiting(): number {
    return this.#waiters.length - this.#head;
  }
}

function noop(): void {}
