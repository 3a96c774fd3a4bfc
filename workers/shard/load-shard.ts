/**
 * LoadShard: one Durable Object per shard of a run, placed with a location hint.
 *
 * It stores its assignment and state (its cursor among them), builds its flow, runs the
 * ShardEngine from alarms, persists its closed windows (each one, or every fourth in a run
 * with an aggregation tree: #windowClosed), flushes the windows to the RunCoordinator (in a
 * run with an aggregation tree, to its aggregator) oldest first (a final flush retried with
 * backoff until its grace ends) and reports its telemetry, with the colo it observes
 * (core/formats/cdn-cgi-trace.ts). Running from alarms means it survives eviction: a planned
 * handover between invocations (to stay under the per-invocation subrequest limit) continues
 * where it left off, while an unplanned restart resumes at the current time and counts what
 * it lost interrupted (restart-loss.ts). It stops by its own deadline even if the coordinator
 * is gone. Closed-model runs (VUs) work the same way: their budget counts requests, and a new
 * invocation (handoff or restart) restarts the VU loops the schedule (or an externally-controlled
 * run's level, told by control() and stored: shard-control.ts) has active at its current time.
 *
 * The flow (custom steps or a built-in scenario) is built once per object instance; a
 * scenario's seed set is read from R2 then, never per request. Flow state (refresh-token
 * families) is checkpointed with each window the shard writes (every window, or every
 * assignment.windowsPerWrite in a run with a tree), so a restart continues it from there.
 *
 * Its first alarm comes before t0 (warm-up.ts): it reads its colo, builds its flow, opens its connection
 * to the target with one uncounted request and waits for t0, so the run's first second is not a cold start.
 *
 * The object is thin: its state and each change of it are in shard-state.ts, building the flow in shard-flow.ts,
 * sending the stored windows in window-flusher.ts, reading the colo in observe-colo.ts, the warm-up in warm-up.ts.
 *
 * Once its receiver has acknowledged its done it deletes its storage but a tombstone, and
 * its run's coordinator has it delete that too once the run is final and in D1 (shard-end.ts).
 *
 * RPC surface: start(), abort(), control(), inspect(), cleanUp(), probe().
 */
import { DurableObject } from "cloudflare:workers";
import { toRunWindow, type ShardAssignment, type ShardWindow } from "../../core/run/protocol.ts";
import type { Env } from "../env.ts";
import { redactSpec } from "../../core/spec/redact.ts";
import type { Flow } from "../../scenarios/flow.ts";
import { ShardEngine } from "./engine.ts";
import { outboundFetch } from "../outbound/outbound-fetch.ts";
import { targetPolicy } from "../outbound/policies.ts";
import { LoopWatch } from "../../core/metrics/loop-delay.ts";
import { buildShardFlow } from "./shard-flow.ts";
import { observeColo } from "./observe-colo.ts";
import { probeFromHere, type ShardProbe } from "./latency-probe.ts";
import { modeOf } from "../../core/spec/target-policy.ts";
import type { ProbeRequest } from "../../core/plan/latency-probe.ts";
import { firstAlarmAtMs, sendWarmUp, shouldWarmUp } from "./warm-up.ts";
import { WindowFlusher, shardFlushRoute, windowKey, type FlushReceivers } from "./window-flusher.ts";
import { systemClock } from "./engine-types.ts";
import { countRestartLoss } from "./restart-loss.ts";
import { ShardRecord } from "./shard-record.ts";
import { ShardControl } from "./shard-control.ts";
import type { VuControl } from "../../core/run/vu-control.ts";
import { deleteEverything, keepOnlyTombstone, startTooLate, tombstone } from "./shard-end.ts";
import {
  invocationStarted,
  resumesAfterCrash,
  windowWrites,
  scheduledState,
  shardTelemetry,
  sliceEnded,
  windowClosed,
  type ShardInspection,
  type ShardPhase,
  type ShardState,
} from "./shard-state.ts";

const FLOW_STATE = "flowState";
/** A doubled alarm delivery re-arms the alarm this far ahead while an invocation runs (see alarm()). */
const RESUME_AFTER_MS = 1_000;
/**
 * While the final flush is under way an alarm stays set this far ahead, so that a restart
 * cutting it short (its receiver unreachable) is woken to retry it, not leaving the stored
 * windows unsent (chaos tree seed 70). The flush's own backoff waits at most 5 s.
 */
