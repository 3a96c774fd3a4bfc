/**
 * A VU's event loop, as k6 has one: an iteration's function may return while timers
 * (k6/timers), WebSockets (k6/websockets) and `http.asyncRequest`s it started are still
 * pending, and k6 ends the iteration only when every one of them has fired, been cleared,
 * closed or settled (k6 v1.8.1 internal/js/eventloop: each registers a callback the loop
 * waits for). Callbacks run through `run`, so an exception in one ends the iteration with
 * that error (k6 does the same) and cancels whatever is still pending.
 *
 * Plain JavaScript: the same loop serves the shard's isolate and unit tests in Node.
 *
 * @example
 * const loop = new VuEventLoop();
 * const release = loop.hold(() => clearTimeout(t)); // a timer keeps the iteration alive
 * const t = setTimeout(() => loop.run(() => { release(); work(); }), 100);
 * await loop.drained(); // after work() ran
 */

interface Hold {
  readonly cancel: () => void;
}

export class VuEventLoop {
  readonly #holds = new Set<Hold>();
  #error: { readonly value: unknown } | null = null;
  #wake: (() => void) | null = null;

  /** Pending work that keeps the iteration alive; `cancel` stops it when the iteration ends early. Returns its release. */
  hold(cancel: () => void): () => void {
    const hold: Hold = { cancel };
    this.#holds.add(hold);
    return () => {
      if (this.#holds.delete(hold)) this.#wake?.();
    };
  }

  /**
   * A promise of pending work (k6's RegisterCallback): the iteration waits until it settles.
   * Returns it as it is, so the script sees its own resolution or rejection.
   */
  track<T>(pending: Promise<T>): Promise<T> {
    const release = this.hold(() => {});
    pending.then(release, release);
    return pending;
  }

  /** Runs a callback of pending work; a throw (or a rejection) ends the iteration with it. */
  run(callback: () => unknown): void {
    try {
      const result = callback();
      if (result instanceof Promise) result.catch((error: unknown) => this.fail(error));
    } catch (error) {
      this.fail(error);
    }
  }

  /** Ends the iteration with `error` (the first one wins), cancelling what is pending. */
  fail(error: unknown): void {
    if (!this.#error) this.#error = { value: error };
    this.#wake?.();
  }

  /** How many timers and sockets are pending. */
  get pending(): number {
    return this.#holds.size;
  }

  /**
   * Resolves once nothing is pending; rejects with the first error a callback threw, after
   * cancelling the rest. Leaves the loop empty for the VU's next iteration.
   *
   * Before each look it lets the promise jobs already queued run, as k6 runs its job queue
   * before it looks at what is registered: a settled request's `.then` that starts another
   * one (or a timer) is pending work of the same iteration, not its end.
   */
  async drained(): Promise<void> {
    for (;;) {
      await afterQueuedJobs();
      if (this.#holds.size === 0 || this.#error) break;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
    this.#wake = null;
    const error = this.#error;
    this.#error = null;
    if (error) {
      this.cancelAll();
      throw error.value;
    }
  }

  /** Stops everything pending (the iteration ended with an error, a k6/ws session closed): no callback of it runs after. */
  cancelAll(): void {
    const holds = [...this.#holds];
    this.#holds.clear();
    for (const h of holds) h.cancel();
    this.#error = null;
    this.#wake?.();
  }
}

/** A macrotask later: every promise job queued before it (and those they queue) has run. */
function afterQueuedJobs(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
