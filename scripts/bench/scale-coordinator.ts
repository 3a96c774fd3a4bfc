/**
 * The coordinator of the scale simulation (scale-simulation.ts), in Node on the virtual
 * clock: its part in the reporting path as RunCoordinator does it — the real takeInFlush,
 * ChildProgress and showClosedWindows behind flush() and the tick's window writes — its SQL
 * storage over node:sqlite. What it shares with the other simulated objects (the clock, the
 * alarm, the meter) is in scale-objects.ts.
 */
import { reportersOf } from "../../core/plan/aggregation-tree.ts";
import type { ThresholdSet } from "../../core/metrics/thresholds.ts";
import type { FlushAck, ChildFlush } from "../../core/run/protocol.ts";
import { parseRunThresholds, shouldAbortRun } from "../../core/run/run-thresholds.ts";
import { RunTotals } from "../../core/run/run-totals.ts";
import { takeInFlush } from "../../coordinator/merge/flush-intake.ts";
import { FlushLog } from "../../coordinator/merge/flush-log.ts";
import { LiveFeed } from "../../coordinator/run/live-feed.ts";
import { OpenWindows } from "../../coordinator/merge/open-windows.ts";
import type { RunRecord } from "../../coordinator/run/run-record.ts";
import { CHECKPOINT_EVERY_MS, TICK_MS } from "../../coordinator/merge/ticks.ts";
import { UnwrittenWindows, showClosedWindows } from "../../coordinator/run/window-writes.ts";
import { ChildProgress } from "../../coordinator/merge/child-progress.ts";
import { nodeSqlStorage, type NodeSqlStorage } from "../../test/support/node-sql-storage.ts";
import type { ObjectMeter, Span } from "./scale-meter.ts";
import { type FlushTarget, meterOf, SimAlarm, type SimContext } from "./scale-objects.ts";

/**
 * The coordinator's part in the reporting path, as RunCoordinator does it: flush() and the
 * tick's window writes, from its creation (its ticks start then, START_LEAD_MS before t0);
 * the API's calls (create, status, summary, abort) and its clean-up are counted as requests.
 */
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
  /** RPCs into it besides flushes (create, status, summary, abort): billed requests, invocations Workers Logs may log. */
  #rpcs = 0;
  /** Its storage was deleted (its clean-up, run-cleanup.ts): it holds nothing. */
  #cleaned = false;
  #lastCheckpointMs = 0;
  /** Flushes its reporters sent it. */
  flushesIn = 0;
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
    this.#alarm = new SimAlarm(sim.time, run.createdMs + TICK_MS); // startRun's first tick
  }

  /** RunCoordinator.flush(). */
  flush(message: ChildFlush): FlushAck {
    this.meter.request(message.done);
    this.flushesIn++;
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

  /** RunCoordinator.create(): the API's call that starts the run (the simulation starts the objects itself). */
  create(): void {
    this.#rpcs++;
  }

  /** RunCoordinator.status() or summary(), as the API asks it for a watching client. */
  answerApi(): void {
    this.#rpcs++;
  }

  /** RunCoordinator.abort(), this object's part: its acks say stop from now on. */
  abort(): void {
    this.#rpcs++;
    this.#stopping = true;
  }

  /** The alarm finishRun sets for the clean-up (run-cleanup.ts): one invocation; its storage goes last. */
  cleanUpAlarm(): void {
    this.meter.request();
  }

  /** Its own storage goes, after its shards' and aggregators' (cleanUpRun). */
  deleteStorage(): void {
    this.#cleaned = true;
  }

  /** Every reporter has said done and the last tick has written the run: it is final. */
  get finished(): boolean {
    return this.#finished;
  }

  /** Billed requests into it: flushes, alarms (ticks, the clean-up) and the API's calls. */
  get requests(): number {
    return [...this.meter.requestsBySecond.values()].reduce((a, b) => a + b, 0) + this.#rpcs;
  }

  /** Storage rows it wrote on the reporting path: its SQLite tables (log, progress, live feed) and its alarms. */
  get storageRowsWritten(): number {
    return this.#storage.rowsWritten + this.#alarm.sets;
  }

  /** Bytes its SQLite database holds (the log, the progress, the live points); nothing once cleaned up (issue 49). */
  get storageBytes(): number {
    return this.#cleaned ? 0 : this.#storage.storage.databaseSize;
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
