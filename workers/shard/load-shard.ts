/**
 * LoadShard: one Durable Object per shard of a run, placed with a location hint.
 *
 * It stores its assignment and state (its cursor among them), builds its flow, runs the
 * ShardEngine from alarms, persists each closed window, flushes the windows to the
 * RunCoordinator oldest first (a final flush retried with backoff until its grace ends) and
 * reports its telemetry, with the colo it observes (core/formats/cdn-cgi-trace.ts). Running from
 * alarms means it survives eviction: a planned handover between invocations (to stay
 * under the per-invocation subrequest limit) continues where it left off, while an
 * unplanned restart resumes at the current time and counts what it missed as dropped.
 * It stops by its own deadline even if the coordinator is gone. Closed-model runs (VUs)
 * work the same way: their budget counts requests, and a new invocation (handoff or
 * restart) restarts the VU loops the schedule has active at its current time.
 *
 * The flow (custom steps or a built-in scenario) is built once per object instance; a
 * scenario's seed set is read from R2 then, never per request. Flow state (refresh-token
 * families) is checkpointed with each window, so a restart continues it.
 *
 * RPC surface: start(), abort(), inspect().
 */
import { DurableObject } from "cloudflare:workers";
import { toRunWindow, type FlushAck, type ShardAssignment, type ShardFlush, type ShardTelemetry, type ShardWindow } from "../../core/run/protocol.ts";
import type { Env, ObjectNamespaces } from "../env.ts";
import { redactSpec } from "../../core/spec/redact.ts";
import { parseSeedSet, seedObjectKey, type SeedData } from "../../core/data/seed-set.ts";
import { createFlow } from "../../scenarios/create-flow.ts";
import { SETUP_DATA, scriptObjectKey } from "../../core/spec/script-schema.ts";
import { scriptEntrypoint, scriptFlow, type ScriptModules } from "./script-flow.ts";
import type { Flow } from "../../scenarios/flow.ts";
import { ShardEngine, type IterationProgress } from "./engine.ts";
import { followingAllowedRedirects } from "./redirect-guard.ts";
import { checkTarget, modeOf } from "../../core/spec/target-policy.ts";
import { coloFromTrace } from "../../core/formats/cdn-cgi-trace.ts";
import { finerResolution } from "../../core/metrics/clock-resolution.ts";
import { LoopWatch } from "../../core/metrics/loop-delay.ts";

type Phase = "scheduled" | "running" | "done";

interface ShardState {
  readonly phase: Phase;
  /** Next own iteration to consider. */
  readonly cursor: number;
  /** The last invocation ended on purpose (subrequest budget): resume without skipping. */
  readonly handoff: boolean;
  readonly stopRequested: boolean;
  readonly restarts: number;
  /** When the last unplanned restart resumed (epoch ms): what it skipped fell due before this. */
  readonly lastRestartMs?: number;
  readonly invocations: number;
  readonly subrequests: number;
  readonly peakInFlight: number;
  readonly colo: string;
  /** Every window below this has been handed to the flusher. */
  readonly watermarkS: number;
  /** Times this shard read its seed set from R2 (once per object instance). */
  readonly seedLoads?: number;
  /** What its engines saw of the clock and of the target (see ShardTelemetry). */
  readonly clockResolutionUs?: number | null;
  readonly behindCloudflare?: boolean;
  /** Iteration-count executors: how far they got, for the invocation after a handoff. */
  readonly iterationProgress?: IterationProgress | null;
}

const WINDOW_PREFIX = "window:";
const FLOW_STATE = "flowState";
/** Windows per flush RPC, so one message stays small. */
const WINDOWS_PER_FLUSH = 20;

/**
 * What a shard calls on its run's coordinator: the flush of core/run/protocol.ts. The binding is
 * typed by this surface, not by the RunCoordinator class, so the shard does not import the
 * coordinator (coordinator/routes-env.ts checks that RunCoordinator offers it).
 */
