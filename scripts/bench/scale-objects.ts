/**
 * The objects of a run's reporting path as the scale simulation (scale-simulation.ts) runs
 * them in Node, on one virtual clock: an aggregator (the real AggregatorBook and
 * WindowFlusher, as RunAggregator drives them) and the coordinator's flush intake and tick
 * (the real takeInFlush, ChildProgress and showClosedWindows, as RunCoordinator drives
 * them), their SQL storage over node:sqlite; the shards are in scale-shard.ts.
 *
 * The Durable Objects themselves cannot run in Node (cloudflare:workers), so the few lines
 * of each that wire those pieces together are repeated here; each class names the methods
 * it mirrors. What the simulation adds is measurement (scale-meter.ts): every request into
 * an object (a flush, a tick) is counted by virtual second, and the object's own work is
 * timed with performance.now() — only synchronous sections, so another object's work is
 * never counted.
 *
 * An RPC between objects takes `hopMs` each way on the virtual clock (an assumption, see
 * scale-simulation.ts), and its message is structured-cloned, as an RPC's is.
 */
import { reportersOf, type AggregatorPlan } from "../../core/plan/aggregation-tree.ts";
import type { ThresholdSet } from "../../core/metrics/thresholds.ts";
import type { FlushAck, ChildFlush, ShardWindow } from "../../core/run/protocol.ts";
import { parseRunThresholds, shouldAbortRun } from "../../core/run/run-thresholds.ts";
import { RunTotals } from "../../core/run/run-totals.ts";
import { AggregatorBook, aggregatorNode, finishStep, type AggregatorNode, type Intake } from "../../coordinator/aggregator/aggregator-book.ts";
import { IntakeBatch } from "../../coordinator/merge/intake-batch.ts";
import { takeInFlush } from "../../coordinator/merge/flush-intake.ts";
import { FlushLog } from "../../coordinator/merge/flush-log.ts";
import { LiveFeed } from "../../coordinator/run/live-feed.ts";
import { OpenWindows } from "../../coordinator/merge/open-windows.ts";
import type { RunRecord } from "../../coordinator/run/run-record.ts";
import { CHECKPOINT_EVERY_MS, TICK_MS } from "../../coordinator/merge/ticks.ts";
import { UnwrittenWindows, showClosedWindows } from "../../coordinator/run/window-writes.ts";
import { ChildProgress } from "../../coordinator/merge/child-progress.ts";
import { type PendingWindows, WindowFlusher, windowKey } from "../../workers/shard/window-flusher.ts";
import { nodeSqlStorage, type NodeSqlStorage } from "../../test/support/node-sql-storage.ts";
import type { VirtualTime } from "../../test/support/virtual-time.ts";
import { type ObjectKind, ObjectMeter, type Span } from "./scale-meter.ts";

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
function meterOf(sim: SimContext, kind: ObjectKind, name: string): ObjectMeter {
  return new ObjectMeter(kind, name, () => Math.floor((sim.time.now - sim.t0Ms) / 1000));
}

/** A Durable Object alarm on the virtual clock: set() moves it (earlier or later), fired() waits for it. */
class SimAlarm {
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

/** An aggregator as RunAggregator drives its book: flush(), abort(), the alarm's tick, its shards' D1 rows. */
export class SimAggregator implements FlushTarget {
  readonly meter: ObjectMeter;
  readonly node: AggregatorNode;
  readonly #sim: SimContext;
  readonly #storage: NodeSqlStorage;
  readonly #book: AggregatorBook;
  readonly #intake: IntakeBatch<ChildFlush, Intake>;
  readonly #alarm: SimAlarm;
  readonly #pending = new MemoryPending(1);
  readonly #flusher: WindowFlusher;
  #endArmed = false;
  #stopping = false;
  #lastCheckpointMs = 0;