const FINAL_FLUSH_GUARD_MS = 10_000;

type ShardEnv = Env & FlushReceivers;

export class LoadShard extends DurableObject<ShardEnv> {
  #engine: ShardEngine | null = null;
  #flow: Flow | null = null;
  #invoking = false;
  /** Its assignment and state, stored and mirrored (shard-record.ts); a stored window goes to the flusher. */
  readonly #record = new ShardRecord(this.ctx.storage, (key, window) => this.#flusher.stored(key, window));
  /** An externally-controlled run's level, stored (shard-control.ts). */
  readonly #control = new ShardControl(this.ctx.storage.kv);
  /** Sends the stored windows to the coordinator, or to the shard's aggregator (window-flusher.ts). */
  readonly #flusher = new WindowFlusher({
    pending: {
      load: () => Object.entries(this.#state()?.pending ?? {}),
      acknowledged: (keys) => {
        const state = this.#state();
        if (!state?.pending) return;
        const pending = { ...state.pending };
        for (const key of keys) delete pending[key];
        // Kept in memory until the state is next written (the next window close) — unless
        // none will come: then now. A lost drop only re-sends windows the receiver skips.
        if (state.phase === "done") this.#save({ ...state, pending });
        else this.#record.keepInMemory({ ...state, pending });
      },
    },
    clock,
    route: () => {
      const assignment = this.#assignment();
      return assignment && shardFlushRoute(this.env, assignment);
    },
    progress: () => {
      const state = this.#state()!;
      const watermarkS = this.#record.writtenWatermarkS ?? state.watermarkS;
      return { finished: state.phase === "done", watermarkS, telemetry: shardTelemetry(this.#assignment()!, state) };
    },
    stopEngine: () => this.#engine?.stop(),
  });

  /**
   * Stores the assignment and arms the alarm for T0. Idempotent for the same run, also once
   * the run has ended for this shard (its tombstone) or is past its deadline and grace.
   */
  async start(assignment: ShardAssignment): Promise<{ ok: true }> {
    const existing = this.#assignment()?.runId ?? tombstone(this.ctx.storage)?.runId;
    if (existing && existing !== assignment.runId) throw new Error(`shard already belongs to run ${existing}`);
    if (!existing && !this.#record.letGo && !startTooLate(assignment, Date.now())) {
      this.#record.storeAssignment(assignment);
      this.#save(scheduledState(assignment));
      await this.ctx.storage.setAlarm(firstAlarmAtMs(assignment.t0Ms, Date.now()));
    }
    return { ok: true };
  }

  /** Stops sending within one loop turn; what was measured is still flushed. */
  async abort(): Promise<{ phase: ShardPhase }> {
    const state = this.#state();
    if (!state) return { phase: "done" };
    this.#save({ ...state, stopRequested: true });
    if (this.#engine) {
      this.#engine.stop();
      return { phase: "running" };
    }
    if (resumesAfterCrash(state)) {
      // Restarted mid-run and not resumed yet: resume now, stopped at once, so that what its
      // dead windows held is counted interrupted as any resume counts it — finishing here
      // left those results lost and uncounted (chaos flat seed 89).
      await this.ctx.storage.setAlarm(Date.now());
      return { phase: "running" };
    }
    if (state.phase !== "done") {
      this.#save({ ...this.#state()!, phase: "done" });
      const assignment = this.#assignment();
      if (assignment) this.#forgetSecrets(assignment);
      await this.#finalFlush();
    }
    return { phase: "done" };
  }

  /** An externally-controlled run's new level: kept if newer, followed at once; ignored once the shard has stopped. */
  async control(level: VuControl): Promise<{ held: VuControl | null }> {
    const sending = this.#assignment() !== undefined && this.#state()?.phase !== "done" && !this.#record.letGo;
    return { held: sending ? this.#control.tell(level) : null };
  }

  /** State for tests and diagnostics (no secrets); once the run ended for it, as its tombstone keeps it. */
  async inspect(): Promise<ShardInspection> {
    const state: Omit<ShardState, "pending"> | undefined = this.#state() ?? tombstone(this.ctx.storage)?.state;
    const pendingWindows = this.#record.letGo ? 0 : this.#flusher.storedCount();
    const { pending: _windows, ...rest } = (state ?? {}) as ShardState;
    return { ...rest, pendingWindows, alarm: await this.ctx.storage.getAlarm() };
  }

  /** `POST /v1/probe`: the target's time to first byte from this shard's region (latency-probe.ts); stores nothing. */
  async probe(request: ProbeRequest, requests: number, budgetMs: number, ownedHosts?: readonly string[]): Promise<ShardProbe> {
    const fetcher = outboundFetch(targetPolicy(this.env, ownedHosts));
    // A local shard does not ask its colo, as a local run's does not (shard-state.ts).
    const colo = modeOf(this.env.EDGELOAD_MODE) === "local" ? Promise.resolve("local") : observeColo(this.env.COLO_TRACE_URL);
    const [where, timed] = await Promise.all([colo, probeFromHere(fetcher, Date, request, requests, budgetMs)]);
    return { colo: where, ...timed };
  }

  /**
   * The run is final and its results are in D1 (its coordinator, or an aggregator passing
   * it down, says so): nothing of it is kept, the tombstone included. Stops an engine still
   * sending (a shard its stop never reached).
   */
  async cleanUp(runId: string): Promise<{ cleaned: true }> {
    const holds = this.#assignment()?.runId ?? tombstone(this.ctx.storage)?.runId;
    if (holds !== undefined && holds !== runId) throw new Error(`shard belongs to run ${holds}, not ${runId}`);
    this.#engine?.stop();
    await this.#record.letGoOf(() => deleteEverything(this.ctx.storage));
    return { cleaned: true };
  }

  /**
   * Alarms are delivered at least once: a second delivery while an invocation runs in this
   * instance would start another engine over the same cursor and send its iterations twice.
   */
  override async alarm(): Promise<void> {
    if (this.#invoking) {
      // This delivery ends now, and the runtime counts the alarm delivered: were this instance
      // reset before the running invocation ends, nothing would wake the shard again (chaos
      // flat seed 123, an alarm doubled then a restart: its share left neither sent nor
      // dropped). So it stays armed; the running invocation disarms it as it ends.
      const sending = this.#state()?.phase !== "done";
      await this.ctx.storage.setAlarm(Date.now() + (sending ? RESUME_AFTER_MS : FINAL_FLUSH_GUARD_MS));
      return;
    }
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
      // Only flushing is left (a previous attempt failed or was cut short): retry until the grace ends.
      await this.#finalFlush();
      return;
    }
    if (state.colo === "unknown") state = { ...state, colo: await observeColo(this.env.COLO_TRACE_URL) };

    if (!this.#flow) {
      const built = await buildShardFlow(this.env, assignment, this.ctx.storage.kv);
      if (built.seedLoaded) state = { ...state, seedLoads: (state.seedLoads ?? 0) + 1 };
      // Flow state (refresh-token families) is stored as each window closes (#windowClosed).
      const saved = this.ctx.storage.kv.get<unknown>(FLOW_STATE);
      if (saved !== undefined) built.flow.restore?.(saved);
      this.#flow = built.flow;
    }
    // Requests and their redirects reach only targets this deployment allows (workers/outbound/).
    const fetcher = outboundFetch(targetPolicy(this.env, assignment.ownedHosts));
    if (shouldWarmUp(assignment.t0Ms, clock.now(), state.warmUp !== undefined)) {
      this.#save((state = { ...state, warmUp: await sendWarmUp(fetcher, assignment.spec.target, clock) }));
      await clock.sleep(assignment.t0Ms - clock.now());
      // An abort while it waited ended the shard (abort()): nothing is left to run.
      state = this.#state()!;
      if (state.phase === "done") return;
    }
    const part = state.invocations + 1;
    const engine = new ShardEngine(
      assignment,
      clock,
      fetcher,
      (w) => this.#windowClosed({ ...w, part }, engine, assignment),
      this.#flow,
      loopWatch,
      state.iterationProgress ?? null,
      this.#control,
    );
    const now = Date.now();
    const resumedAfterCrash = resumesAfterCrash(state);
    // Unplanned restart: resume at the current time, counting what the restart lost (restart-loss.ts).
    const cursor = resumedAfterCrash ? countRestartLoss(engine, state, assignment, now) : state.cursor;
    this.#engine = engine;
    // The stored cursor stays where the last window closed: the iterations just skipped are
    // counted in the engine's open window, which is stored (with the cursor past them) when
    // it closes. Storing the cursor now would lose them to a crash before that.
    this.#save(invocationStarted(state, part, resumedAfterCrash, now));
    if (state.stopRequested) engine.stop();

    let result;
    try {
      result = await engine.run(cursor, assignment.iterationsPerInvocation);
    } finally {
      this.#engine = null;
    }
    const handoff = result.end === "handoff";
    // A k6/browser script's connection ends with the alarm; its session with the shard (browser-session.ts).
    await this.#flow?.invocationEnded?.(!handoff).catch((error: unknown) => console.error(`browser session: ${String(error)}`));
    if (!handoff) this.#forgetSecrets(assignment);
    this.#save(sliceEnded(this.#state()!, result, engine.iterationProgress));
    if (handoff) {
      await this.ctx.storage.setAlarm(Date.now());
      await this.#flusher.flush(false);
    } else await this.#finalFlush();
  }

  /**
   * The last flush, done flag included, guarded by an alarm (FINAL_FLUSH_GUARD_MS) until it
   * gets through or gives up; then no alarm is left (a doubled delivery's re-arm included).
   */
  async #finalFlush(): Promise<void> {
    await this.ctx.storage.setAlarm(Date.now() + FINAL_FLUSH_GUARD_MS);
    await this.#flusher.flush(true);
    const assignment = this.#assignment();
    const state = this.#state();
    // Its done acknowledged, the receiver holds all it measured: only a tombstone is kept (shard-end.ts).
    if (this.#flusher.doneAcknowledged && assignment && state) await this.#record.letGoOf(() => keepOnlyTombstone(this.ctx.storage, assignment.runId, state));
    else await this.ctx.storage.deleteAlarm();
  }

  /** Once the shard has stopped sending, its stored spec keeps no secret. */
  #forgetSecrets(assignment: ShardAssignment): void {
    this.#record.storeAssignment({ ...assignment, spec: redactSpec(assignment.spec) });
  }