export interface CoordinatorOfShard extends Rpc.DurableObjectBranded {
  flush(message: ShardFlush): Promise<FlushAck>;
}

export class LoadShard extends DurableObject<Env & ObjectNamespaces<CoordinatorOfShard>> {
  #engine: ShardEngine | null = null;
  #flow: Flow | null = null;
  #flushing: Promise<void> | null = null;
  #flushAgain = false;
  #finalRequested = false;
  #invoking = false;
  /**
   * The stored assignment, read once per instance: it holds the whole spec, and reading it
   * back (a deserialisation) for every flush of every window was the largest storage cost
   * of a shard. This object is its only writer (start(), #forgetSecrets()).
   */
  #assignmentCache: ShardAssignment | undefined;
  /** The stored state, read once per instance, like the assignment (this object its only writer). */
  #stateCache: ShardState | undefined;
  /**
   * The stored windows not yet acknowledged, oldest first, mirrored in memory: listing them
   * back from storage for every flush deserialised each one again (a CPU profile of 16
   * shards at 100/s put that list at 6% of the isolate's time). Null until this instance
   * first flushes, when it is read once from storage (windows a previous instance left).
   */
  #pending: Map<string, ShardWindow> | null = null;

  /** Stores the assignment and arms the alarm for T0. Idempotent for the same run. */
  async start(assignment: ShardAssignment): Promise<{ ok: true }> {
    const existing = this.#assignment();
    if (existing && existing.runId !== assignment.runId) throw new Error(`shard already belongs to run ${existing.runId}`);
    if (!existing) {
      this.#storeAssignment(assignment);
      this.#save({
        phase: "scheduled",
        cursor: 0,
        handoff: false,
        stopRequested: false,
        restarts: 0,
        invocations: 0,
        subrequests: 0,
        peakInFlight: 0,
        colo: assignment.mode === "local" ? "local" : "unknown",
        watermarkS: 0,
      });
      await this.ctx.storage.setAlarm(assignment.t0Ms);
    }
    return { ok: true };
  }

  /** Stops sending within one loop turn; what was measured is still flushed. */
  async abort(): Promise<{ phase: Phase }> {
    const state = this.#state();
    if (!state) return { phase: "done" };
    this.#save({ ...state, stopRequested: true });
    if (this.#engine) {
      this.#engine.stop();
      return { phase: "running" };
    }
    if (state.phase !== "done") {
      await this.ctx.storage.deleteAlarm();
      this.#save({ ...this.#state()!, phase: "done" });
      const assignment = this.#assignment();
      if (assignment) this.#forgetSecrets(assignment);
      await this.#flush(true);
    }
    return { phase: "done" };
  }

  /** State for tests and diagnostics (no secrets). */
  async inspect(): Promise<ShardState & { pendingWindows: number; alarm: number | null }> {
    const state = this.#state();
    const pendingWindows = [...this.ctx.storage.kv.list({ prefix: WINDOW_PREFIX })].length;
    return { ...(state as ShardState), pendingWindows, alarm: await this.ctx.storage.getAlarm() };
  }

  /**
   * Alarms are delivered at least once: a second delivery while an invocation runs in this
   * instance would start another engine over the same cursor and send its iterations twice.
   */
  override async alarm(): Promise<void> {
    if (this.#invoking) return;
    this.#invoking = true;
    try {
      await this.#invoke();
    } finally {
      this.#invoking = false;
    }
  }

  async #invoke(): Promise<void> {
    const assignment = this.#assignment();
    let state = this.#state();
    if (!assignment || !state) return;
    if (state.phase === "done") {
      // Only flushing is left (a previous attempt failed): retry until the grace ends.
      await this.#flush(true);
      return;
    }
    if (state.colo === "unknown") state = { ...state, colo: await observeColo(this.env.COLO_TRACE_URL ?? CLOUDFLARE_TRACE_URL) };

    if (!this.#flow) {
      const built = await this.#buildFlow(assignment, state);
      this.#flow = built.flow;
      state = built.state;
    }
    const part = state.invocations + 1;
    // Redirects are followed only onto targets this deployment allows (redirect-guard.ts).
    const fetcher = followingAllowedRedirects(
      fetch.bind(globalThis),
      (url) => checkTarget(url, this.env.ALLOWED_TARGETS, modeOf(this.env.EDGELOAD_MODE)) === null,
    );
    const engine = new ShardEngine(
      assignment,
      clock,
      fetcher,
      (w) => this.#windowClosed({ ...w, part }, engine, assignment),
      this.#flow,
      loopWatch,
      state.iterationProgress ?? null,
    );
    const now = Date.now();
    let cursor = state.cursor;
    const resumedAfterCrash = state.phase === "running" && !state.handoff;
    // A closed-model run has nothing to skip: its VU loops restart from the schedule now.
    if (resumedAfterCrash && !engine.closedModel) {
      // Unplanned restart: resume at the current time; what fell due meanwhile is dropped.
      const resumeAt = engine.share.firstDueAtOrAfter(now - assignment.t0Ms);
      engine.skip(cursor, Math.max(cursor, resumeAt), now);
      cursor = Math.max(cursor, resumeAt);
    }
    this.#engine = engine;
    // The stored cursor stays where the last window closed: the iterations just skipped are
    // counted in the engine's open window, which is stored (with the cursor past them) when
    // it closes. Storing the cursor now would lose them to a crash before that.
    this.#save({
      ...state,
      phase: "running",
      handoff: false,
      invocations: part,
      restarts: state.restarts + (resumedAfterCrash ? 1 : 0),
      ...(resumedAfterCrash ? { lastRestartMs: now } : {}),
    });
    if (state.stopRequested) engine.stop();

    let result;
    try {
      result = await engine.run(cursor, assignment.iterationsPerInvocation);
    } finally {
      this.#engine = null;
    }
    const after = this.#state()!;
    const handoff = result.end === "handoff";
    if (!handoff) this.#forgetSecrets(assignment);
    this.#save({
      ...after,
      phase: handoff ? "running" : "done",
      cursor: result.cursor,
      handoff,
      subrequests: after.subrequests + result.sent,
      iterationProgress: engine.iterationProgress,
      peakInFlight: Math.max(after.peakInFlight, result.peakInFlight),
    });
    if (handoff) await this.ctx.storage.setAlarm(Date.now());
    await this.#flush(!handoff);
  }

  /**
   * The flow for this run, with its seed set read from R2 and its checkpointed state
   * restored. A seed set that is missing or unreadable fails the shard loudly: the
   * coordinator checked it exists when the run was created.
   */
  async #buildFlow(assignment: ShardAssignment, state: ShardState): Promise<{ flow: Flow; state: ShardState }> {
    let data: SeedData | null = null;
    const seed = assignment.spec.scenario?.seed ?? assignment.spec.data?.seed;
    if (seed) {
      const object = await this.env.SEEDS.get(seedObjectKey(seed));
      if (!object) throw new Error(`seed set ${seed} is not in R2`);
      const parsed = parseSeedSet(await object.json());
      if (!parsed.ok) throw new Error(`seed set ${seed} does not validate: ${parsed.problems[0]?.detail}`);
      data = parsed.data;
      state = { ...state, seedLoads: (state.seedLoads ?? 0) + 1 };
    }
    const flow = assignment.spec.script
      ? await this.#scriptFlow(assignment)
      : createFlow(assignment.spec, data, { index: assignment.shard.index, count: assignment.weights.length });
    const saved = this.ctx.storage.kv.get<unknown>(FLOW_STATE);
    if (saved !== undefined) flow.restore?.(saved);
    return { flow, state };
  }

  /** A k6 script's flow: its bundle read from R2, run in an isolate of its own. */
  async #scriptFlow(assignment: ShardAssignment): Promise<Flow> {
    const spec = assignment.spec;
    const script = spec.script!;
    if (!this.env.LOADER) throw new Error("this deployment has no Worker Loader binding (LOADER): it cannot run k6 scripts");
    const object = await this.env.SEEDS.get(scriptObjectKey(script.bundle));
    if (!object) throw new Error(`script bundle ${script.bundle} is not in R2`);
    const entry = scriptEntrypoint(this.env.LOADER, `${assignment.runId}:${script.bundle}`, await object.json<ScriptModules>());
    return scriptFlow(entry, {
      script,
      scenario: { name: assignment.part?.scenario ?? "default", executor: spec.executor, startTimeMs: (assignment.part?.windowOffsetS ?? 0) * 1000 },
      firstPoolVu: assignment.shard.index * assignment.shard.maxInFlight + 1,
      steps: spec.steps.map((s) => s.name),
      setupData: spec.setupData?.[SETUP_DATA] ?? null,
      mayRequest: (url) => checkTarget(url, this.env.ALLOWED_TARGETS, modeOf(this.env.EDGELOAD_MODE))?.detail ?? null,
    });
  }

  /** Once the shard has stopped sending, its stored spec keeps no secret. */
  #forgetSecrets(assignment: ShardAssignment): void {
    this.#storeAssignment({ ...assignment, spec: redactSpec(assignment.spec) });
  }

  #assignment(): ShardAssignment | undefined {
    return (this.#assignmentCache ??= this.ctx.storage.kv.get<ShardAssignment>("assignment"));
  }

  #storeAssignment(assignment: ShardAssignment): void {
    this.ctx.storage.kv.put("assignment", assignment);
    this.#assignmentCache = assignment;
  }

  #state(): ShardState | undefined {
    return (this.#stateCache ??= this.ctx.storage.kv.get<ShardState>("state"));
  }

  #save(state: ShardState): void {
    this.ctx.storage.kv.put("state", state);
    this.#stateCache = state;
  }

  /**
   * A window closed in the engine: persist it together with the cursor (so a crash
   * resumes from here, see ShardEngine.cursor), then flush in the background.
   */
  #windowClosed(window: ShardWindow, engine: ShardEngine, assignment: ShardAssignment): void {
    const scenario = assignment.part;
    const state = this.#state();
    if (!state) return;
    // allowUnconfirmed: an output gate would hold the next sends until the write is
    // confirmed, adding latency to requests that have nothing to do with it.
    // A named scenario's shard counts windows from its own start and steps from its own
    // first: stored in the run's numbering, as the coordinator merges them.
    const runWindow = toRunWindow(window, scenario);
    const key = `${WINDOW_PREFIX}${String(runWindow.windowS).padStart(8, "0")}:${runWindow.part}`;
    const next: ShardState = {
      ...state,
      watermarkS: engine.closedThrough + (scenario?.windowOffsetS ?? 0),
      cursor: engine.cursor,
      clockResolutionUs: finerResolution(state.clockResolutionUs, engine.clockResolutionUs),
      behindCloudflare: state.behindCloudflare || engine.behindCloudflare,
    };
    this.#pending?.set(key, runWindow);
    this.#stateCache = next;
    void this.ctx.storage.put<unknown>(
      {
        [key]: runWindow,
        state: next,
        ...(this.#flow?.snapshot ? { [FLOW_STATE]: this.#flow.snapshot() } : {}),
      },
      { allowUnconfirmed: true },
    );
    // The engine closes each shard's window at its own point of the second, so flushes
    // (and the coordinator's merges) are spread too.
    void this.#flush(false);
  }

  /**
   * Sends pending windows to the coordinator, oldest first, deleting each batch once
   * acknowledged. Single flight: a call while a flush runs makes that flush go round once
   * more (picking up a final request) instead of starting a second one. A failed
   * non-final flush is retried at the next window close; a final one retries with backoff
   * until the deadline grace ends, so an unreachable coordinator never keeps the shard
   * alive past that.
   */
  #flush(final: boolean): Promise<void> {
    if (final) this.#finalRequested = true;
    if (this.#flushing) {
      this.#flushAgain = true;
      return this.#flushing;
    }
    this.#flushing = (async () => {
      do {
        this.#flushAgain = false;
        await this.#flushOnce(this.#finalRequested);
      } while (this.#flushAgain);
    })().finally(() => (this.#flushing = null));
    return this.#flushing;
  }

  async #flushOnce(final: boolean): Promise<void> {
    const assignment = this.#assignment();
    if (!assignment) return;
    const coordinator = this.env.RUN_COORDINATOR.get(this.env.RUN_COORDINATOR.idFromName(assignment.runId));
    for (let attempt = 0; ; attempt++) {
      const pending = this.#oldestPending(WINDOWS_PER_FLUSH);
      const state = this.#state()!;
      const last = pending.length < WINDOWS_PER_FLUSH;
      const done = final && state.phase === "done" && last;
      if (pending.length === 0 && !done) return;
      const message: ShardFlush = {
        runId: assignment.runId,
        shardIndex: assignment.part?.runShard ?? assignment.shard.index,
        windows: pending.map(([, w]) => w),
        watermarkS: done ? Number.MAX_SAFE_INTEGER : state.watermarkS,
        done,
        telemetry: telemetry(assignment, state),
      };
      let ack: FlushAck;
      try {
        ack = await coordinator.flush(message);
      } catch (error) {
        const giveUpAt = assignment.deadlineMs + assignment.flushGraceMs;
        if (Date.now() > giveUpAt) {
          console.warn(`shard ${assignment.shard.index}: coordinator unreachable past the grace period, giving up`, String(error));
          return;
        }
        if (!final) return; // the next window close retries
        await clock.sleep(Math.min(5_000, 200 * 2 ** attempt));
        continue;
      }
      // Unconfirmed like the window's write: a gated delete would hold this isolate's next
      // sends until it is durable, and a lost one only re-sends windows the coordinator skips.
      void this.ctx.storage.delete(
        pending.map(([key]) => key),
        { allowUnconfirmed: true },
      );
      for (const [key] of pending) this.#pending!.delete(key);
      if (ack.stop) this.#engine?.stop();
      if (done || (!final && last)) return;
    }
  }

  /** Up to `limit` windows not yet acknowledged, oldest first, with their storage keys. */
  #oldestPending(limit: number): Array<[string, ShardWindow]> {
    this.#pending ??= new Map(this.ctx.storage.kv.list<ShardWindow>({ prefix: WINDOW_PREFIX }));
    const oldest: Array<[string, ShardWindow]> = [];
    for (const entry of this.#pending) {
      if (oldest.length === limit) break;
      oldest.push(entry);
    }
    return oldest;
  }
}

function telemetry(a: ShardAssignment, s: ShardState): ShardTelemetry {
  return {
    region: a.shard.region,
    colo: s.colo,
    invocations: s.invocations,
    restarts: s.restarts,
    subrequests: s.subrequests,
    peakInFlight: s.peakInFlight,
    clockResolutionUs: s.clockResolutionUs ?? null,
    behindCloudflare: s.behindCloudflare ?? false,
  };
}

const clock = {
  now: () => Date.now(),
  sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
};

/** Every shard in this isolate shares one event loop, so they share its probes (client_delay). */
const loopWatch = new LoopWatch(clock);

/** Any Cloudflare zone's trace reports the colo that served it. */
const CLOUDFLARE_TRACE_URL = "https://cloudflare.com/cdn-cgi/trace";

/**
 * The colo this object runs in (see core/formats/cdn-cgi-trace.ts): a deployed object reads it from
 * a Cloudflare zone's /cdn-cgi/trace (`traceUrl`; the deploy test points it at loopback).
 */
async function observeColo(traceUrl: string): Promise<string> {
  try {
    const text = await (await fetch(traceUrl, { signal: AbortSignal.timeout(3_000) })).text();
    return coloFromTrace(text);
  } catch {
    return "unknown";
  }
}
