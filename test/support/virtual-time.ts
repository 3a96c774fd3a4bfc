/**
 * A discrete-event virtual clock for driving ShardEngines in plain Node (test support):
 * time only moves when every pending promise has settled, so pacing, drops and slot waits
 * are exact and a test is immune to machine load.
 *
 * By default timers fire one at a time (in the order they were set), with promises settled
 * between them, as a single engine sees them. `batch` fires every timer due at the same
 * instant together, which keeps a simulation of hundreds of shards fast: shards share
 * nothing, so the order among them within an instant does not matter.
 *
 * `gridMs` rounds every timer up to the next multiple of it (never early), as the Workers
 * runtime's millisecond timers do: a simulation of thousands of shards then has at most
 * 1,000 instants a virtual second to settle instead of one per request, each instant
 * firing thousands of timers together. A request started on the grid and given a whole
 * number of milliseconds still completes exactly that much later. 0 (the default): exact.
 *
 * Pending instants are kept in a binary heap, each with its timers in the order they were
 * set, so finding the next one does not scan every timer of every shard.
 */
export class VirtualTime {
  now: number;
  readonly #batch: boolean;
  readonly #gridMs: number;
  /** Timers by instant, each list in the order they were set. */
  readonly #due = new Map<number, Array<() => void>>();
  /** The instants of #due, a min-heap. */
  readonly #instants: number[] = [];

  constructor(options: { startMs?: number; batch?: boolean; gridMs?: number } = {}) {
    this.now = options.startMs ?? 1_000_000;
    this.#batch = options.batch ?? false;
    this.#gridMs = options.gridMs ?? 0;
    if (!(this.#gridMs >= 0)) throw new Error(`gridMs must be 0 or more, got ${this.#gridMs}`);
  }

  sleep = (ms: number): Promise<void> => new Promise((resolve) => this.#add(this.now + ms, resolve));
  readonly clock = { now: () => this.now, sleep: this.sleep };

  /** Runs until `done` settles: settle microtasks, then jump to the next timers. */
  async run<T>(done: Promise<T>): Promise<T> {
    let finished = false;
    const result = done.finally(() => (finished = true));
    while (!finished) {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      if (finished) break;
      const next = this.#instants[0];
      if (next === undefined) throw new Error("deadlock: nothing scheduled and the engine is not done");
      this.now = Math.max(this.now, next);
      const timers = this.#due.get(next)!;
      if (this.#batch || timers.length === 1) {
        this.#due.delete(next);
        popHeap(this.#instants);
        for (const resolve of timers) resolve();
      } else {
        timers.shift()!();
      }
    }
    return result;
  }

  #add(atMs: number, resolve: () => void): void {
    const grid = this.#gridMs;
    const at = grid > 0 ? Math.ceil(atMs / grid) * grid : atMs;
    const timers = this.#due.get(at);
    if (timers) timers.push(resolve);
    else {
      this.#due.set(at, [resolve]);
      pushHeap(this.#instants, at);
    }
  }
}

function pushHeap(heap: number[], value: number): void {
  let i = heap.push(value) - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (heap[parent]! <= value) break;
    heap[i] = heap[parent]!;
    i = parent;
  }
  heap[i] = value;
}

function popHeap(heap: number[]): void {
  const last = heap.pop()!;
  if (heap.length === 0) return;
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= heap.length) break;
    const right = left + 1;
    const child = right < heap.length && heap[right]! < heap[left]! ? right : left;
    if (heap[child]! >= last) break;
    heap[i] = heap[child]!;
    i = child;
  }
  heap[i] = last;
}
