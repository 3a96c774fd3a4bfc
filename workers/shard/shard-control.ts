/**
 * A shard's level of an externally-controlled run (core/run/vu-control.ts): the newest its
 * coordinator told it, kept in its storage so that an instance restarted mid-run (or the next
 * invocation after a handoff) resumes at the current level, not the run's start level. The VU
 * executor follows it (executors/vus.ts) and is woken when it changes, so a scale-up starts
 * its VUs at once.
 */
import { initialControl, newerControl, type ExternalLimits, type VuControl } from "../../core/run/vu-control.ts";

const CONTROL_KEY = "control";

export class ShardControl {
  readonly #kv: SyncKvStorage;
  /** The level as stored (mirrored); null until the coordinator first changed it. */
  #told: VuControl | null | undefined;
  #changed: (() => void) | null = null;

  constructor(kv: SyncKvStorage) {
    this.#kv = kv;
  }

  /** The level to run at: the newest told, else the run's start level. */
  levelOf(limits: ExternalLimits): VuControl {
    return this.#stored() ?? initialControl(limits);
  }

  /**
   * A level from the coordinator: stored when newer than the one held (messages may cross),
   * and the executor woken. Returns the level now held.
   */
  tell(level: VuControl): VuControl {
    const held = this.#stored();
    const newest = newerControl(held, level);
    if (newest !== held) {
      this.#told = newest;
      this.#kv.put(CONTROL_KEY, newest);
      this.#changed?.();
    }
    return newest;
  }

  /** The running executor's wake; null when it ends. */
  follow(changed: (() => void) | null): void {
    this.#changed = changed;
  }

  #stored(): VuControl | null {
    if (this.#told === undefined) this.#told = this.#kv.get<VuControl>(CONTROL_KEY) ?? null;
    return this.#told;
  }
}