  #assignment(): ShardAssignment | undefined {
    return this.#record.assignment();
  }

  #state(): ShardState | undefined {
    return this.#record.state();
  }

  #save(state: ShardState): void {
    this.#record.save(state);
  }

  /**
   * A window closed in the engine: stored together with the cursor past it (so a crash
   * resumes from here, see ShardEngine.covered) and flushed in the background — or, between
   * writes (assignment.windowsPerWrite), held in memory, unsent, until the next one. A
   * window never sent is never counted: a crash loses what it held, and the resume counts
   * its iterations interrupted, as it does those of the open window.
   */
  #windowClosed(window: ShardWindow, engine: ShardEngine, assignment: ShardAssignment): void {
    const scenario = assignment.part;
    const state = this.#state();
    if (!state || this.#record.letGo) return;
    // A named scenario's shard counts windows from its own start and steps from its own
    // first: stored in the run's numbering, as the coordinator merges them.
    const runWindow = toRunWindow(window, scenario);
    const held = this.#record.hold(windowKey(runWindow), runWindow);
    const closed = windowClosed(state, engine, scenario?.windowOffsetS ?? 0);
    const writes = windowWrites(held, assignment.windowsPerWrite, window.windowS, assignment.shard.index, Boolean(this.#flow?.snapshot));
    // allowUnconfirmed: an output gate would hold the next sends until the write is
    // confirmed, adding latency to requests that have nothing to do with it.
    const flowState = writes.flowState ? { [FLOW_STATE]: this.#flow!.snapshot!() } : {};
    if (!writes.state) {
      this.#record.keepInMemory(closed);
      if (writes.flowState) this.#record.putUnconfirmed(flowState);
      return;
    }
    this.#record.saveUnconfirmed(closed, flowState);
    // The engine closes each shard's window at its own point of the second, so flushes
    // (and the coordinator's merges) are spread too. Started after this turn: when the
    // engine's last close is what ends its slice, the final flush (called as the slice
    // returns) goes first and carries these windows with its done, one message where a
    // background flush and then an empty done made two.
    setTimeout(() => void this.#flusher.flush(false), 0);
  }
}

const clock = systemClock;

/** Every shard in this isolate shares one event loop, so they share its probes (client_delay). */
const loopWatch = new LoopWatch(clock);
