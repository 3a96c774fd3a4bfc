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

/** The probe's period: resolution of the estimate versus one timer wake per period. */
export const PROBE_MS = 5;

export interface ProbeClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export class LoopDelayProbe {
  readonly #clock: ProbeClock;
  /** When the armed probe should fire; Infinity while not armed. */
  #dueMs = Infinity;
  /** The last firing: when, and how late. */
  #firedAtMs = -Infinity;
  #lateMs = 0;
  /** Whether to re-arm after a firing (some requests are still in flight). */
  readonly #wanted: () => boolean;

  constructor(clock: ProbeClock, wanted: () => boolean) {
    this.#clock = clock;
    this.#wanted = wanted;
  }

  /** Arms the probe if it is not already: call when a request leaves. */
  arm(): void {
    if (this.#dueMs !== Infinity) return;
    const due = this.#clock.now() + PROBE_MS;
    this.#dueMs = due;
    void this.#clock.sleep(PROBE_MS).then(() => {
      const now = this.#clock.now();
      this.#firedAtMs = now;
      this.#lateMs = Math.max(0, now - due);
      this.#dueMs = Infinity;
      if (this.#wanted()) this.arm();
    });
  }

  /** The estimated event-loop delay of a response timed at `nowMs`, in ms. */
  delayAt(nowMs: number): number {
    if (nowMs > this.#dueMs) return nowMs - this.#dueMs;
    if (nowMs - this.#firedAtMs < 1) return this.#lateMs;
    return 0;
  }
}
