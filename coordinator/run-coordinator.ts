/**
 * RunCoordinator: one Durable Object per run. It starts the shards at a common T0,
 * receives their window flushes, merges them exactly, writes merged windows to D1 in
 * bounded batches, evaluates thresholds while the run goes (abortOnFail), and writes the
 * summary at the end. Lifecycle: pending → running → finishing → passed | failed |
 * aborted | error.
 *
 * Durability: every accepted flush is appended to a log in this object's SQLite storage
 * in the same turn it is merged, keyed by (shard, window) so a retried flush is recognised
 * and ignored. Totals are checkpointed every few seconds and the log trimmed behind the
 * checkpoint; a restarted object rebuilds totals and unwritten windows from checkpoint +
 * log, so nothing is lost and nothing is counted twice. Each shard's watermark, done flag
 * and telemetry are a row of their own (shard-progress.ts), so a flush never rewrites the
 * run record.
 *
 * Live view: every window written to D1 also becomes a LivePoint (core/live-view.ts), kept
 * in this object's storage and pushed as a Server-Sent Event to the dashboards watching
 * (live-stream.ts), with the run's status each tick; a page that connects mid-run receives
 * the points so far first.
 *
 * RPC surface: create(), flush(), status(), summary(), metricsSource(), abort(); fetch()
 * serves the live event stream (GET /live).
 */
import { DurableObject } from "cloudflare:workers";
import { liveVerdicts, shardHealthRows, shardWindowHealth, windowPoints, withLatePortion, type LivePoint, type ShardLatest } from "../core/live-view.ts";
import { targetLoadAt } from "../core/load-profile.ts";
import { roundToResolution } from "../core/clock-resolution.ts";
import { clockView } from "../core/measured-path.ts";
import type { Plan } from "../core/plan.ts";
import { FINAL_STATUSES, WINDOW_MS, type FlushAck, type Mode, type RunStatus, type RunView, type ShardFlush, type ShardWindow } from "../core/protocol.ts";
import { redactSpec, type RunSpec } from "../core/run-spec.ts";
import { closableBelow, lifecycleStep } from "../core/run-lifecycle.ts";
import { WindowBook } from "../core/window-book.ts";
import { RunTotals, type RunTotalsWire } from "../core/run-totals.ts";
import { COUNTERS, MetricStats } from "../core/stats.ts";
import { buildSummary, groupSummary, shouldAbortRun, type Summary } from "../core/summary.ts";
import { shardAssignments } from "../core/shard-assignment.ts";
import { phaseFailure, runPhase, type PhaseResult } from "../scenarios/run-phase.ts";
import { runScript, runScriptPhase } from "./script-phase.ts";
import { SETUP_DATA } from "../core/spec/script-schema.ts";
import type { Env as Bindings, ObjectNamespaces } from "../workers/env.ts";
import type { LoadShard } from "../workers/shard/load-shard.ts";
import type { RunMetricsSource, RunMetricsWire } from "../core/metrics-exposition.ts";
import { LiveStream, sseEvent } from "./live-stream.ts";
import { ShardProgress } from "./shard-progress.ts";
import { MetricsPusher } from "./metrics-push.ts";
import { metricsPushBody } from "./metrics-push-body.ts";
import { insertRun, insertShards, seriesStatements, updateRunStatus, updateShard, windowStatements, type SeriesRow, type WindowCell } from "./store/results-store.ts";

/** The bindings as this object reads them: the shards' namespace typed by their class. */
type Env = Bindings & ObjectNamespaces<undefined, LoadShard>;

interface RunRecord {
  readonly runId: string;
  /** Full spec (with secrets) until the run ends; redacted afterwards. */
  readonly spec: RunSpec;
  readonly plan: Plan;
  readonly mode: Mode;
  readonly createdMs: number;
  readonly t0Ms: number;
  readonly status: RunStatus;
  /** Set by an abort or a failing abortOnFail threshold: the status #finish will give. */
  readonly stopping: "aborted" | "failed" | null;
  readonly endMs: number | null;
  readonly abortReason: string | null;
  /** Consecutive ticks that failed (D1 unreachable, …) and the last error, while retrying. */
  readonly tickFailures?: number;
  readonly lastError?: string | null;
  /** Outcomes of the run's setup and teardown steps (no captured values: those are secret-bearing). */
  readonly phases?: { readonly setup?: PhaseView; readonly teardown?: PhaseView };
}

