/**
 * A discrete-event virtual clock for driving ShardEngines in plain Node (test support):
 * time only moves when every pending promise has settled, so pacing, drops and slot waits
 * are exact and a test is immune to machine load.
 *
 * By default timers fire one at a time (in the order they were set), with promises settled
 * between them, as a single engine sees them. `batch` fires every timer due at the same
 * instant together, which keeps a simulation of hundreds of shards fast: shards share
 * nothing, so the order among them within an instant does not matter.
 */
export class VirtualTime {
  now: number;
  #timers: Array<{ at: number; resolve: () => void }> = [];

  readonly #batch: boolean;

  constructor(options: { startMs?: number; batch?: boolean } = {}) {
    this.now = options.startMs ?? 1_000_000;
    this.#batch = options.batch ?? false;
  }

  sleep = (ms: number): Promise<void> => new Promise((resolve) => this.#timers.push({ at: this.now + ms, resolve }));
  readonly clock = { now: () => this.now, sleep: this.sleep };

  /** Runs until `done` settles: settle microtasks, then jump to the next timers. */
  async run<T>(done: Promise<T>): Promise<T> {
    let finished = false;
    const result = done.finally(() => (finished = true));
    while (!finished) {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      if (finished) break;
      if (this.#timers.length === 0) throw new Error("deadlock: nothing scheduled and the engine is not done");
      let next = Infinity;
      for (const t of this.#timers) if (t.at < next) next = t.at;
      this.now = Math.max(this.now, next);
      if (this.#batch) {
        const due = this.#timers.filter((t) => t.at <= next);
        this.#timers = this.#timers.filter((t) => t.at > next);
        for (const t of due) t.resolve();
      } else {
        const first = this.#timers.findIndex((t) => t.at === next);
        this.#timers.splice(first, 1)[0]!.resolve();
      }
    }
    return result;
  }
}
