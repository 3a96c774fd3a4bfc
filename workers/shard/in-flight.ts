/**
 * The iterations a shard has in flight: how many now (the open model's cap drops what it
 * cannot take), the peak (reported in the shard's telemetry), and waiting until none is
 * left at the end of a slice, with request timeouts still enforced meanwhile.
 */
import type { EngineClock } from "./engine-types.ts";
import type { TimeoutQueue } from "./timeout-queue.ts";

export class InFlightIterations {
  #count = 0;
  #peak = 0;
  /** drain() waiting for the count to reach zero. */
  readonly #idle: Array<() => void> = [];

  get count(): number {
    return this.#count;
  }

  get peak(): number {
    return this.#peak;
  }

  /** An iteration started. */
  add(): void {
    this.#count++;
    if (this.#count > this.#peak) this.#peak = this.#count;
  }

  /** An iteration ended (however it ended). */
  remove(): void {
    this.#count--;
    if (this.#count === 0 && this.#idle.length) for (const resolve of this.#idle.splice(0)) resolve();
  }

  /** Waits until no iteration is in flight, sweeping `timeouts` at least once a second meanwhile. */
  async drain(timeouts: TimeoutQueue, clock: EngineClock): Promise<void> {
    while (this.#count > 0) {
      const idle = new Promise<void>((resolve) => this.#idle.push(resolve));
      const untilTimeout = Math.max(1, timeouts.nextDeadlineMs - clock.now());
      await Promise.race([idle, clock.sleep(Math.min(untilTimeout, 1000))]);
      timeouts.sweep(clock.now());
    }
  }
}