type PhaseView = Omit<PhaseResult, "captured">;

/** A flushed window as logged: its steps, with its scraped series when it has any. */
function logData(window: ShardWindow): string {
  return JSON.stringify(window.series?.length ? { steps: window.steps, series: window.series } : window.steps);
}

function parseLogData(data: string): Pick<ShardWindow, "steps" | "series"> {
  const parsed = JSON.parse(data) as unknown;
  return Array.isArray(parsed) ? { steps: parsed as ShardWindow["steps"] } : (parsed as Pick<ShardWindow, "steps" | "series">);
}
const phaseView = ({ captured: _captured, ...view }: PhaseResult): PhaseView => view;

/** How long before T0 shards are started, so every one is armed in time. */
const START_LEAD_MS = { local: 1_500, deployed: 3_000 } as const;
const TICK_MS = 1_000;
const CHECKPOINT_EVERY_MS = 5_000;
/** After its deadline a shard keeps retrying its last flushes this long, then gives up. */
const SHARD_FLUSH_GRACE_MS = 60_000;
/**
 * A tick that throws (D1 refusing writes, say) is retried with backoff up to 30 s; after
 * this many failures in a row (RESULT_WRITE_RETRIES overrides it) the run ends as `error`,
 * its summary kept in the coordinator.
 */
const MAX_TICK_FAILURES = 12;

function tickFailureBudget(env: Env): number {
  const n = Number(env.RESULT_WRITE_RETRIES);
  return Number.isInteger(n) && n > 0 ? n : MAX_TICK_FAILURES;
}

/** A window not yet written to D1. */
interface OpenWindow {
  readonly cells: Map<string, { region: string; step: number; stats: MetricStats }>;
  readonly series: SeriesRow[];
}

