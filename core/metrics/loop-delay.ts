/**
 * How long the generator's own event loop kept a response waiting: `client_delay`.
 *
 * A response that arrives while the isolate is busy (another shard's window flush, a merge,
 * garbage collection) is timed only when the loop gets to it, so the wait is added to its
 * latency as if the target had taken it. It cannot be seen directly — nothing timestamps
 * the bytes' arrival — so a probe stands in: a timer re-armed every PROBE_MS while requests
 * are in flight. A free loop fires it on time; a busy one fires it late, by as long as it
 * was busy. A response timed at `t` is given:
 *
 * - `t − due` when the probe is overdue at `t`: the loop has been unable to run timers at
 *   least since `due`, so the response waited at least that long (a lower bound);
 * - otherwise the probe's lateness when it fired within the same millisecond: the response
 *   was let through by the end of the same stall;
 * - otherwise 0.
 *
 * So stalls shorter than PROBE_MS can go unseen, and longer ones are measured from their
 * start to within PROBE_MS: an estimate that errs low, never one that blames the generator
 * for the target's time. No clock of its own: the engine's `now` and `sleep` are passed in.
 */

/** The probing period: resolution of the estimate versus one timer wake per period. */
export const PROBE_MS = 5;

/**
 * A probe overdue by more than this is taken for one whose timer is gone (the object that
 * armed it was evicted) rather than for a stall that long: it is re-armed, and responses
 * are not charged for it — erring low, as the estimate does.
 */
export const STALE_PROBE_MS = 2_000;

export interface ProbeClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/**
 * One event loop's probe, shared by the engines running in it (every shard, locally): a
 * single timer chain runs while any of them has requests in flight, so the loop wakes once
 * per PROBE_MS whatever the number of shards.
 */
export class LoopWatch {
  readonly #clock: ProbeClock;
  readonly #wanted = new Set<() => boolean>();
  /** When the armed probe should fire; Infinity while not armed. */
  #dueMs = Infinity;
  /** The engine whose timer the armed probe is (its timer dies with its object). */
  #armedBy: object | null = null;
  /** The last firing: when, and how late. */
  #firedAtMs = -Infinity;
  #lateMs = 0;

  constructor(clock: ProbeClock) {
    this.#clock = clock;
  }

  /** An engine joins: the probe runs while its `wanted()` (requests in flight) holds. */
  join(wanted: () => boolean): { arm: () => void; leave: () => void } {
    this.#wanted.add(wanted);
    const engine = {};
    return {
      arm: () => this.#arm(engine),
      leave: () => {
        this.#wanted.delete(wanted);
        // Its timer may not outlive it (an object evicted between invocations): the next
        // request of another engine arms a fresh one instead of waiting for it.
        if (this.#armedBy === engine) this.#dueMs = Infinity;
      },
    };
  }

  /** Arms the probe unless a live one is pending: called when a request leaves. */
  #arm(engine: object): void {
    const now = this.#clock.now();
    if (this.#dueMs !== Infinity && now - this.#dueMs < STALE_PROBE_MS) return;
    const due = now + PROBE_MS;
    this.#dueMs = due;
    this.#armedBy = engine;
    void this.#clock.sleep(PROBE_MS).then(() => {
      if (this.#dueMs !== due) return; // a stale chain, already replaced
      const firedAt = this.#clock.now();
      this.#dueMs = Infinity;
      this.#firedAtMs = firedAt;
      this.#lateMs = Math.max(0, firedAt - due);
      for (const wanted of this.#wanted) {
        if (wanted()) {
          this.#arm(engine);
          return;
        }
      }
    });
  }

  /** The estimated event-loop delay of a response timed at `nowMs`, in ms. */
  delayAt(nowMs: number): number {
    const overdue = nowMs - this.#dueMs;
    if (overdue > 0 && overdue < STALE_PROBE_MS) return overdue;
    return nowMs - this.#firedAtMs < 1 ? this.#lateMs : 0;
  }
}
