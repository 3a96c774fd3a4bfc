/**
 * How long the generator's own event loop kept a response waiting: `client_delay`.
 *
 * A response that arrives while the isolate is busy (another shard's window flush, a merge,
 * garbage collection) is timed only when the loop gets to it, so the wait is added to its
 * latency as if the target had taken it. It cannot be seen directly — nothing timestamps
 * the bytes' arrival — so probes stand in: timers re-armed while requests are in flight,
 * about one every PROBE_MS per isolate. A free loop fires them on time; a busy one fires
 * them late, by as long as it was busy. A response timed at `t` is given:
 *
 * - `t − due` when a probe is overdue at `t`: the loop has been unable to run timers at
 *   least since `due`, so the response waited at least that long (a lower bound);
 * - otherwise the lateness of a probe that fired within the same millisecond: the response
 *   was let through by the end of the same stall;
 * - otherwise 0.
 *
 * So stalls shorter than the probing period can go unseen, and longer ones are measured from their
 * start to within that period: an estimate that errs low, never one that blames the generator
 * for the target's time. No clock of its own: the engine's `now` and `sleep` are passed in.
 */

/**
 * The isolate's probing period: resolution of the estimate versus timer wakes. Shards that
 * share an isolate (every shard, locally) share the probing: each re-arms its probe every
 * PROBE_MS × (probes in the isolate), so the isolate wakes about once per PROBE_MS
 * whatever its shard count.
 */
export const PROBE_MS = 5;

/**
 * A probe overdue by more than this is taken for one whose engine is gone (an object
 * aborted mid-run) rather than for a stall that long: it errs low, as the estimate does.
 */
export const STALE_PROBE_MS = 2_000;

export interface ProbeClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** One event loop's probes, shared by the engines running in it. */
export class LoopWatch {
  readonly clock: ProbeClock;
  readonly #probes = new Set<LoopDelayProbe>();
  #slots = 0;
  /** The last firing of any probe: when, and how late. */
  #firedAtMs = -Infinity;
  #lateMs = 0;

  constructor(clock: ProbeClock) {
    this.clock = clock;
  }

  /** A probe for one engine, re-armed after each firing while `wanted()`; leave() ends it. */
  probe(wanted: () => boolean): LoopDelayProbe {
    const probe = new LoopDelayProbe(this, wanted, this.#slots++);
    this.#probes.add(probe);
    return probe;
  }

  /**
   * When the probe in `slot` is next due after `nowMs`: each probe's period is PROBE_MS ×
   * the probes in the loop, and their slots stagger them, so the loop as a whole is probed
   * about every PROBE_MS (probes armed together would otherwise fire together).
   */
  nextDueMs(slot: number, nowMs: number): number {
    const n = Math.max(1, this.#probes.size);
    const period = PROBE_MS * n;
    const offset = (slot % n) * PROBE_MS;
    const wait = (((offset - nowMs) % period) + period) % period;
    return nowMs + (wait < 1 ? period : wait);
  }

  /** The estimated event-loop delay of a response timed at `nowMs`, in ms. */
  delayAt(nowMs: number): number {
    let delay = nowMs - this.#firedAtMs < 1 ? this.#lateMs : 0;
    for (const probe of this.#probes) {
      const overdue = nowMs - probe.dueMs;
      if (overdue > delay && overdue < STALE_PROBE_MS) delay = overdue;
    }
    return delay;
  }

  fired(atMs: number, lateMs: number): void {
    this.#firedAtMs = atMs;
    this.#lateMs = lateMs;
  }

  leave(probe: LoopDelayProbe): void {
    this.#probes.delete(probe);
  }
}

export class LoopDelayProbe {
  readonly #watch: LoopWatch;
  readonly #wanted: () => boolean;
  readonly #slot: number;
  /** When the armed probe should fire; Infinity while not armed. */
  dueMs = Infinity;
  #left = false;

  constructor(watch: LoopWatch, wanted: () => boolean, slot: number) {
    this.#watch = watch;
    this.#wanted = wanted;
    this.#slot = slot;
  }

  /** Arms the probe if it is not already: call when a request leaves. */
  arm(): void {
    if (this.dueMs !== Infinity || this.#left) return;
    const { clock } = this.#watch;
    const now = clock.now();
    const due = this.#watch.nextDueMs(this.#slot, now);
    this.dueMs = due;
    void clock.sleep(due - now).then(() => {
      const now = clock.now();
      this.dueMs = Infinity;
      this.#watch.fired(now, Math.max(0, now - due));
      if (this.#wanted()) this.arm();
    });
  }

  /** The engine is done: its probe no longer counts (nor re-arms). */
  leave(): void {
    this.#left = true;
    this.dueMs = Infinity;
    this.#watch.leave(this);
  }
}
