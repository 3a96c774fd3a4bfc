/**
 * The engine's two kinds of sleep, both cut short when the run stops: the executor's wait
 * until its next wake-up (one at a time, woken early by wake()), and the flows' think
 * times (any number at once, woken by wakeThinkers() at stop() or the shard's deadline).
 * The clock is injected, so tests run them in virtual time.
 */
import { IterationInterrupted } from "../../scenarios/flow.ts";
import type { EngineClock } from "./engine-types.ts";
import type { LoopProbe } from "../../core/metrics/loop-delay.ts";

export class EngineSleeps {
  readonly #clock: EngineClock;
  /** Whether stop() was called on the engine: nothing sleeps any more. */
  readonly #isStopped: () => boolean;
  #wake: (() => void) | null = null;
  /** Think times in progress: cut short by stop() or the deadline. */
  readonly #thinkers = new Set<() => void>();

  /** The loop's watch (core/metrics/loop-delay.ts): the executor's wakes are its probes too. */
  readonly #probe: Pick<LoopProbe, "timerSet" | "timerFired"> | null;

  constructor(clock: EngineClock, isStopped: () => boolean, probe: Pick<LoopProbe, "timerSet" | "timerFired"> | null = null) {
    this.#clock = clock;
    this.#isStopped = isStopped;
    this.#probe = probe;
  }

  /** The executor's sleep: woken early by wake(), never before the next millisecond. */
  sleep(ms: number): Promise<void> {
    // Wake on the next millisecond boundary; the pacer re-checks and never sends early.
    const waitMs = Math.max(1, Math.ceil(ms));
    const dueMs = this.#clock.now() + waitMs;
    this.#probe?.timerSet(dueMs);
    return new Promise<void>((resolve) => {
      this.#wake = resolve;
      void this.#clock.sleep(waitMs).then(() => {
        // Its lateness is the loop's, unless wake() ended this sleep before it (another sleep may be on).
        if (this.#wake === resolve) this.#probe?.timerFired(dueMs);
        resolve();
      });
    }).finally(() => (this.#wake = null));
  }

  /** Ends the executor's sleep now, if it is sleeping. */
  wake(): void {
    this.#wake?.();
  }

  /**
   * Think time for a flow: resolves after `ms`, or throws IterationInterrupted at
   * `stopAtMs` (the iteration's hard stop or the deadline, whichever is first), or at once
   * when the run is stopped.
   */
  async think(ms: number, stopAtMs: number): Promise<void> {
    const now = this.#clock.now();
    const until = Math.min(now + Math.max(0, ms), stopAtMs);
    if (!this.#isStopped() && until > now) {
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      this.#thinkers.add(wake);
      void this.#clock.sleep(until - now).then(wake);
      await woken;
      this.#thinkers.delete(wake);
    }
    if (this.#isStopped()) throw new IterationInterrupted("run stopped");
    if (now + ms > stopAtMs) throw new IterationInterrupted("think time passed the iteration's stop time");
  }

  /** Cuts every think time in progress short. */
  wakeThinkers(): void {
    for (const wake of this.#thinkers) wake();
  }
}