export class RunCoordinator extends DurableObject<Env> {
  #run: RunRecord | null = null;
  #totals = new RunTotals();
  /** Windows not yet written to D1: merged cells ("region\0step" → cell) and scraped samples. */
  #open = new WindowBook<OpenWindow>(() => ({ cells: new Map(), series: [] }));
  /** Requests sent per window, across shards, for the live achieved rate. */
  #iterationsByWindow = new Map<number, number>();
  #lastCheckpointMs = 0;
  /** Push outputs' in-flight state and counts (in memory: a restarted object starts them at 0). */
  #pusher = new MetricsPusher();
  /** The dashboards' event streams (in memory: a restarted object drops them and they reconnect). */
  #live = new LiveStream();
  /** Each shard's latest window, and its health by that window while dashboards watch. */
  #shardHealth = new Map<number, ShardLatest>();
  /** Each shard's watermark, done flag and telemetry: one row a shard, written per flush. */
  #shards: ShardProgress;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS flush_log (id INTEGER PRIMARY KEY AUTOINCREMENT, shard INTEGER NOT NULL, window_s INTEGER NOT NULL,
        part INTEGER NOT NULL, data TEXT NOT NULL, written INTEGER NOT NULL DEFAULT 0, UNIQUE (shard, window_s, part))`,
    );
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS live_points (window_s INTEGER PRIMARY KEY, data TEXT NOT NULL)");
    this.#shards = new ShardProgress(ctx.storage.sql);
    void ctx.blockConcurrencyWhile(async () => this.#restore());
  }

  /** Plans are made by the Worker; this persists the run, starts every shard and returns T0. */
  async create(input: { runId: string; spec: RunSpec; plan: Plan; mode: Mode }): Promise<{ t0Ms: number; status: RunStatus }> {
    if (this.#run) return { t0Ms: this.#run.t0Ms, status: this.#run.status };
    const now = Date.now();
    const t0Ms = now + START_LEAD_MS[input.mode];
    // A named scenario's shards measure nothing before its start: windows before it need
    // not wait for them.
    this.#shards.start(new Map((input.plan.scenarios ?? []).flatMap((s) =>
      Array.from({ length: s.shardCount }, (_, i) => [s.firstShard + i, s.startMs / 1000] as const))));
    const run: RunRecord = { ...input, createdMs: now, t0Ms, status: "pending", stopping: null, endMs: null, abortReason: null };
    this.#save(run);
    const db = this.env.DB;
    await db.batch([
      insertRun(db, {
        id: run.runId, name: run.spec.name, target: run.spec.target, createdAt: now, durationMs: run.spec.durationMs,
        specJson: JSON.stringify(redactSpec(run.spec)), planJson: JSON.stringify(run.plan),
      }),
      ...insertShards(db, run.runId, run.plan.shards),
    ]);
    // Setup runs once, here, before any shard starts: the spec's setup steps (their captures)
    // and a k6 script's setup() (what it returned, which may be a token: it goes to the
    // shards, not into the view).
    const setupSteps = run.spec.setup ?? [];
    if (setupSteps.length) {
      const setup = await runPhase(run.spec, setupSteps, fetch.bind(globalThis));
      const failure = setup.ok ? null : phaseFailure("setup", setup, setupSteps);
      if (!(await this.#afterSetup(phaseView(setup), failure, setup.captured, t0Ms, input.mode))) return { t0Ms, status: "error" };
    }
    const script = runScript(run.spec);
    if (script?.setup) {
      const setup = await runScriptPhase(this.env, run.runId, run.spec, script, "setup", null);
      const setupData: Record<string, string> = setup.data === null ? {} : { [SETUP_DATA]: setup.data };
      const view = phaseView({ ok: setup.ok, steps: setup.steps, captured: {} });
      if (!(await this.#afterSetup(view, setup.ok ? null : `setup() failed: ${setup.error}`, setupData, t0Ms, input.mode))) return { t0Ms, status: "error" };
    }
    const ready = this.#run!;
    const assignments = shardAssignments({ runId: ready.runId, spec: ready.spec, plan: ready.plan, t0Ms: ready.t0Ms, mode: ready.mode, flushGraceMs: SHARD_FLUSH_GRACE_MS });
    const started = await Promise.allSettled(assignments.map((assignment, index) => this.#shardStub(index).start(assignment)));
    const failure = started.find((s) => s.status === "rejected");
    if (failure) {
      await this.#broadcastAbort();
      await this.#finish("error", `could not start every shard: ${String((failure as PromiseRejectedResult).reason)}`);
      throw new Error("could not start every shard");
    }
    this.#save({ ...this.#run!, status: "running" });
    await db.batch([updateRunStatus(db, run.runId, "running", { t0: ready.t0Ms })]);
    await this.ctx.storage.setAlarm(Date.now() + TICK_MS);
    return { t0Ms: ready.t0Ms, status: "running" };
  }

  /**
   * Records how setup went; a failed one ends the run as `error` (false). Otherwise the
   * shards start a little later than planned, after setup with the usual lead, and get
   * what it produced.
   */
  async #afterSetup(view: PhaseView, failure: string | null, setupData: Readonly<Record<string, string>>, t0Ms: number, mode: Mode): Promise<boolean> {
    this.#save({ ...this.#run!, phases: { setup: view } });
    if (failure) {
      await this.#finish("error", failure);
      return false;
    }
    const run = this.#run!;
    this.#save({ ...run, t0Ms: Math.max(t0Ms, Date.now() + START_LEAD_MS[mode]), spec: { ...run.spec, setupData: { ...run.spec.setupData, ...setupData } } });
    return true;
  }

  /** Receives a shard's closed windows. Idempotent per (shard, window, part). */
  async flush(message: ShardFlush): Promise<FlushAck> {
    const run = this.#run;
    if (!run || run.runId !== message.runId) throw new Error(`unknown run ${message.runId}`);
    const region = run.plan.shards[message.shardIndex]?.region;
    if (region === undefined) throw new Error(`unknown shard ${message.shardIndex}`);
    // After the summary is written the run's figures are final: tell the shard to stop.
    if (FINAL_STATUSES.includes(run.status)) return { accepted: 0, duplicates: 0, stop: true };
    let accepted = 0;
    let duplicates = 0;
    let latest: ShardWindow | null = null;
    for (const window of message.windows) {
      const inserted = this.ctx.storage.sql.exec(
        "INSERT INTO flush_log (shard, window_s, part, data) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
        message.shardIndex, window.windowS, window.part, logData(window),
      ).toArray();
      if (inserted.length === 0) {
        duplicates++;
        continue;
      }
      accepted++;
      this.#mergeWindow(message.shardIndex, region, window, true);
      if (!latest || window.windowS >= latest.windowS) latest = window;
    }
    if (latest) this.#shardHealth.set(message.shardIndex, { lastWindowS: latest.windowS, ...(this.#live.size > 0 ? shardWindowHealth(latest.steps) : {}) });
    this.#shards.record(message.shardIndex, message.watermarkS, message.done, message.telemetry);
    // Everyone is done: finish now — unless ticks are failing (D1 refusing writes), whose
    // backoff an early tick would cut short, spending the retry budget in a burst.
    if (this.#shards.doneCount === run.plan.shards.length && !FINAL_STATUSES.includes(run.status) && !run.tickFailures) {
      await this.ctx.storage.setAlarm(Date.now());
    }
    return { accepted, duplicates, stop: run.stopping !== null || FINAL_STATUSES.includes(run.status) };
  }

  /** Status, progress and live totals. */
  async status(): Promise<RunView | null> {
    const run = this.#run;
    return run ? this.#view(run, Date.now()) : null;
  }

  #view(run: RunRecord, now: number): RunView {
    const { elapsedMs, target, achievedRatePerS } = this.#progress(run, now);
    const all = this.#totals.select();
    const clock = clockView(run.plan.shards.map((s) => this.#shards.telemetry(s.index)));
    const p95 = all.trends.duration.count ? roundToResolution(all.trends.duration.quantile(0.95) / 1000, clock.resolutionMs) : null;
    return {
      id: run.runId,
      name: run.spec.name,
      status: run.status,
      target: run.spec.target,
      createdAt: new Date(run.createdMs).toISOString(),
      startedAt: new Date(run.t0Ms).toISOString(),
      endedAt: run.endMs ? new Date(run.endMs).toISOString() : null,
      abortReason: run.abortReason,
      progress: { elapsedS: elapsedMs / 1000, durationS: run.spec.durationMs / 1000, fraction: run.spec.durationMs ? elapsedMs / run.spec.durationMs : 1 },
      live: {
        targetRatePerS: target.ratePerS,
        ...(target.vus !== null ? { targetVUs: target.vus } : {}),
        achievedRatePerS,
        requests: all.counters.completed,
        failed: all.counters.failed,
        dropped: all.counters.dropped,
        p95Ms: p95,
        clockResolutionMs: clock.resolutionMs,
        shardsDone: this.#shards.doneCount,
        shards: run.plan.shards.length,
      },
      thresholdsOk: FINAL_STATUSES.includes(run.status) ? run.status !== "failed" : null,
      lastError: run.lastError ?? null,
      ...(run.spec.outputs?.length ? { outputs: this.#pusher.status(run.spec.outputs) } : {}),
    };
  }

  /**
   * GET /live: the run's event stream for the dashboard. It starts with the windows so far
   * and the status; after the run it also carries the summary and ends.
   */
  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (request.method !== "GET" || url.pathname !== "/live") return new Response("not found", { status: 404 });
    const run = this.#run;
    if (!run) return new Response("no such run", { status: 404 });
    const now = Date.now();
    const points = this.ctx.storage.sql.exec<{ data: string }>("SELECT data FROM live_points ORDER BY window_s").toArray();
    // The points are stored as JSON already: splice them rather than parse and re-encode.
    const history = new TextEncoder().encode(`event: history\ndata: [${points.map((p) => p.data).join(",")}]\n\n`);
    const first = [history, sseEvent("status", this.#liveStatus(run, now))];
    const summary = this.ctx.storage.kv.get<Summary>("summary");
    if (summary) first.push(sseEvent("summary", summary), sseEvent("end", { status: run.status }));
    const response = this.#live.open(first, { closeAfterFirst: summary !== undefined });
    return response ?? new Response("this run's live view has as many watchers as it can serve; try again later", { status: 503, headers: { "retry-after": "10" } });
  }

  /** The run as the dashboard shows it each tick: the status view, verdicts so far, shard health. */
  #liveStatus(run: RunRecord, now: number) {
    const view = this.#view(run, now);
    return {
      ...view,
      t0Ms: run.t0Ms,
      ...liveVerdicts(run.spec, this.#totals, view.progress.elapsedS),
      shardHealth: shardHealthRows(run.plan.shards, this.#shardHealth, this.#shards.doneShards()),
    };
  }

  /** Stores each written window's point (adding a late portion to its earlier one) and pushes it. */
  #publishWindows(run: RunRecord, cells: readonly WindowCell[]): void {
    const sql = this.ctx.storage.sql;
    for (let point of windowPoints(run.spec, cells)) {
      const windowS = point.t;
      const earlier = sql.exec<{ data: string }>("SELECT data FROM live_points WHERE window_s = ?", windowS).toArray()[0];
      if (earlier) point = withLatePortion(JSON.parse(earlier.data) as LivePoint, point);
      sql.exec("INSERT OR REPLACE INTO live_points (window_s, data) VALUES (?, ?)", windowS, JSON.stringify(point));
      this.#live.send("window", point);
    }
  }

  /** The run's last events to its dashboards, then their streams end. */
  #publishEnd(run: RunRecord, summary: Summary): void {
    if (this.#live.size === 0) return;
    this.#live.send("status", this.#liveStatus(run, Date.now()));
    this.#live.send("summary", summary);
    this.#live.send("end", { status: run.status });
    this.#live.closeAll();
  }

  /**
   * What GET /v1/runs/:id/metrics exposes (core/metrics-exposition.ts): the run's totals
   * per region and step as they stand, and its live gauges.
   */
  async metricsSource(): Promise<RunMetricsWire | null> {
    const run = this.#run;
    if (!run) return null;
    const { totals, ...rest } = this.#metricsSourceOf(run, Date.now());
    return { ...rest, totals: totals.cellsWire() }; // per-shard stats are not exposed: not sent either
  }

  /**
   * How far the run is at `now`: elapsed time (capped at its duration), the load the
   * schedule asks for then, and the iterations of the last second every shard has passed.
   */
  #progress(run: RunRecord, now: number) {
    const elapsedMs = Math.max(0, Math.min((run.endMs ?? now) - run.t0Ms, run.spec.durationMs));
    const target = targetLoadAt(run.spec, Math.min(elapsedMs, run.spec.durationMs - 1));
    const lastComplete = Math.min(...run.plan.shards.map((s) => this.#shards.watermark(s.index))) - 1;
    return { elapsedMs, target, achievedRatePerS: this.#iterationsByWindow.get(lastComplete) ?? 0 };
  }

  #metricsSourceOf(run: RunRecord, now: number): RunMetricsSource {
    const ended = FINAL_STATUSES.includes(run.status);
    const { target, achievedRatePerS } = this.#progress(run, now);
    return {
      runId: run.runId,
      name: run.spec.name,
      status: run.status,
      totals: this.#totals,
      // An ended run asks for nothing more: its gauges drop to 0 rather than freeze.
      targetRatePerS: target.ratePerS === null ? null : ended ? 0 : target.ratePerS,
      targetVUs: target.vus === null ? null : ended ? 0 : target.vus,
      achievedRatePerS: ended ? 0 : achievedRatePerS,
      peakInFlight: this.#shards.peakInFlight(),
    };
  }

  /** The summary: final once the run ended, otherwise a live one over what arrived. */
  async summary(): Promise<Summary | null> {
    const stored = this.ctx.storage.kv.get<Summary>("summary");
    if (stored) return stored;
    const run = this.#run;
    return run ? this.#buildSummary(run, Date.now()) : null;
  }

  /**
   * Stops every shard (within seconds). The run is `finishing` while shards flush what
   * they measured, then `aborted`.
   */
  async abort(reason: string): Promise<RunView | null> {
    const run = this.#run;
    if (!run) return null;
    if (!FINAL_STATUSES.includes(run.status) && run.stopping === null) await this.#stop("aborted", reason);
    return this.status();
  }

  async #stop(status: "aborted" | "failed", reason: string): Promise<void> {
    const now = Date.now();
    this.#save({ ...this.#run!, status: "finishing", stopping: status, abortReason: reason, endMs: now });
    await this.env.DB.batch([updateRunStatus(this.env.DB, this.#run!.runId, "finishing", { abortReason: reason })]);
    await this.#broadcastAbort();
    // Keep ticking: the run ends at the first tick that finds every shard done (or the grace over).
    await this.ctx.storage.setAlarm(now + TICK_MS);
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
    const failures = (run.tickFailures ?? 0) + 1;
    const message = error instanceof Error ? error.message : String(error);
    console.error(`run ${run.runId}: tick ${failures} failed: ${message}`);
    this.#save({ ...run, tickFailures: failures, lastError: message });
    if (failures < tickFailureBudget(this.env)) {
      // The dashboard shows the retries (lastError) rather than going quiet.
      if (this.#live.size > 0) this.#live.send("status", this.#liveStatus(this.#run!, Date.now()));
      this.#live.flush();
      await this.ctx.storage.setAlarm(Date.now() + Math.min(30_000, 500 * 2 ** failures));
      return;
    }
    // Give up: the run ends as an error; its summary stays readable from this object.
    const endMs = run.endMs ?? Math.min(Date.now(), run.t0Ms + run.spec.durationMs);
    const final = { ...run, status: "error" as const, stopping: null, endMs, abortReason: `results could not be stored: ${message}`, spec: redactSpec(run.spec) };
    const summary = this.#buildSummary(final, endMs);
    this.ctx.storage.kv.put("summary", summary);
    this.#save(final);
    this.#publishEnd(final, summary);
    await this.#broadcastAbort().catch(() => {});
    await this.env.DB.batch([updateRunStatus(this.env.DB, run.runId, "error", { endedAt: endMs, abortReason: final.abortReason })]).catch(() => {});
    await this.ctx.storage.deleteAlarm();
  }

  async #tick(): Promise<void> {
    const run = this.#run;
    if (!run || this.ctx.storage.kv.get("summary")) return;
    const now = Date.now();
    const everyoneDone = this.#shards.doneCount === run.plan.shards.length;

    await this.#writeClosedWindows(run, now, everyoneDone);
    this.#pushMetrics(run, now);

    const step = lifecycleStep(
      { status: run.status, stopping: run.stopping, endMs: run.endMs, t0Ms: run.t0Ms, durationMs: run.spec.durationMs, timeoutMs: run.spec.timeoutMs, everyoneDone },
      now,
    );
    if (step.kind === "finish") return this.#finish(step.status, step.note);
    if (step.evaluateThresholds) {
      const abortBy = shouldAbortRun(run.spec, this.#totals, now - run.t0Ms);
      if (abortBy) return this.#stop("failed", `threshold ${abortBy.key}: ${abortBy.source} failed (abortOnFail)`);
    }
    if (step.enterFinishing) {
      this.#save({ ...run, status: "finishing" });
      await this.env.DB.batch([updateRunStatus(this.env.DB, run.runId, "finishing")]);
    }
    if (now - this.#lastCheckpointMs >= CHECKPOINT_EVERY_MS) this.#checkpoint();
    if (this.#live.size > 0) this.#live.send("status", this.#liveStatus(this.#run!, now));
    this.#live.flush();
    await this.ctx.storage.setAlarm(Date.now() + TICK_MS);
  }

  /** Starts the push outputs' requests (never awaited: see metrics-push.ts). */
  #pushMetrics(run: RunRecord, now: number): void {
    const outputs = run.spec.outputs ?? [];
    if (!outputs.length || now < run.t0Ms) return;
    try {
      this.#pusher.push(outputs, (type) => metricsPushBody(type, { ...this.#metricsSourceOf(run, now), t0Ms: run.t0Ms }, now));
    } catch (error) {
      console.error(`run ${run.runId}: metrics push not started: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  #shardStub(index: number) {
    const run = this.#run!;
    const ns = this.env.LOAD_SHARD;
    const region = run.plan.shards[index]!.region;
    return ns.get(ns.idFromName(`${run.runId}/${index}`), { locationHint: region as DurableObjectLocationHint });
  }

  async #broadcastAbort(): Promise<void> {
    const run = this.#run!;
    await Promise.allSettled(run.plan.shards.map((s) => this.#shardStub(s.index).abort()));
  }

  #mergeWindow(shard: number, region: string, window: Pick<ShardWindow, "windowS" | "steps" | "series">, live: boolean): void {
    const { windowS, steps } = window;
    if (window.series?.length) {
      const rows = this.#open.at(windowS).series;
      for (const point of window.series) rows.push({ ...point, windowS, shard });
    }
    // The achieved rate counts iterations (a five-request login is one), like the target rate.
    const iterationsIndex = COUNTERS.indexOf("iterations");
    for (const [step, wire] of steps) {
      if (live) this.#totals.addWire(shard, region, step, wire);
      this.#openCell(windowS, region, step).mergeWire(wire);
      this.#iterationsByWindow.set(windowS, (this.#iterationsByWindow.get(windowS) ?? 0) + (wire.c[iterationsIndex] ?? 0));
    }
  }

  #openCell(windowS: number, region: string, step: number): MetricStats {
    const cells = this.#open.at(windowS).cells;
    const key = `${region}\u0000${step}`;
    let cell = cells.get(key);
    if (!cell) cells.set(key, (cell = { region, step, stats: new MetricStats() }));
    return cell.stats;
  }

  /**
   * Writes to D1 every open window that no shard can still add to: below every running
   * shard's watermark, or older than MAX_LATENESS_MS. One batch per tick.
   *
   * The windows leave the open set, and their log rows are marked written, before the
   * batch is awaited: a flush arriving meanwhile opens a fresh cell (written next tick as
   * an extra row) instead of being merged into a cell that is already on its way.
   */
  async #writeClosedWindows(run: RunRecord, now: number, everyoneDone: boolean): Promise<void> {
    const running = run.plan.shards.filter((s) => !this.#shards.isDone(s.index));
    const cutoff = closableBelow({ watermarks: running.map((s) => this.#shards.watermark(s.index)), t0Ms: run.t0Ms, nowMs: now, everyoneDone });
    const ready = this.#open.takeBelow(cutoff);
    if (ready.length === 0) return;
    const cells: Array<WindowCell & { stepIndex: number }> = [];
    const series: SeriesRow[] = [];
    for (const [w, open] of ready) {
      for (const c of open.cells.values()) {
        cells.push({ windowS: w, region: c.region, step: run.spec.steps[c.step]?.name ?? String(c.step), stepIndex: c.step, stats: c.stats });
      }
      series.push(...open.series);
    }
    const sql = this.ctx.storage.sql;
    const ids = sql.exec<{ id: number }>("SELECT id FROM flush_log WHERE written = 0 AND window_s < ?", cutoff).toArray().map((r) => r.id);
    const mark = (written: 0 | 1) => {
      for (let i = 0; i < ids.length; i += 90) {
        const chunk = ids.slice(i, i + 90);
        sql.exec(`UPDATE flush_log SET written = ? WHERE id IN (${chunk.map(() => "?").join(",")})`, written, ...chunk);
      }
    };
    mark(1);
    try {
      await this.env.DB.batch([...windowStatements(this.env.DB, run.runId, cells), ...seriesStatements(this.env.DB, run.runId, series)]);
    } catch (error) {
      mark(0);
      for (const c of cells) this.#openCell(c.windowS, c.region, c.stepIndex).merge(c.stats);
      for (const row of series) this.#open.at(row.windowS).series.push(row);
      throw error;
    }
    this.#publishWindows(run, cells);
    const oldest = ready[ready.length - 1]![0] - 10;
    for (const w of [...this.#iterationsByWindow.keys()]) if (w < oldest) this.#iterationsByWindow.delete(w);
  }

  /** Persists totals and trims log rows that are both in the checkpoint and in D1. */
  #checkpoint(): void {
    const sql = this.ctx.storage.sql;
    const maxId = sql.exec<{ id: number | null }>("SELECT MAX(id) AS id FROM flush_log").one().id ?? 0;
    this.ctx.storage.kv.put("totals", { throughId: maxId, wire: this.#totals.toWire() });
    sql.exec("DELETE FROM flush_log WHERE id <= ? AND written = 1", maxId);
    this.#lastCheckpointMs = Date.now();
  }

  /** Rebuilds totals (checkpoint + newer log rows) and unwritten windows after a restart. */
  #restore(): void {
    this.#run = this.ctx.storage.kv.get<RunRecord>("run") ?? null;
    if (!this.#run) return;
    const checkpoint = this.ctx.storage.kv.get<{ throughId: number; wire: RunTotalsWire }>("totals");
    this.#totals = checkpoint ? RunTotals.fromWire(checkpoint.wire) : new RunTotals();
    const throughId = checkpoint?.throughId ?? 0;
    const rows = this.ctx.storage.sql.exec<{ id: number; shard: number; window_s: number; data: string; written: number }>(
      "SELECT id, shard, window_s, data, written FROM flush_log WHERE id > ? OR written = 0 ORDER BY id", throughId,
    );
    for (const row of rows) {
      const region = this.#run.plan.shards[row.shard]!.region;
      const window = { windowS: row.window_s, ...parseLogData(row.data) };
      if (row.id > throughId) {
        for (const [step, wire] of window.steps) this.#totals.addWire(row.shard, region, step, wire);
      }
      if (row.written === 0) this.#mergeWindow(row.shard, region, window, false);
    }
  }

  #save(run: RunRecord): void {
    this.#run = run;
    this.ctx.storage.kv.put("run", run);
  }

  #buildSummary(run: RunRecord, endMs: number): Summary {
    return buildSummary({
      runId: run.runId,
      status: run.status,
      spec: run.spec,
      plan: run.plan,
      t0Ms: run.t0Ms,
      // Rates are per second of schedule: never past its end, never zero-length.
      endMs: Math.max(run.t0Ms + 1, Math.min(endMs, run.t0Ms + run.spec.durationMs)),
      totals: this.#totals,
      abortReason: run.abortReason,
      phases: run.phases ?? {},
      shards: run.plan.shards.map((s) => ({
        index: s.index, region: s.region, segment: s.segment,
        colo: this.#shards.telemetry(s.index)?.colo ?? "unknown", telemetry: this.#shards.telemetry(s.index),
      })),
    });
  }

  /**
   * Teardown runs once the load is over (whatever the outcome, as k6's does, unless setup
   * failed), with what setup captured; its outcome goes into the summary.
   */
  async #teardown(): Promise<void> {
    const run = this.#run!;
    const steps = run.spec.teardown ?? [];
    const script = runScript(run.spec);
    if (run.phases?.teardown || run.phases?.setup?.ok === false) return;
    if (script?.teardown) {
      const result = await runScriptPhase(this.env, run.runId, run.spec, script, "teardown", run.spec.setupData?.[SETUP_DATA] ?? null);
      this.#save({ ...this.#run!, phases: { ...this.#run!.phases, teardown: phaseView({ ok: result.ok, steps: result.steps, captured: {} }) } });
      return;
    }
    if (steps.length === 0) return;
    const result = await runPhase(run.spec, steps, fetch.bind(globalThis));
    this.#save({ ...this.#run!, phases: { ...this.#run!.phases, teardown: phaseView(result) } });
  }

  /**
   * Ends the run: writes what is left, computes the summary with the final status
   * (`forced` when aborted or failed by abortOnFail, otherwise from thresholds), stores
   * it in D1, and forgets the secrets.
   */
  async #finish(forced: RunStatus | null, note: string | null): Promise<void> {
    await this.#teardown();
    const run = this.#run!;
    const now = Date.now();
    const endMs = run.endMs ?? Math.min(now, run.t0Ms + run.spec.durationMs);
    await this.#writeClosedWindows(run, now, true);
    // The last push, with the final totals and the unredacted spec: after this the
    // outputs' headers are forgotten with the rest of the secrets.
    this.#pushMetrics(run, now);
    const provisional = this.#buildSummary({ ...run, endMs }, endMs);
    const status: RunStatus = forced ?? (provisional.edgeload.thresholdsPassed ? "passed" : "failed");
    const final = { ...run, status, stopping: null, endMs, abortReason: note ?? run.abortReason, spec: redactSpec(run.spec) };
    const summary = this.#buildSummary(final, endMs);
    const elapsedS = Math.max(0.001, (endMs - run.t0Ms) / 1000);
    const db = this.env.DB;
    await db.batch([
      updateRunStatus(db, run.runId, status, { endedAt: endMs, summaryJson: JSON.stringify(summary), thresholdsOk: summary.edgeload.thresholdsPassed, abortReason: final.abortReason }),
      ...run.plan.shards.map((s) => {
        const stats = this.#totals.shard(s.index);
        const t = this.#shards.telemetry(s.index);
        return updateShard(db, run.runId, {
          index: s.index, colo: t?.colo ?? "unknown", stats, restarts: t?.restarts ?? 0, invocations: t?.invocations ?? 0,
          subrequests: t?.subrequests ?? 0, peakInFlight: t?.peakInFlight ?? 0, summaryJson: JSON.stringify(groupSummary(stats, elapsedS)),
        });
      }),
    ]);
    this.ctx.storage.kv.put("summary", summary);
    this.#save(final);
    this.#checkpoint();
    this.#publishEnd(final, summary);
    await this.ctx.storage.deleteAlarm();
  }
}
