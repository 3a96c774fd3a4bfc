/**
 * Closed windows on their way up: a shard's to its run's coordinator (or, in a run with an
 * aggregation tree, to its aggregator), and an aggregator's merged windows to its parent.
 * The sender stores each window (PendingWindows: a shard inside its state, an aggregator
 * under WINDOW_PREFIX) and tells the flusher; the flusher sends what is pending oldest
 * first, WINDOWS_PER_FLUSH at a time, and lets each batch go once acknowledged. A final flush carries the done flag and is retried with backoff until
 * the sender's grace ends, so an unreachable receiver never keeps the sender alive past that.
 *
 * The pending windows are mirrored in memory: listing them back from storage for every
 * flush deserialised each one again (a CPU profile of 16 shards at 100/s put that list at
 * 6% of the isolate's time).
 */
import { aggregatorName, type FlushAck, type ChildFlush, type ShardAssignment, type ShardTelemetry, type ShardWindow } from "../../core/run/protocol.ts";
import type { ObjectNamespaces } from "../env.ts";
import type { EngineClock } from "./engine-types.ts";

/**
 * What a sender calls on whoever takes its windows: the flush of core/run/protocol.ts. The
 * binding is typed by this surface, not by the RunCoordinator or aggregator class, so the
 * shard imports neither (coordinator/http/routes-env.ts checks that both offer it).
 */
export interface FlushReceiver extends Rpc.DurableObjectBranded {
  flush(message: ChildFlush): Promise<FlushAck>;
}

/** Where a sender's windows go, and who it is in each message. */
export interface FlushRoute {
  readonly runId: string;
  /** The sender's index as its receiver knows it. */
  readonly senderIndex: number;
  readonly receiver: { flush(message: ChildFlush): Promise<FlushAck> };
  /** After this (epoch ms) a failing flush gives up: the sender's deadline plus its grace. */
  readonly giveUpAtMs: number;
  /** "shard 3", "aggregator 1": for the log. */
  readonly sender: string;
}

/** The sender's progress, as each message reports it. */
export interface SenderProgress {
  /** Nothing more will be stored: the last flush may say done. */
  readonly finished: boolean;
  readonly watermarkS: number;
  readonly telemetry: ShardTelemetry;
}

const WINDOW_PREFIX = "window:";
/** Windows per flush RPC, so one message stays small. */
const WINDOWS_PER_FLUSH = 20;

/** The storage key of a window (in the run's numbering): stored windows list oldest first. */
export function windowKey(window: ShardWindow): string {
  return `${WINDOW_PREFIX}${String(window.windowS).padStart(8, "0")}:${window.part}`;
}

/** Where a sender keeps the windows not yet acknowledged. */
export interface PendingWindows {
  /** What is stored, by key (read once per instance, when it first flushes). */
  load(): Iterable<readonly [string, ShardWindow]>;
  /** These were acknowledged: they need not be kept (nor sent again). */
  acknowledged(keys: readonly string[]): void;
}

/** Windows kept one storage key each, under WINDOW_PREFIX: deleted once acknowledged. */
export function keyedPendingWindows(storage: DurableObjectStorage): PendingWindows {
  return {
    load: () => storage.kv.list<ShardWindow>({ prefix: WINDOW_PREFIX }),
    // Unconfirmed like the window's write: a gated delete would hold this isolate's next
    // sends until it is durable, and a lost one only re-sends windows the receiver skips.
    acknowledged: (keys) => void storage.delete([...keys], { allowUnconfirmed: true }),
  };
}

/** What the flusher reads from, and calls on, its sender. */
export interface FlusherHost {
  readonly pending: PendingWindows;
  readonly clock: EngineClock;
  /** Undefined before the sender has a run. */
  route(): FlushRoute | undefined;
  progress(): SenderProgress;
  /** The receiver answered that the run's figures are final: stop sending. */
  stopEngine(): void;
}

export class WindowFlusher {
  readonly #host: FlusherHost;
  #flushing: Promise<void> | null = null;
  #flushAgain = false;
  #finalRequested = false;
  /**
   * The receiver, made once and kept until a call on it fails: a stub per flush cost a name
   * lookup each second (2.5% of a 32-shard profile at 2/s each), and a stub whose object
   * was reset stays broken, so a failed one is made anew.
   */
  #route: FlushRoute | undefined;
  /** The receiver acknowledged this sender's done: it has nothing more to send. */
  #doneAcknowledged = false;
  /**
   * The stored windows not yet acknowledged, oldest first, by storage key. Null until this
   * instance first flushes, when it is read once from storage (windows a previous instance
   * left).
   */
  #pending: Map<string, ShardWindow> | null = null;

