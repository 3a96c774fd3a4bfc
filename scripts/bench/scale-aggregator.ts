/**
 * An aggregator of the scale simulation (scale-simulation.ts), in Node on the virtual clock:
 * the real AggregatorBook and WindowFlusher, driven as RunAggregator drives them (flush(),
 * abort(), the alarm's tick, its shards' D1 rows), its SQL storage over node:sqlite. What it
 * shares with the other simulated objects (the clock, RPC, alarm, pending windows, meter) is
 * in scale-objects.ts.
 */
import type { AggregatorPlan } from "../../core/plan/aggregation-tree.ts";
import type { FlushAck, ChildFlush } from "../../core/run/protocol.ts";
import { AggregatorBook, aggregatorNode, finishStep, type AggregatorNode, type Intake } from "../../coordinator/aggregator/aggregator-book.ts";
import { IntakeBatch } from "../../coordinator/merge/intake-batch.ts";
import type { RunRecord } from "../../coordinator/run/run-record.ts";
import { CHECKPOINT_EVERY_MS, TICK_MS } from "../../coordinator/merge/ticks.ts";
import { WindowFlusher, windowKey } from "../../workers/shard/window-flusher.ts";
import { nodeSqlStorage, type NodeSqlStorage } from "../../test/support/node-sql-storage.ts";
import type { ObjectMeter } from "./scale-meter.ts";
import { type FlushTarget, jsonBytes, MemoryPending, meterOf, rpc, SimAlarm, type SimContext } from "./scale-objects.ts";

/** An aggregator as RunAggregator drives its book: start(), flush(), abort(), the alarm's tick, its shards' D1 rows, cleanUp(). */
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
  /** RPCs into it besides flushes (start, abort, cleanUp): billed requests, invocations Workers Logs may log. */
  #rpcs = 0;
  /** Its storage was deleted (cleanUp): it holds nothing. */
  #cleaned = false;
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

  /** RunAggregator.start(), this node's part (the simulation passes nothing down: it counts the RPC). */
  start(): void {
    this.#rpcs++;
  }

  /** RunAggregator.abort(), this node's part (the simulation passes it down the edges). */
  abort(): void {
    this.#rpcs++;
    this.#stopping = true;
  }

  /** RunAggregator.cleanUp(), this node's part (the simulation passes it down the edges): its storage goes. */
  cleanUp(): void {
    this.#rpcs++;
    this.#cleaned = true;
  }

  /** Billed requests into it: flushes, alarms (ticks, and the one a level-1 node waits for its rows with) and RPCs. */
  get requests(): number {
    return [...this.meter.requestsBySecond.values()].reduce((a, b) => a + b, 0) + this.#rpcs;
  }

  /** Storage rows it wrote: its SQLite tables (log, progress, meta), its outbox and its alarms. */
  get storageRowsWritten(): number {
    return this.#storage.rowsWritten + this.#pending.rowsWritten + this.#alarm.sets;
  }

  /**
   * Bytes its storage holds (issue 49): its SQLite database and the merged windows not yet
   * acknowledged; nothing once cleaned up (RunAggregator.cleanUp deletes everything).
   */
  get storageBytes(): number {
    return this.#cleaned ? 0 : this.#storage.storage.databaseSize + jsonBytes([...this.#pending.load()]);
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
        this.meter.request(); // the alarm it set for its rows: an invocation of its own
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
