/**
 * How long the generator's own event loop kept a response waiting: `client_delay`.
 *
 * A response that arrives while the isolate is busy (another shard's window flush, a merge,
 * garbage collection) is timed only when the loop gets to it, so the wait is added to its
 * latency as if the target had taken it. It cannot be seen directly — nothing timestamps
 * the bytes' arrival — so timers stand in as probes: while requests are in flight a timer
 * fires at least every PROBE_MS, the engines' own (an arrival schedule's wakes) or, when none
 * is due soon enough, a probe armed for it. A free loop fires them on time; a busy one fires
 * them late, by as long as it was busy. A response timed at `t` is given:
 *
 * - `t − due` when the earliest pending timer is overdue at `t`: the loop has been unable to
 *   run timers at least since `due`, so the response waited at least that long (a lower bound);
 * - otherwise the lateness of a timer that fired within the same millisecond: the response
 *   was let through by the end of the same stall;
 * - otherwise 0.
 *
 * So stalls shorter than PROBE_MS can go unseen, and longer ones are measured from their
 * start to within PROBE_MS: an estimate that errs low, never one that blames the generator
 * for the target's time. No clock of its own: the engine's `now` and `sleep` are passed in.
 */

/**
 * The longest the loop goes unlooked-at while requests are in flight: the resolution of the
 * estimate. The engines' own timers count (an arrival-rate shard wakes for each arrival), so
 * a shard whose arrivals come this often or more arms no probe timer of its own: a timer
 * wake costs a Durable Object about what a request's whole JavaScript does.
 */
export const PROBE_MS = 10;

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

/** An engine of the loop: whether it has requests in flight, and its own next timer. */
interface WatchedEngine {
  readonly wanted: () => boolean;
  /** Its pending timer's due time (Infinity: none): a wake that looks at the loop as a probe would. */
  timerDueMs: number;
  /**
   * Woken by its timer and not yet asleep again: it sets its next timer (or goes idle) in a
   * moment, and the probe is decided then, knowing when that timer is due.
   */
  awake: boolean;
}

/**
 * What an engine does with the loop's watch: arm it as a request leaves; show it its own
 * timers (an executor's sleep), which look at the loop as a probe would; say when it no
 * longer sets any (its loop ended, requests may still be in flight); leave.
 */
export interface LoopProbe {
  arm(): void;
  timerSet(dueMs: number): void;
  timerFired(dueMs: number): void;
  idle(): void;
  leave(): void;
}

/**
 * One event loop's watch, shared by the engines running in it (every shard, locally): a
 * single probe timer chain runs while any of them has requests in flight and no engine's
 * own timer is due within PROBE_MS, so the loop wakes at most once per PROBE_MS for it
 * whatever the number of shards, and not at all while the shards' arrivals wake it.
 */
export class LoopWatch {
  readonly #clock: ProbeClock;
  readonly #engines = new Set<WatchedEngine>();
  /** When the armed probe should fire; Infinity while not armed. */
  #dueMs = Infinity;
  /** The engine whose timer the armed probe is (its timer dies with its object). */
  #armedBy: WatchedEngine | null = null;
  /** The last look at the loop (a probe or an engine's timer): when, and how late. */
  #firedAtMs = -Infinity;
  #lateMs = 0;

  constructor(clock: ProbeClock) {
    this.#clock = clock;
  }

  /** An engine joins: the loop is watched while its `wanted()` (requests in flight) holds. */
  join(wanted: () => boolean): LoopProbe {
    const engine: WatchedEngine = { wanted, timerDueMs: Infinity, awake: false };
    this.#engines.add(engine);
    return {
      arm: () => {
        // Sent from a wake of its own: the timer it sets next decides.
        if (!engine.awake) this.#armUnlessWatched(engine);
      },
      timerSet: (dueMs) => {
        // It sleeps on one timer at a time: one it was woken before is no longer its schedule.
        engine.timerDueMs = dueMs;
        engine.awake = false;
        this.#keepWatching(engine);
      },
      timerFired: (dueMs) => {
        engine.timerDueMs = Infinity;
        engine.awake = true;
        this.#looked(dueMs);
      },
      idle: () => {
        engine.timerDueMs = Infinity;
        engine.awake = false;
        this.#keepWatching(engine);
      },
      leave: () => {
        this.#engines.delete(engine);
        // Its timer may not outlive it (an object evicted between invocations): the next
        // request of another engine arms a fresh one instead of waiting for it.
        if (this.#armedBy === engine) this.#dueMs = Infinity;
      },
    };
  }

  /** A timer due at `dueMs` fired now: the loop's delay is its lateness. */
  #looked(dueMs: number): void {
    const firedAt = this.#clock.now();
    this.#firedAtMs = firedAt;
    this.#lateMs = Math.max(0, firedAt - dueMs);
  }

  /** Whether a live timer (the probe, or an engine's) will look at the loop within PROBE_MS of `nowMs`. */
  #watchedAt(nowMs: number): boolean {
    const live = (dueMs: number) => dueMs <= nowMs + PROBE_MS && nowMs - dueMs < STALE_PROBE_MS;
    if (live(this.#dueMs)) return true;
    for (const engine of this.#engines) if (live(engine.timerDueMs)) return true;
    return false;
  }

  /** Arms the probe unless a live timer will look at the loop soon enough. */
  #armUnlessWatched(engine: WatchedEngine): void {
    const now = this.#clock.now();
    if (this.#watchedAt(now)) return;
    const due = now + PROBE_MS;
    this.#dueMs = due;
    this.#armedBy = engine;
    void this.#clock.sleep(PROBE_MS).then(() => {
      if (this.#dueMs !== due) return; // a stale chain, already replaced
      this.#dueMs = Infinity;
      this.#looked(due);
      this.#keepWatching(engine);
    });
  }

  /** After a look or a timer set: watched on while any engine has requests in flight. */
  #keepWatching(engine: WatchedEngine): void {
    for (const other of this.#engines) if (other.awake) return; // it decides when it sleeps again
    for (const other of this.#engines) {
      if (other.wanted()) {
        this.#armUnlessWatched(this.#engines.has(engine) ? engine : other);
        return;
      }
    }
  }

  /** The estimated event-loop delay of a response timed at `nowMs`, in ms. */
  delayAt(nowMs: number): number {
    // Overdue: the earliest timer still pending should have fired; the loop has been busy since.
    let dueMs = this.#dueMs;
    for (const engine of this.#engines) dueMs = Math.min(dueMs, engine.timerDueMs);
    const overdue = nowMs - dueMs;
    if (overdue > 0 && overdue < STALE_PROBE_MS) return overdue;
    return nowMs - this.#firedAtMs < 1 ? this.#lateMs : 0;
  }
}