  constructor(sim: SimContext, planned: AggregatorPlan, run: RunRecord, flushGraceMs: number, parent: () => FlushTarget) {
    this.#sim = sim;
    this.meter = meterOf(sim, "aggregator", `aggregator ${planned.index}`);
    this.node = aggregatorNode(planned, run, flushGraceMs);
    this.#storage = nodeSqlStorage();
    this.#book = new AggregatorBook(this.#storage.storage, this.node);
    this.#intake = new IntakeBatch<ChildFlush, Intake>(
      (messages) => {
        const intakes = this.meter.timed(
          () => this.#book.takeAll(messages, sim.time.now),
          "intake",
          (taken) => taken.reduce((sum, i) => sum + i.accepted, 0),
        );
        for (const { accepted } of intakes) this.meter.windowsTaken += accepted;
        return intakes;
      },
      (ms) => sim.time.sleep(ms),
    );
    this.#alarm = new SimAlarm(sim.time, run.t0Ms + TICK_MS);
    const route = {
      runId: run.runId,
      senderIndex: planned.index,
      receiver: rpc(sim, parent),
      giveUpAtMs: this.node.deadlineMs + this.node.flushGraceMs,
      sender: `aggregator ${planned.index}`,
    };
    this.#flusher = new WindowFlusher({
      pending: this.#pending,
      clock: sim.time.clock,
      route: () => route,
      progress: () => ({ finished: this.#book.finished(sim.time.now), watermarkS: this.#book.watermarkS, telemetry: this.#book.telemetry() }),
      stopEngine: () => (this.#stopping = true),
    });
  }

