/**
 * RunCoordinator: one Durable Object per run. It starts the shards at a common T0 (in a run with an aggregation
 * tree, core/plan/aggregation-tree.ts, one root aggregator per region instead: its children then), takes in their
 * window flushes, shows each closed window live and writes it to D1 every few ticks, watches abortOnFail
 * thresholds, and ends the run with its verdict and summary. Lifecycle: pending → running → finishing → passed |
 * failed | inconclusive | aborted | error (run-record.ts).
 *
 * The object is thin: it reads its state, asks pure functions what to do at `now` (core/run/run-lifecycle.ts,
 * status-view.ts, summary-of.ts, tick-failure.ts) and writes. What it shares with the aggregators is in ../merge/
 * (the flush log, taking flushes in, the open windows, the children's progress, the ticks); its own parts are
 * here: showing and writing windows (window-writes.ts, log-replay.ts after a restart), reaching the shards
 * (run-shards.ts), setup and teardown (phases.ts), starting the run (run-start.ts), stopping it early
 * (run-stop.ts), ending it (run-end.ts), deleting the storage of its objects once it is final and in D1
 * (run-cleanup.ts), the dashboards' feed (live-feed.ts), the push outputs (metrics-push.ts), the run's D1 rows,
 * and an externally-controlled run's level (run-control.ts).
 *
 * RPC surface: create(), flush(), status(), summary(), metricsSource(), abort(), control(), cleanUp(); fetch()
 * serves the live event stream (GET /live).
 */
import { DurableObject } from "cloudflare:workers";
import type { Plan } from "../../core/plan/plan.ts";
import { FINAL_STATUSES, type FlushAck, type Mode, type RunStatus, type RunView, type ChildFlush } from "../../core/run/protocol.ts";
import type { RunSpec } from "../../core/spec/run-spec.ts";
import { lifecycleStep } from "../../core/run/run-lifecycle.ts";
import { RunTotals } from "../../core/run/run-totals.ts";
import { parseRunThresholds, shouldAbortRun } from "../../core/run/run-thresholds.ts";
import type { ForcedStatus, Summary } from "../../core/run/summary.ts";
import type { ThresholdSet } from "../../core/metrics/thresholds.ts";
import type { Env as Bindings, ObjectNamespaces } from "../../workers/env.ts";
import type { LoadShard } from "../../workers/shard/load-shard.ts";
import type { RunAggregator } from "../aggregator/run-aggregator.ts";
import { reportersOf } from "../../core/plan/aggregation-tree.ts";
import type { RunMetricsWire } from "../../core/formats/prometheus-text-writer.ts";
import { MetricsPusher } from "./metrics-push.ts";
import { pushRunMetrics } from "./metrics-push-body.ts";
import { updateRunStatus } from "../store/results-store.ts";
import type { TotalsCheckpoint } from "../merge/flush-log.ts";
import { takeInFlush } from "../merge/flush-intake.ts";
import { takeInLog } from "./log-replay.ts";
import { OpenWindows } from "../merge/open-windows.ts";
import { RunTables } from "./run-tables.ts";
import { stopRun } from "./run-stop.ts";
import { cleanUpRun, type CleanUpResult } from "./run-cleanup.ts";
import { setupOverdue, startRun, type StartingHost } from "./run-start.ts";
import { finishRun, giveUpRun, type EndingHost } from "./run-end.ts";
import { liveStatus, metricsSourceOf, runView, type RunFigures } from "./status-view.ts";
import { liveSummary, type SummarySources } from "./summary-of.ts";
import { scriptAbortReason, scriptFailReason } from "../../core/run/script-report.ts";
import { lifecycleStateOf, START_LEAD_MS, type RunRecord } from "./run-record.ts";
import { CHECKPOINT_EVERY_MS, TICK_MS } from "../merge/ticks.ts";
import { abortShards, ShardStopper, startingWatermarks } from "./run-shards.ts";
import { tickFailureBudget, tickRetryDelayMs, withTickFailure } from "./tick-failure.ts";
import { UnwrittenWindows, showClosedWindows } from "./window-writes.ts";
import { addPhaseStats } from "./phase-metrics.ts";
import { RunControl, type ControlAnswer, type ControlRequest } from "./run-control.ts";

/** The bindings as this object reads them: the shards' namespace typed by their class. */
type Env = Bindings & ObjectNamespaces<undefined, LoadShard, RunAggregator>;

