/**
 * A LoadShard's stored record, mirrored in memory: its assignment, its state (with the
 * windows not yet acknowledged), the windows held between writes, and whether it has let go
 * of its storage (shard-end.ts). The object is its only writer, so each is read from storage
 * once per instance: the assignment holds the whole spec, and reading it back (a
 * deserialisation) for every flush of every window was the largest storage cost of a shard.
 */
import type { ShardAssignment, ShardWindow } from "../../core/run/protocol.ts";
import { withSlice } from "../../core/schedule/shard-slice.ts";
import { withHeldWindows, type ShardState } from "./shard-state.ts";

export class ShardRecord {
  readonly #storage: DurableObjectStorage;
  /** A window is stored now (a write of the state included it): it may be sent. */
  readonly #onStored: (key: string, window: ShardWindow) => void;
  #assignment: ShardAssignment | undefined;
  #state: ShardState | undefined;
  /**
   * Windows closed since the state was last written, with the keys they will be stored
   * under: kept in memory, unsent, until the next write (assignment.windowsPerWrite).
   */
  #held: Array<readonly [string, ShardWindow]> = [];
  #writtenWatermarkS: number | undefined;
  #letGo = false;

  constructor(storage: DurableObjectStorage, onStored: (key: string, window: ShardWindow) => void) {
    this.#storage = storage;
    this.#onStored = onStored;
  }

  assignment(): ShardAssignment | undefined {
    if (this.#assignment) return this.#assignment;
    // One stored before slices (a deploy during its run) has the plan's weights: read as its slice.
    const stored = this.#storage.kv.get<ShardAssignment>("assignment");
    return (this.#assignment = stored && withSlice(stored));
  }

  storeAssignment(assignment: ShardAssignment): void {
    if (this.#letGo) return;
    this.#storage.kv.put("assignment", assignment);
    this.#assignment = assignment;
  }

  state(): ShardState | undefined {
    return (this.#state ??= this.#storage.kv.get<ShardState>("state"));
  }

  /** The state changed in memory only: the next write stores it. */
  keepInMemory(state: ShardState): void {
    this.#state = state;
  }

  /** Writes `state` with the windows held until now, which are then pending (sent from now on). */
  save(state: ShardState): void {
    if (this.#letGo) return;
    const written = withHeldWindows(state, this.#held);
    this.#storage.kv.put("state", written);
    this.#written(written);
  }

  /** Holds a closed window until the next write; how many are held now. */
  hold(key: string, window: ShardWindow): number {
    this.#held.push([key, window]);
    return this.#held.length;
  }

  /**
   * Writes `state` with the held windows and the `also` keys (the flow's state) without
   * waiting for the write to be confirmed (see LoadShard's #windowClosed for why).
   */
  saveUnconfirmed(state: ShardState, also: Record<string, unknown>): void {
    if (this.#letGo) return;
    const written = withHeldWindows(state, this.#held);
    void this.#storage.put<unknown>({ state: written, ...also }, { allowUnconfirmed: true });
    this.#written(written);
  }

  /** Writes only the `also` keys, unconfirmed: the state stays in memory. */
  putUnconfirmed(also: Record<string, unknown>): void {
    if (!this.#letGo) void this.#storage.put<unknown>(also, { allowUnconfirmed: true });
  }

  /** The watermark of the state last written: what flushes report, so no receiver cuts off a window still held. */
  get writtenWatermarkS(): number | undefined {
    return this.#writtenWatermarkS;
  }

  /** The storage was let go of: nothing may write it again. */
  get letGo(): boolean {
    return this.#letGo;
  }

  /** Deletes the storage by `deletion`, and what is mirrored of it, never to write it again. */
  async letGoOf(deletion: () => Promise<void>): Promise<void> {
    this.#letGo = true;
    await deletion();
    this.#assignment = undefined;
    this.#state = undefined;
    this.#held = [];
  }

  #written(written: ShardState): void {
    this.#state = written;
    this.#writtenWatermarkS = written.watermarkS;
    for (const [key, window] of this.#held) this.#onStored(key, window);
    this.#held = [];
  }
}
