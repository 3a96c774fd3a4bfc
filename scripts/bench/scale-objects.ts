/**
 * What the objects of a run's reporting path share as the scale simulation
 * (scale-simulation.ts) runs them in Node, on one virtual clock: the clock and network
 * (SimContext), an RPC between two objects, a Durable Object's alarm, a sender's pending
 * windows and each object's meter. The objects themselves are in scale-shard.ts,
 * scale-aggregator.ts and scale-coordinator.ts.
 *
 * The Durable Objects themselves cannot run in Node (cloudflare:workers), so the few lines
 * of each that wire the real pieces together are repeated in those files; each class names
 * the methods it mirrors. What the simulation adds is measurement (scale-meter.ts): every
 * request into an object (a flush, a tick) is counted by virtual second, and the object's
 * own work is timed with performance.now() — only synchronous sections, so another object's
 * work is never counted.
 *
 * An RPC between objects takes `hopMs` each way on the virtual clock (an assumption, see
 * scale-simulation.ts), and its message is structured-cloned, as an RPC's is.
 */
import type { FlushAck, ChildFlush, ShardWindow } from "../../core/run/protocol.ts";
import type { PendingWindows } from "../../workers/shard/window-flusher.ts";
import type { VirtualTime } from "../../test/support/virtual-time.ts";
import { type ObjectKind, ObjectMeter } from "./scale-meter.ts";

/** The clock and network every simulated object shares. */
export interface SimContext {
  readonly time: VirtualTime;
  readonly t0Ms: number;
  /** One-way latency of an RPC between two objects, virtual ms. */
  readonly hopMs: number;
  readonly db: D1Database;
}

/** Whoever takes flushes: an aggregator or the coordinator (the flush of core/run/protocol.ts). */
export interface FlushTarget {
  flush(message: ChildFlush): FlushAck | Promise<FlushAck>;
}

/** A flush over a simulated RPC: `hopMs` there, the receiver's work, `hopMs` back. */
export function rpc(sim: SimContext, target: () => FlushTarget): { flush(message: ChildFlush): Promise<FlushAck> } {
  return {
    flush: async (message) => {
      const copy = structuredClone(message);
      await sim.time.sleep(sim.hopMs);
      const ack = await target().flush(copy);
      await sim.time.sleep(sim.hopMs);
      return ack;
    },
  };
}

/** The meter of an object of `sim`, counting by virtual second of the run. */
export function meterOf(sim: SimContext, kind: ObjectKind, name: string): ObjectMeter {
  return new ObjectMeter(kind, name, () => Math.floor((sim.time.now - sim.t0Ms) / 1000));
}

/** A Durable Object alarm on the virtual clock: set() moves it (earlier or later), fired() waits for it. */
export class SimAlarm {
  readonly #time: VirtualTime;
  #atMs: number;
  #wake: (() => void) | null = null;
  /** Each setAlarm() is a storage row written (the first, when the object arms it, included). */
  sets = 1;

  constructor(time: VirtualTime, atMs: number) {
    this.#time = time;
    this.#atMs = atMs;
  }

  set(atMs: number): void {
    this.#atMs = atMs;
    this.sets++;
    this.#wake?.();
  }

  async fired(): Promise<void> {
    while (this.#time.now < this.#atMs) {
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        void this.#time.sleep(this.#atMs - this.#time.now).then(resolve);
      });
      this.#wake = null;
    }
  }
}

/** A sender's windows stored and not yet acknowledged (a shard keeps them in its state, an aggregator under their keys), in memory. */
/** Bytes of a value stored as JSON (UTF-8): what a Durable Object's key-value storage holds of it, before SQLite's overhead. */
export function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length;
}

export class MemoryPending implements PendingWindows {
  readonly #windows = new Map<string, ShardWindow>();
  readonly #rowsPerDeletion: number;
  /** Storage rows the object writes for them: a row a window stored, and `rowsPerDeletion` a window let go. */
  rowsWritten = 0;

  /** An aggregator deletes each acknowledged window's key (1); a shard drops it from its state at the next write (0). */
  constructor(rowsPerDeletion: 0 | 1) {
    this.#rowsPerDeletion = rowsPerDeletion;
  }

  /** Stores windows in one write (`rows`): an aggregator's one at a time, a shard's with its state. */
  put(windows: ReadonlyArray<readonly [string, ShardWindow]>, rows = 1): void {
    for (const [key, window] of windows) this.#windows.set(key, window);
    this.rowsWritten += rows;
  }

  load(): Iterable<readonly [string, ShardWindow]> {
    return this.#windows;
  }

  acknowledged(keys: readonly string[]): void {
    for (const key of keys) this.#windows.delete(key);
    this.rowsWritten += keys.length * this.#rowsPerDeletion;
  }
}