  /** RunAggregator.flush(): held with the others of a quarter-second, taken in as one log row. */
  async flush(message: ChildFlush): Promise<FlushAck> {
    this.meter.request(message.done);
    this.#book.assertChild(message.childIndex);
    const { accepted, duplicates } = await this.#intake.add(message);
    if (this.#book.allChildrenDone && !this.#endArmed) {
      this.#endArmed = true;
      this.#alarm.set(this.#sim.time.now);
    }
    return { accepted, duplicates, stop: this.#stopping };
  }

  /** RunAggregator.abort(), this node's part (the simulation passes it down the edges). */
  abort(): void {
    this.#stopping = true;
  }

  /** Storage rows it wrote: its SQLite tables (log, progress, meta), its outbox and its alarms. */
  get storageRowsWritten(): number {
    return this.#storage.rowsWritten + this.#pending.rowsWritten + this.#alarm.sets;
  }

  /** RunAggregator.alarm(), every tick until it has passed everything up. */
  async run(): Promise<void> {
    for (;;) {
      await this.#alarm.fired();
      this.meter.request();
      this.#intake.takeNow(); // RunAggregator.alarm(): what has arrived is in before the cut-off
      const now = this.#sim.time.now;
      const finished = this.#book.finished(now);
      this.meter.timed(() => {
        for (const window of this.#book.closeDue(now, finished)) {
          const key = windowKey(window);
          this.#pending.put([[key, window]]);
          this.#flusher.stored(key, window);
        }
        if (now - this.#lastCheckpointMs >= CHECKPOINT_EVERY_MS) {
          this.#book.checkpoint();
          this.#lastCheckpointMs = now;
        }
      }, "tick");
      if (!finished) {
        this.#alarm.set(now + TICK_MS);
        await this.#flusher.flush(false);
        continue;
      }
      // Its shards' rows before its done goes up (RunAggregator.alarm(), finishStep).
      const step = finishStep(this.node, false, now, this.#sim.time.now);
      if (step.kind === "wait-for-rows") {
        await this.#flusher.flush(false);
        await this.#sim.time.sleep(step.untilMs - this.#sim.time.now);
      }
      if (step.kind !== "send-done") await this.#writeShardRows(this.#sim.time.now);
      await this.#flusher.flush(true);
      return;
    }
  }

  /** RunAggregator's #writeShardRows: one UPDATE per shard, in one batch. */
  #writeShardRows(nowMs: number): Promise<unknown> {
    const db = this.#sim.db;
    const statements = this.meter.timed(() => this.#book.shardRowStatements(db, nowMs));
    return db.batch(statements);
  }
}

/** The coordinator's part in the reporting path, as RunCoordinator does it: flush() and the tick's window writes. */
export class SimCoordinator implements FlushTarget {
  readonly meter: ObjectMeter;
  readonly totals = new RunTotals();
  readonly #sim: SimContext;
  readonly #run: RunRecord;
  readonly #reporters: ReadonlyMap<number, string>;
  readonly #storage: NodeSqlStorage;
  readonly #log: FlushLog;
  readonly #shards: ChildProgress;
  readonly #open = new OpenWindows();
  readonly #unwritten = new UnwrittenWindows();
  readonly #live: LiveFeed;
  readonly #thresholds: ThresholdSet;
  readonly #alarm: SimAlarm;
  #stopping = false;
  #finished = false;
  #lastCheckpointMs = 0;
  /** When every reporter had sent its final flush (virtual ms). */
  everyoneDoneAtMs: number | null = null;

  constructor(sim: SimContext, run: RunRecord) {
    this.#sim = sim;
    this.#run = run;
    this.meter = meterOf(sim, "coordinator", "coordinator");
    this.#reporters = new Map(reportersOf(run.plan).map((r) => [r.index, r.region]));
    this.#storage = nodeSqlStorage();
    const sql = this.#storage.storage;
    this.#log = new FlushLog(sql);
    this.#shards = new ChildProgress(sql);
    this.#live = new LiveFeed(sql);
    this.#thresholds = parseRunThresholds(run.spec);
    this.#alarm = new SimAlarm(sim.time, run.t0Ms + TICK_MS);
  }

  /** RunCoordinator.flush(). */
  flush(message: ChildFlush): FlushAck {
    this.meter.request(message.done);
    const region = this.#reporters.get(message.childIndex);
    if (region === undefined) throw new Error(`unknown reporter ${message.childIndex}`);
    // After the run's figures are final: tell the sender to stop.
    if (this.#finished) return { accepted: 0, duplicates: 0, stop: true };
    const { accepted, duplicates } = this.meter.timed(
      () => {
        const intake = takeInFlush(this.#log, this.#open, this.totals, message, region);
        if (intake.latest) this.#live.noteShard(message.childIndex, intake.latest);
        this.#shards.record(message.childIndex, message.watermarkS, message.done, message.telemetry, this.#sim.time.now);
        return intake;
      },
      "intake",
      (intake) => intake.accepted,
    );
    this.meter.windowsTaken += accepted;
    if (this.#shards.doneCount === this.#reporters.size) {
      this.everyoneDoneAtMs ??= this.#sim.time.now;
      this.#alarm.set(this.#sim.time.now);
    }
    return { accepted, duplicates, stop: this.#stopping };
  }

  /** RunCoordinator.abort(), this object's part: its acks say stop from now on. */
  abort(): void {
    this.#stopping = true;
  }

  /** Storage rows it wrote on the reporting path: its SQLite tables (log, progress, live feed) and its alarms. */
  get storageRowsWritten(): number {
    return this.#storage.rowsWritten + this.#alarm.sets;
  }

  /**
   * RunCoordinator's #tick() as far as the reporting path goes: take the closed windows to
   * the live feed and write them when due, evaluate abortOnFail thresholds, checkpoint; the
   * last tick once every reporter is done. showClosedWindows awaits D1 in the middle: the
   * parts before and after are timed apart, so no other object's work in between is booked
   * to the coordinator. What runs when D1 answers (marking the log rows written, one
   * SQLite upsert every few ticks) is not booked.
   */
  async run(): Promise<void> {
    let spans: Span[] = [];
    for (;;) {
      await this.#alarm.fired();
      this.meter.request();
      const now = this.#sim.time.now;
      const everyoneDone = this.#shards.doneCount === this.#reporters.size;
      spans = [];
      let start = performance.now();
      const written = showClosedWindows(
        { db: this.#sim.db, open: this.#open, unwritten: this.#unwritten, log: this.#log, shards: this.#shards, live: this.#live },
        this.#run,
        now,
        everyoneDone,
      );
      spans.push([start, performance.now()]);
      await written;
      start = performance.now();
      if (!everyoneDone) {
        shouldAbortRun(this.#run.spec, this.totals, now - this.#run.t0Ms, this.#thresholds);
        if (now - this.#lastCheckpointMs >= CHECKPOINT_EVERY_MS) {
          this.#log.checkpoint(this.totals, () => {});
          this.#lastCheckpointMs = now;
        }
      }
      spans.push([start, performance.now()]);
      this.meter.book(spans, "tick");
      if (everyoneDone) {
        this.#finished = true;
        return;
      }
      this.#alarm.set(now + TICK_MS);
    }
  }
}