export class RunCoordinator extends DurableObject<Env> {
  #run: RunRecord | null = null;
  /** The run's thresholds, parsed once from its spec when it is created or restored. */
  #thresholds: ThresholdSet | null = null;
  #totals = new RunTotals();
  /** Windows still open to flushes, and iterations per window for the live achieved rate. */
  #open = new OpenWindows();
  /** Windows shown on the dashboards and not yet written to D1. */
  #unwritten = new UnwrittenWindows();
  #lastCheckpointMs = 0;
  /** Tells the shards a stopping run's stop (in memory: a restarted object sends it again). */
  readonly #stopper = new ShardStopper();
  /** An externally-controlled run's level, stored, and the shards still to be told it (run-control.ts). */
  readonly #control = new RunControl(this.ctx.storage.kv, () => this.#objects);
  /** Push outputs' in-flight state and counts (in memory: a restarted object starts them at 0). */
  readonly #pusher = new MetricsPusher(this.env);
  /** The flush log, the live feed, the children's progress: made on first use (run-tables.ts). Set once super() has run. */
  readonly #tables = new RunTables(this.ctx.storage.sql);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => this.#restore());
  }

  /** Plans are made by the Worker; this persists the run, starts every shard and returns T0. */
  async create(input: { runId: string; spec: RunSpec; plan: Plan; mode: Mode; ownedHosts?: readonly string[] }): Promise<{ t0Ms: number; status: RunStatus }> {
    if (this.#run) return { t0Ms: this.#run.t0Ms, status: this.#run.status };
    const now = Date.now();
    const t0Ms = now + START_LEAD_MS[input.mode];
    // A named scenario's shards measure nothing before its start: windows before it need
    // not wait for them.
    this.#tables.children.start(startingWatermarks(input.plan));
    const thresholds = parseRunThresholds(input.spec);
    const run: RunRecord = { ...input, createdMs: now, t0Ms, status: "pending", stopping: null, endMs: null, abortReason: null, thresholds };
    this.#thresholds = thresholds;
    this.#save(run);
    return startRun(this.#starting, run);
  }

  /** Takes in a child's closed windows (a shard's, or a region root's merged ones); idempotent per (child, window, part). */
  async flush(message: ChildFlush): Promise<FlushAck> {
    const run = this.#run;
    if (!run || run.runId !== message.runId) throw new Error(`unknown run ${message.runId}`);
    const reporters = reportersOf(run.plan);
    const region = reporters.find((r) => r.index === message.childIndex)?.region;
    if (region === undefined) throw new Error(`unknown ${run.plan.tree ? "aggregator" : "shard"} ${message.childIndex}`);
    // After the summary is written the run's figures are final: tell the shard to stop.
    if (FINAL_STATUSES.includes(run.status)) return { accepted: 0, duplicates: 0, stop: true };
    const { accepted, duplicates, latest, scriptAbort, scriptFail } = takeInFlush(this.#tables.log, this.#open, this.#totals, message, region);
    // exec.test.fail(): the run goes on, to end failed (run-end.ts); saved in this turn, with the flush's log row.
    if (scriptFail !== null && run.markedFailed === undefined) this.#save({ ...run, markedFailed: scriptFailReason(scriptFail) });
    if (latest) this.#tables.live.noteShard(message.childIndex, latest);
    this.#tables.children.record(message.childIndex, message.watermarkS, message.done, message.telemetry, Date.now());
    // The script called exec.test.abort() (its shard has stopped): stop the run like an abort, as the script's.
    if (scriptAbort !== null && this.#run!.stopping === null) await this.#stop("aborted", scriptAbortReason(scriptAbort), true);
    // Everyone is done: finish now — unless ticks are failing (D1 refusing writes), whose
    // backoff an early tick would cut short, spending the retry budget in a burst.
    if (this.#tables.children.doneCount === reporters.length && !FINAL_STATUSES.includes(run.status) && !run.tickFailures) {
      await this.ctx.storage.setAlarm(Date.now());
    }
    return { accepted, duplicates, stop: run.stopping !== null || FINAL_STATUSES.includes(run.status) };
  }

  /** Status, progress and live totals. */
  async status(): Promise<RunView | null> {
    const run = this.#run;
    return run ? this.#control.shown(run, runView(run, this.#figures(), Date.now(), this.#outputs(run))) : null;
  }

  /** GET /live: the run's event stream for the dashboard: the windows so far and the status; after the run, the summary too, and it ends. */
  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (request.method !== "GET" || url.pathname !== "/live") return new Response("not found", { status: 404 });
    const run = this.#run;
    if (!run) return new Response("no such run", { status: 404 });
    const summary = this.ctx.storage.kv.get<Summary>("summary");
    return this.#tables.live.open(this.#liveStatus(run, Date.now()), summary ? { summary, status: run.status } : null);
  }

  /** What GET /v1/runs/:id/metrics exposes (core/formats/prometheus-text-writer.ts): the run's totals per region and step, its live gauges. */
  async metricsSource(): Promise<RunMetricsWire | null> {
    const run = this.#run;
    if (!run) return null;
    const { totals, ...rest } = this.#control.gauged(run, metricsSourceOf(run, this.#figures(), Date.now()));
    return { ...rest, totals: totals.cellsWire() }; // per-shard stats are not exposed: not sent either
  }

  /** The final summary once the run ended (the API reads D1's first: ../http/run-summary.ts), else a live one. */
  async summary(): Promise<Summary | null> {
    const stored = this.ctx.storage.kv.get<Summary>("summary");
    if (stored) return stored;
    const run = this.#run;
    return run ? liveSummary(run, Date.now(), this.#sources()) : null;
  }

  /** Stops every shard (within seconds): `finishing` while they flush, then `aborted`; answers once the stop is recorded (stop-signal.ts). */
  async abort(reason: string): Promise<RunView | null> {
    const run = this.#run;
    if (!run) return null;
    if (!FINAL_STATUSES.includes(run.status) && run.stopping === null) await this.#stop("aborted", reason);
    return this.status();
  }

  /** PATCH /v1/runs/:id/control: an externally-controlled run's new level, judged, stored and sent to its shards. */
  async control(request: ControlRequest): Promise<ControlAnswer | null> {
    return this.#run ? this.#control.change(this.#run, request, Date.now()) : null;
  }

  #stop(status: "aborted" | "failed", given: string, byScript = false): Promise<void> {
    const host = { env: this.env, storage: this.ctx.storage, run: () => this.#run!, save: (run: RunRecord) => this.#save(run) };
    return stopRun({ ...host, signalStop: (now) => this.#signalStop(now) }, status, given, byScript);
  }

  /**
   * The run is final and in D1: its objects' storage goes, this one's last (run-cleanup.ts).
   * The cron tick's sweep calls this for a run whose clean-up did not finish.
   */
  async cleanUp(runId: string): Promise<CleanUpResult> {
    const host = { env: this.env, objects: this.#objects, storage: this.ctx.storage, run: () => this.#run, view: () => this.status() };
    // Without a run nothing reads the totals or windows still in memory; the tables are made again only by a new run.
    const forget = () => {
      this.#run = null;
      this.#tables.forget();
    };
    return cleanUpRun({ ...host, forget }, runId, Date.now());
  }

  /** Sends the stop to the shards when due, without waiting for their answers (run-shards.ts ShardStopper). */
  #signalStop(now: number): void {
    this.#stopper.send(this.#objects, this.#run!, now, () => {
      if (this.#run!.stopping !== null) this.#save({ ...this.#run!, stopDelivered: true });
    });
  }

  /**
   * One tick. Failures are handled here rather than left to the runtime's alarm retries,
   * which give up after a few attempts and would leave the run `running` for ever.
   */
  override async alarm(): Promise<void> {
    try {
      await this.#tick();
    } catch (error) {
      await this.#tickFailed(error);
      return;
    }
    const run = this.#run;
    if (run?.tickFailures) this.#save({ ...run, tickFailures: 0, lastError: null });
  }

  async #tickFailed(error: unknown): Promise<void> {
    const run = this.#run;
    if (!run) throw error;
    const { run: failing, failures, message } = withTickFailure(run, error);
    console.error(`run ${run.runId}: tick ${failures} failed: ${message}`);
    this.#save(failing);
    if (failures < tickFailureBudget(this.env)) {
      // The dashboard shows the retries (lastError) rather than going quiet.
      this.#tables.live.sendStatus(() => this.#liveStatus(this.#run!, Date.now()));
      await this.ctx.storage.setAlarm(Date.now() + tickRetryDelayMs(failures));
      return;
    }
    await giveUpRun(this.#ending, run, message);
  }

  async #tick(): Promise<void> {
    const run = this.#run;
    if (!run) return;
    // The alarm finishRun set: the run is over, its objects' storage goes (run-cleanup.ts; a
    // failure is left to the cron tick's sweep, never counted as a failed tick).
    if (this.ctx.storage.kv.get("summary")) return void (await this.cleanUp(run.runId));
    const now = Date.now();
    if (run.status === "pending") return setupOverdue(this.#starting, run, now);
    const everyoneDone = this.#tables.children.doneCount === reportersOf(run.plan).length;

    await this.#showClosedWindows(run, now, everyoneDone);
    this.#pushMetrics(run, now);

    const step = lifecycleStep(lifecycleStateOf(run, everyoneDone), now);
    // Real shards, counted through the tree: a root that gave up on its silent children still says done.
    if (step.kind === "finish") return this.#finish(step.status, null, Math.max(0, run.plan.shards.length - this.#tables.children.shardsDone()));
    this.#signalStop(now);
    this.#control.retellDue(run, now);
    if (step.evaluateThresholds) {
      const abortBy = shouldAbortRun(run.spec, this.#totals, now - run.t0Ms, this.#thresholds!);
      if (abortBy) return this.#stop("failed", `threshold ${abortBy.key}: ${abortBy.source} failed (abortOnFail)`);
    }
    if (step.enterFinishing) {
      this.#save({ ...run, status: "finishing" });
      await this.env.DB.batch([updateRunStatus(this.env.DB, run.runId, "finishing")]);
    }
    if (now - this.#lastCheckpointMs >= CHECKPOINT_EVERY_MS) this.#checkpoint();
    this.#tables.live.sendStatus(() => this.#liveStatus(this.#run!, now));
    await this.ctx.storage.setAlarm(Date.now() + TICK_MS);
  }

  /** Starts the push outputs' requests (never awaited: see metrics-push.ts). */
  #pushMetrics(run: RunRecord, now: number): void {
    pushRunMetrics(this.#pusher, run, () => this.#control.gauged(run, metricsSourceOf(run, this.#figures(), now)), now);
  }

  get #objects() {
    return { shards: this.env.LOAD_SHARD, aggregators: this.env.RUN_AGGREGATOR };
  }

  /** Shows every open window no child can still add to, and writes to D1 what is due (window-writes.ts). */
  #showClosedWindows(run: RunRecord, now: number, everyoneDone: boolean): Promise<void> {
    return showClosedWindows(
      { db: this.env.DB, open: this.#open, unwritten: this.#unwritten, log: this.#tables.log, shards: this.#tables.children, live: this.#tables.live },
      run,
      now,
      everyoneDone,
    );
  }

  /** Persists totals and trims log rows that are both in the checkpoint and in D1. */
  #checkpoint(): void {
    this.#tables.log.checkpoint(this.#totals, (checkpoint) => this.ctx.storage.kv.put("totals", checkpoint));
    this.#lastCheckpointMs = Date.now();
  }

  /** Rebuilds totals (checkpoint + newer log rows) and unwritten windows after a restart. */
  #restore(): void {
    const run = this.ctx.storage.kv.get<RunRecord>("run") ?? null;
    this.#run = run;
    if (!run) return;
    this.#thresholds = run.thresholds ?? parseRunThresholds(run.spec);
    const checkpoint = this.ctx.storage.kv.get<TotalsCheckpoint>("totals");
    this.#totals = addPhaseStats(takeInLog(this.#tables.log, this.#open, this.#unwritten, checkpoint, run), run.phaseStats);
  }

  #save(run: RunRecord): void {
    this.#run = run;
    addPhaseStats(this.#totals, run.phaseStats); // setup()'s and teardown()'s, each once (phase-metrics.ts)
    this.ctx.storage.kv.put("run", run);
  }

  #figures(): RunFigures {
    return { totals: this.#totals, shards: this.#tables.children, iterationsAt: (w) => this.#open.iterationsAt(w) };
  }

  #sources(): SummarySources {
    return { totals: this.#totals, shards: this.#tables.children, thresholds: this.#thresholds! };
  }

  #outputs(run: RunRecord) {
    return run.spec.outputs?.length ? this.#pusher.status(run.spec.outputs) : null;
  }

  #liveStatus(run: RunRecord, now: number) {
    return this.#control.shown(run, liveStatus(run, this.#figures(), now, this.#outputs(run), this.#thresholds!, this.#tables.live.shardHealth));
  }

  /** Ends the run (run-end.ts). */
  #finish(forced: ForcedStatus | null, note: string | null, silentReporters = 0): Promise<void> {
    return finishRun(this.#ending, forced, note, silentReporters);
  }

  /** What starting the run needs of this object (run-start.ts). */
  get #starting(): StartingHost {
    return {
      env: this.env,
      storage: this.ctx.storage,
      objects: this.#objects,
      run: () => this.#run!,
      save: (run) => this.#save(run),
      finish: (status, reason) => this.#finish(status, reason),
      abortShards: () => abortShards(this.#objects, this.#run!),
    };
  }

  /** What ending the run needs of this object (run-end.ts). */
  get #ending(): EndingHost {
    return {
      env: this.env,
      storage: this.ctx.storage,
      run: () => this.#run!,
      save: (run) => this.#save(run),
      sources: () => this.#sources(),
      showClosedWindows: (run, now, everyoneDone) => this.#showClosedWindows(run, now, everyoneDone),
      pushMetrics: (run, now) => this.#pushMetrics(run, now),
      checkpoint: () => this.#checkpoint(),
      publishEnd: (run, summary) => this.#tables.live.publishEnd(() => this.#liveStatus(run, Date.now()), summary, run.status),
      abortShards: () => abortShards(this.#objects, this.#run!),
    };
  }
}