  constructor(host: FlusherHost) {
    this.#host = host;
  }

  /** A window was just stored under `key`: it is pending until acknowledged. */
  stored(key: string, window: ShardWindow): void {
    this.#pending?.set(key, window);
  }

  /** The receiver acknowledged this sender's done: all it measured is held above (its storage may go, shard-end.ts). */
  get doneAcknowledged(): boolean {
    return this.#doneAcknowledged;
  }

  /** Windows stored and not yet acknowledged (for inspect()). */
  storedCount(): number {
    return this.#pendingWindows().size;
  }

  /**
   * Sends pending windows to the receiver, oldest first, deleting each batch once
   * acknowledged. Single flight: a call while a flush runs makes that flush go round once
   * more (picking up a final request) instead of starting a second one. A failed
   * non-final flush is retried at the next window close; a final one retries with backoff
   * until the deadline grace ends.
   */
  flush(final: boolean): Promise<void> {
    if (this.#doneAcknowledged) return Promise.resolve();
    if (final) this.#finalRequested = true;
    if (this.#flushing) {
      this.#flushAgain = true;
      return this.#flushing;
    }
    this.#flushing = (async () => {
      do {
        this.#flushAgain = false;
        await this.#flushOnce(this.#finalRequested);
      } while (this.#flushAgain && !this.#doneAcknowledged);
    })().finally(() => (this.#flushing = null));
    return this.#flushing;
  }

  async #flushOnce(final: boolean): Promise<void> {
    const host = this.#host;
    for (let attempt = 0; ; attempt++) {
      const route = (this.#route ??= host.route());
      if (!route) return;
      const pending = this.#oldestPending(WINDOWS_PER_FLUSH);
      const progress = host.progress();
      const last = pending.length < WINDOWS_PER_FLUSH;
      const done = final && progress.finished && last;
      if (pending.length === 0 && !done) return;
      const message: ChildFlush = {
        runId: route.runId,
        childIndex: route.senderIndex,
        windows: pending.map(([, w]) => w),
        watermarkS: done ? Number.MAX_SAFE_INTEGER : progress.watermarkS,
        done,
        telemetry: progress.telemetry,
      };
      let ack: FlushAck;
      try {
        ack = await route.receiver.flush(message);
      } catch (error) {
        this.#route = undefined;
        if (host.clock.now() > route.giveUpAtMs) {
          console.warn(`${route.sender}: receiver unreachable past the grace period, giving up`, String(error));
          return;
        }
        if (!final) return; // the next window close retries
        await host.clock.sleep(Math.min(5_000, 200 * 2 ** attempt));
        continue;
      }
      for (const [key] of pending) this.#pending!.delete(key);
      host.pending.acknowledged(pending.map(([key]) => key));
      if (ack.stop) host.stopEngine();
      if (done) this.#doneAcknowledged = true;
      if (done || (!final && last)) return;
    }
  }

  #pendingWindows(): Map<string, ShardWindow> {
    return (this.#pending ??= new Map([...this.#host.pending.load()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
  }

  /** Up to `limit` windows not yet acknowledged, oldest first, with their storage keys. */
  #oldestPending(limit: number): Array<[string, ShardWindow]> {
    const oldest: Array<[string, ShardWindow]> = [];
    for (const entry of this.#pendingWindows()) {
      if (oldest.length === limit) break;
      oldest.push(entry);
    }
    return oldest;
  }
}

/** The namespaces a shard's windows go to: its run's coordinator, or its aggregator in a run with a tree. */
export type FlushReceivers = ObjectNamespaces<FlushReceiver, undefined, FlushReceiver>;

/** Where a shard's windows go: its aggregator in a run with a tree, else the coordinator. */
export function shardFlushRoute(env: FlushReceivers, a: ShardAssignment): FlushRoute {
  const receiver =
    a.reportsTo === undefined
      ? env.RUN_COORDINATOR.get(env.RUN_COORDINATOR.idFromName(a.runId))
      : env.RUN_AGGREGATOR.get(env.RUN_AGGREGATOR.idFromName(aggregatorName(a.runId, a.reportsTo)));
  const index = a.part?.runShard ?? a.shard.index;
  return { runId: a.runId, senderIndex: index, receiver, giveUpAtMs: a.deadlineMs + a.flushGraceMs, sender: `shard ${index}` };
}
