/**
 * The shard's send loop: open-model pacing, connection slots, timing and window stats.
 *
 * No Durable Object API in here: the clock, sleep and fetch are injected, and closed
 * windows leave through a callback. LoadShard (a thin Durable Object) persists state and
 * flushes windows; tests and benchmarks can drive the engine directly.
 *
 * Per iteration: when the pacer says it is due (never earlier), the engine either starts
 * it or, if the in-flight cap is reached, counts it in `dropped` — it never slides the
 * schedule. A started iteration runs the flow (scenarios/flow.ts: one request for custom
 * steps, several for a login). Each request waits for a connection slot, sends, takes a
 * timestamp at headers (TTFB) and after the body, and records duration, TTFB, corrected
 * latency (from the intended time: the schedule for a flow's first request, the moment
 * the flow asked for later ones), schedule lag and client delay (how long this isolate's
 * event loop held the response, core/loop-delay.ts) into the window of its completion second;
 * it is counted as `sent` in the window of the second it left in, the second its
 * `x-edgeload-run` header names, so the target's count of it lines up (core/delivery.ts).
 *
 * Closed model (`constant-vus`, `ramping-vus`, `per-vu-iterations`, `shared-iterations`):
 * no pacer. The engine keeps one loop per
 * VU this shard owns (core/vu-schedule.ts) that is active now; a loop runs the flow back to
 * back (its think time included) and ends when the schedule no longer has its VU. A VU
 * the ramp-down stops finishes its iteration within `gracefulRampDown`; at the end of the
 * last stage iterations stop (think time cut short, no new request; requests in flight
 * complete within the timeout). An interrupted iteration is not counted, as in k6.
 * Connection slots, timeouts and per-window stats work as in the open model; schedule lag
 * and corrected latency do not apply (there is no intended time: a VU waits for its own
 * previous request), so only duration, TTFB and slot wait are recorded. The budget counts
 * requests: once this invocation sent that many, loops start no new iteration and the run
 * hands off; the next invocation restarts the loops from the schedule at its current time.
 * The iteration-count executors stop a VU when its iterations are done (its own count, or
 * the shard's part of the shared count, taken as VUs come free) and end the shard when every
 * VU has stopped, maxDuration at the latest; how far they got survives a handoff
 * (`iterationProgress`, stored by the shard). After a crash, iterations started since the
 * last handoff may run again.
 */
import { ArrivalSchedule } from "../../core/arrival-schedule.ts";
import { interleaveCycle } from "../../core/interleave.ts";
import { dueBatch, ShardShare } from "../../core/pacer.ts";
import { RUN_HEADER, WINDOW_MS, type SeriesPoint, type ShardAssignment, type ShardWindow } from "../../core/protocol.ts";
import { MetricStats } from "../../core/stats.ts";
import { recordTrail, type RequestTrail } from "../../core/request-trail.ts";
import { WindowBook } from "../../core/window-book.ts";
import { ShardVus, VuSchedule } from "../../core/vu-schedule.ts";
import { createSseReader } from "../../core/sse.ts";
import { ClockGrid } from "../../core/clock-resolution.ts";
import { LoopWatch } from "../../core/loop-delay.ts";
import { IterationInterrupted, type Flow, type FlowIO, type FlowRequest, type FlowResponse, type IterationInfo, type SeriesSample, type StreamOutcome } from "../../scenarios/flow.ts";
import { ConnectionSlots } from "./connection-slots.ts";
import { TimeoutQueue } from "./timeout-queue.ts";

export interface EngineClock {
  /** Epoch milliseconds. */
  now(): number;
  sleep(ms: number): Promise<void>;
}

export type SliceEnd = "finished" | "deadline" | "stopped" | "handoff";

/** How far an iteration-count executor got (see ShardEngine.iterationProgress). */
export interface IterationProgress {
  readonly sharedLeft?: number;
  readonly perVu?: ReadonlyArray<readonly [vu: number, started: number]>;
}

export interface SliceResult {
  readonly end: SliceEnd;
  readonly cursor: number;
  /** Iterations started (open model) or requests sent (closed model) in this slice. */
  readonly sent: number;
  readonly peakInFlight: number;
}

const US_PER_MS = 1000;
/** Responses per invocation checked for Cloudflare's signature. */
const CLOUDFLARE_CHECKS = 16;

export class ShardEngine {
  /** Whether this is a closed-model (VU) run: no schedule share, no cursor. */
  readonly closedModel: boolean;
  readonly #share: ShardShare | null;
  readonly #vuSchedule: VuSchedule | null;
  readonly #shardVus: ShardVus | null;
  readonly #vuLoops = new Map<number, Promise<void>>();
  /** Iteration-count executors: VUs that have run their iterations (never restarted). */
  readonly #vusDone = new Set<number>();
  /** shared-iterations: this shard's iterations not yet started. */
  #sharedLeft = Infinity;
  /** per-vu-iterations: iterations each VU has started, across invocations. */
  readonly #vuIterations = new Map<number, number>();
  readonly #sleepers = new Set<() => void>();
  #vusStopping = false;
  #requests = 0;
  #budget = Infinity;
  readonly #a: ShardAssignment;
  readonly #clock: EngineClock;
  readonly #fetch: typeof fetch;
  readonly #onWindow: (w: Omit<ShardWindow, "part">) => void;
  readonly #flow: Flow;
  /** Step an iteration dropped at its due time is counted under. */
  readonly #dropStep: (global: number) => number;
  readonly #slots: ConnectionSlots;
  readonly #timeouts = new TimeoutQueue();
  /** Open windows: stats by step, and scraped series samples flushed with them. */
  readonly #windows = new WindowBook<{ readonly steps: MetricStats[]; series: SeriesPoint[] | null }>(() => ({ steps: [], series: null }));
  /** Open event streams: closing functions, called at stop(). */
  readonly #streams = new Set<() => void>();
  #closedThrough = 0; // windows below this number have been handed out
  #cursor = 0; // next own iteration to consider
  #inFlight = 0;
  #peakInFlight = 0;
  #stop = false;
  #wake: (() => void) | null = null;
  readonly #idle: Array<() => void> = [];
  /** The grid of the clock readings requests are timed with (core/clock-resolution.ts). */
  readonly #clockGrid = new ClockGrid();
  /** How far into the next second this shard closes a window (see #closableBefore). */
  readonly #closeLagMs: number;
  /** Estimates how long this isolate's event loop kept each response waiting (client_delay). */
  readonly #loopWatch: LoopWatch;
  readonly #loopProbe: { arm(): void; leave(): void };
  /** Responses looked at for Cloudflare's signature, and whether one carried it. */
  #cloudflareChecks = 0;
  #behindCloudflare = false;

  /**
   * `loopWatch`: the probes of the event loop this engine runs in, shared with the other
   * engines there (LoadShard passes one per isolate); its own otherwise.
   */
  constructor(a: ShardAssignment, clock: EngineClock, fetcher: typeof fetch, onWindow: (w: Omit<ShardWindow, "part">) => void, flow: Flow, loopWatch = new LoopWatch(clock), progress: IterationProgress | null = null) {
    this.#a = a;
    this.#clock = clock;
    this.#fetch = fetcher;
    this.#onWindow = onWindow;
    this.#flow = flow;
    const vus = a.spec.vus ?? null;
    this.closedModel = vus !== null;
    this.#share = vus ? null : new ShardShare(new ArrivalSchedule(a.spec.stages), a.weights, a.shard.index);
    this.#vuSchedule = vus ? new VuSchedule(vus) : null;
    this.#shardVus = vus ? new ShardVus(a.weights, a.shard.index) : null;
    if (vus?.iterations?.kind === "shared") this.#sharedLeft = progress?.sharedLeft ?? this.#shardVus!.sharedIterations(vus.iterations.count, vus.startVUs);
    for (const [vu, n] of progress?.perVu ?? []) this.#vuIterations.set(vu, n);
    this.#slots = new ConnectionSlots(a.spec.connectionSlots);
    this.#loopWatch = loopWatch;
    this.#closeLagMs = (CLOSE_SPREAD_MS * a.shard.index) / Math.max(1, a.weights.length);
    this.#loopProbe = loopWatch.join(() => this.#inFlight > 0 && !this.#stop);
    const cycle = a.spec.scenario ? [0] : interleaveCycle(a.spec.steps.map((s) => s.weight));
    this.#dropStep = (global) => cycle[global % cycle.length]!;
  }

  /** This shard's share of the open-model schedule (not for closed-model runs). */
  get share(): ShardShare {
    if (!this.#share) throw new Error("a closed-model run has no arrival schedule");
    return this.#share;
  }

  /** Windows below this number are complete and have been handed to the callback. */
  get closedThrough(): number {
    return this.#closedThrough;
  }

  /**
   * Next own iteration the loop will consider. Checkpointed with each closed window: an
   * iteration at or past it was started after that window closed, so its result can only
   * be in a later window — counting it as interrupted after a crash never counts it twice.
   */
  get cursor(): number {
    return this.#cursor;
  }

  /** The detected resolution of the clock requests were timed with, in µs (null: none timed yet). */
  get clockResolutionUs(): number | null {
    return this.#clockGrid.resolutionUs;
  }

  /**
   * Whether a response carried Cloudflare's signature (`cf-ray`, `server: cloudflare`):
   * the target is behind Cloudflare, and the load reached it as Worker subrequests.
   */
  get behindCloudflare(): boolean {
    return this.#behindCloudflare;
  }

  /**
   * Ask the loop to stop sending. In-flight requests get STOP_DRAIN_MS to finish; then they
   * are cut (interrupted, not counted, as k6 does on abort), so an abort stops the shard
   * within seconds whatever the request timeout.
   */
  stop(): void {
    if (!this.#stop) void this.#clock.sleep(STOP_DRAIN_MS).then(() => this.#timeouts.abortAll(RUN_STOPPED));
    this.#stop = true;
    this.#wake?.();
    for (const wake of this.#sleepers) wake();
    for (const close of this.#streams) close();
  }

  /**
   * Counts own iterations [from, to) as dropped without sending them: used when a
   * restarted shard resumes at the current time instead of replaying what it missed.
   */
  skip(from: number, to: number, nowMs: number): void {
    if (to <= from) return;
    const stats = this.#statsFor(this.#windowOf(nowMs), 0);
    stats.counters.dropped += to - from;
    stats.counters.interrupted += to - from;
  }

  /**
   * Runs the schedule from `cursor` until the share is exhausted, the deadline passes,
   * stop() is called, or `budget` iterations were started (then "handoff": the caller
   * continues in a fresh invocation). Waits for in-flight requests before returning and
   * closes every window that has ended.
   */
  async run(cursor: number, budget: number): Promise<SliceResult> {
    try {
      return this.closedModel ? await this.#runVus(budget) : await this.#runOpen(cursor, budget);
    } finally {
      this.#loopProbe.leave();
    }
  }

  async #runOpen(cursor: number, budget: number): Promise<SliceResult> {
    const a = this.#a;
    this.#cursor = cursor;
    let started = 0;
    let end: SliceEnd = "finished";
    for (;;) {
      const now = this.#clock.now();
      this.#closeWindowsBefore(this.#closableBefore(now));
      if (this.#stop) { end = "stopped"; break; }
      if (now >= a.deadlineMs) { end = "deadline"; break; }
      const batch = dueBatch(this.share, cursor, now - a.t0Ms, budget - started);
      for (let k = batch.from; k < batch.to; k++) this.#launch(k, now);
      started += batch.to - batch.from;
      cursor = this.#cursor = batch.to;
      if (cursor >= this.share.total) { end = "finished"; break; }
      if (started >= budget) { end = "handoff"; break; }
      const untilWindowEnd = this.#untilNextClose(now);
      const untilTimeout = this.#timeouts.nextDeadlineMs - now;
      await this.#sleep(Math.min(batch.waitMs, untilWindowEnd, untilTimeout, a.deadlineMs - now));
      this.#timeouts.sweep(this.#clock.now());
    }
    await this.#drain();
    // Hand out everything, including the current partial window: after a handoff the
    // next invocation reports the rest of that second as another part of the window.
    this.closeAll();
    return { end, cursor, sent: started, peakInFlight: this.#peakInFlight };
  }

  /**
   * The closed model: keeps a loop running for every owned VU the schedule has active,
   * waking at each change of the VU count, each window end and each request timeout.
   */
  async #runVus(budget: number): Promise<SliceResult> {
    const a = this.#a;
    const schedule = this.#vuSchedule!;
    const runEndMs = a.t0Ms + schedule.durationMs;
    this.#budget = budget;
    let end: SliceEnd;
    for (;;) {
      const now = this.#clock.now();
      this.#closeWindowsBefore(this.#closableBefore(now));
      if (this.#stop) { end = "stopped"; break; }
      if (now >= a.deadlineMs) { end = "deadline"; break; }
      if (now >= runEndMs) { end = "finished"; break; }
      if (this.#requests >= budget) { end = "handoff"; break; }
      const owned = this.#shardVus!.owned(schedule.activeAt(now - a.t0Ms));
      // Iteration-count executors end when every VU has run its iterations.
      if (schedule.profile.iterations && this.#vusDone.size >= owned.length) { end = "finished"; break; }
      for (const vu of owned) {
        if (!this.#vuLoops.has(vu) && !this.#vusDone.has(vu)) this.#vuLoops.set(vu, this.#vuLoop(vu, runEndMs));
      }
      const untilChange = a.t0Ms + schedule.nextChangeAfter(now - a.t0Ms) - now;
      const untilWindowEnd = this.#untilNextClose(now);
      const untilTimeout = this.#timeouts.nextDeadlineMs - now;
      await this.#sleep(Math.min(untilChange, untilWindowEnd, untilTimeout, a.deadlineMs - now, runEndMs - now));
      this.#timeouts.sweep(this.#clock.now());
    }
    this.#vusStopping = true;
    // Iterations finish (a handoff lets them run their course; the run's end and the
    // deadline cut their think time) while timeouts are enforced and windows close.
    while (this.#vuLoops.size > 0) {
      const untilTimeout = Math.max(1, this.#timeouts.nextDeadlineMs - this.#clock.now());
      await Promise.race([Promise.all(this.#vuLoops.values()), this.#clock.sleep(Math.min(untilTimeout, WINDOW_MS))]);
      const now = this.#clock.now();
      this.#timeouts.sweep(now);
      this.#closeWindowsBefore(this.#closableBefore(now));
      if (now >= a.deadlineMs) for (const wake of this.#sleepers) wake();
    }
    this.closeAll();
    return { end, cursor: 0, sent: this.#requests, peakInFlight: this.#peakInFlight };
  }

  /** One VU: iterations back to back while the schedule keeps it active. */
  async #vuLoop(vu: number, runEndMs: number): Promise<void> {
    const a = this.#a;
    const schedule = this.#vuSchedule!;
    const captured = new Map<string, string>();
    try {
      for (let iteration = 0; ; iteration++) {
        const now = this.#clock.now();
        const t = now - a.t0Ms;
        if (this.#requests >= this.#budget) {
          this.#wake?.(); // the supervisor hands off now rather than at its next wake-up
          return;
        }
        if (this.#vusStopping || this.#stop || now >= runEndMs) return;
        if (schedule.activeAt(t) <= vu) return; // ramped down
        if (!this.#takeIteration(vu)) {
          this.#vusDone.add(vu);
          this.#wake?.(); // the supervisor may end the run now
          return;
        }
        const stopsAtMs = a.t0Ms + schedule.stopsAt(vu, t);
        const hardStopMs = stopsAtMs >= runEndMs ? runEndMs : Math.min(runEndMs, stopsAtMs + schedule.profile.gracefulRampDownMs);
        this.#inFlight++;
        if (this.#inFlight > this.#peakInFlight) this.#peakInFlight = this.#inFlight;
        await this.#iteration({ global: iteration, shard: a.shard.index, region: a.shard.region, vu: vu + 1, captured }, null, hardStopMs);
      }
    } finally {
      this.#vuLoops.delete(vu);
    }
  }

  /**
   * Iteration-count executors: how far they got, kept by the shard across a handoff so
   * the next invocation goes on rather than starting the counts again.
   */
  get iterationProgress(): IterationProgress | null {
    const count = this.#vuSchedule?.profile.iterations;
    if (!count) return null;
    return count.kind === "shared" ? { sharedLeft: this.#sharedLeft } : { perVu: [...this.#vuIterations] };
  }

  /** Iteration-count executors: whether VU `vu` may start another iteration (taking it). */
  #takeIteration(vu: number): boolean {
    const count = this.#vuSchedule!.profile.iterations;
    if (!count) return true;
    if (count.kind === "per-vu") {
      const done = this.#vuIterations.get(vu) ?? 0;
      if (done >= count.count) return false;
      this.#vuIterations.set(vu, done + 1);
      return true;
    }
    if (this.#sharedLeft <= 0) return false;
    this.#sharedLeft--;
    return true;
  }

  /**
   * Think time for a flow: resolves after `ms`, or throws IterationInterrupted at the
   * iteration's hard stop (or at once when the run is stopped).
   */
  async think(ms: number, hardStopMs: number): Promise<void> {
    const now = this.#clock.now();
    const stopAt = Math.min(hardStopMs, this.#a.deadlineMs);
    const until = Math.min(now + Math.max(0, ms), stopAt);
    if (!this.#stop && until > now) {
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      this.#sleepers.add(wake);
      void this.#clock.sleep(until - now).then(wake);
      await woken;
      this.#sleepers.delete(wake);
    }
    if (this.#stop) throw new IterationInterrupted("run stopped");
    if (now + ms > stopAt) throw new IterationInterrupted("think time passed the iteration's stop time");
  }

  /** Whether a flow may still send (closed model: not stopped, before its hard stop). */
  mayStartRequest(hardStopMs: number): boolean {
    return !(this.closedModel && (this.#stop || this.#clock.now() >= Math.min(hardStopMs, this.#a.deadlineMs)));
  }

  /** Hands out every window still open, including the current one (end of the shard). */
  closeAll(): void {
    const last = Math.max(this.#closedThrough, this.#windows.last) + 1;
    this.#closeWindowsBefore(last);
  }

  #sleep(ms: number): Promise<void> {
    // Wake on the next millisecond boundary; the pacer re-checks and never sends early.
    return new Promise<void>((resolve) => {
      this.#wake = resolve;
      void this.#clock.sleep(Math.max(1, Math.ceil(ms))).then(resolve);
    }).finally(() => (this.#wake = null));
  }

  /** Waits for every in-flight request, still enforcing timeouts meanwhile. */
  async #drain(): Promise<void> {
    while (this.#inFlight > 0) {
      const idle = new Promise<void>((resolve) => this.#idle.push(resolve));
      const untilTimeout = Math.max(1, this.#timeouts.nextDeadlineMs - this.#clock.now());
      await Promise.race([idle, this.#clock.sleep(Math.min(untilTimeout, 1000))]);
      this.#timeouts.sweep(this.#clock.now());
    }
  }

  #windowOf(epochMs: number): number {
    return Math.max(0, Math.floor((epochMs - this.#a.t0Ms) / WINDOW_MS));
  }

  /**
   * Windows below this one may close at `nowMs`. Each shard closes a second's window at
   * its own offset into the next (CLOSE_SPREAD_MS × index / shards): closing, storing and
   * flushing at the same boundary in every shard of an isolate (every shard, locally)
   * stalled it, delaying the responses that arrived then.
   */
  #closableBefore(nowMs: number): number {
    return this.#windowOf(nowMs - this.#closeLagMs);
  }

  /** How long until the next window may close. */
  #untilNextClose(nowMs: number): number {
    return this.#a.t0Ms + (this.#closableBefore(nowMs) + 1) * WINDOW_MS + this.#closeLagMs - nowMs;
  }

  #statsFor(windowS: number, step: number): MetricStats {
    // A completion can only land in a closed window if the clock went backwards: fold it
    // into the oldest open one rather than lose it.
    const w = Math.max(windowS, this.#closedThrough);
    return (this.#windows.at(w).steps[step] ??= new MetricStats());
  }

  #closeWindowsBefore(windowS: number): void {
    if (windowS <= this.#closedThrough) return;
    this.#closedThrough = windowS;
    for (const [w, { steps: perStep, series }] of this.#windows.takeBelow(windowS)) {
      const steps: Array<readonly [number, ReturnType<MetricStats["toWire"]>]> = [];
      perStep.forEach((stats, i) => { if (stats && !stats.isEmpty) steps.push([i, stats.toWire()]); });
      if (steps.length || series) this.#onWindow({ windowS: w, steps, ...(series ? { series } : {}) });
    }
  }

  #launch(k: number, now: number): void {
    const global = this.share.globalIndex(k);
    const intendedMs = this.#a.t0Ms + this.share.schedule.dueMs(global);
    if (this.#inFlight >= this.#a.shard.maxInFlight) {
      this.#statsFor(this.#windowOf(now), this.#dropStep(global)).counters.dropped++;
      return;
    }
    this.#inFlight++;
    if (this.#inFlight > this.#peakInFlight) this.#peakInFlight = this.#inFlight;
    void this.#iteration({ global, shard: this.#a.shard.index, region: this.#a.shard.region }, intendedMs, Infinity);
  }

  /** Runs one iteration's flow; `intendedMs` is null in the closed model (no schedule). */
  async #iteration(it: IterationInfo, intendedMs: number | null, hardStopMs: number): Promise<void> {
    const io = new IterationIO(this, intendedMs, hardStopMs);
    let interrupted = false;
    try {
      await this.#flow.run(io, it);
    } catch (error) {
      if (error instanceof IterationInterrupted) {
        interrupted = true;
      } else {
        // A flow bug must not stop the shard; it shows as a failed check on the last step.
        console.error(`flow error in iteration ${it.global}:`, error);
        io.check(false);
      }
    }
    // A flow that sent nothing (e.g. every refresh family busy) did not run: dropped. One
    // cut short (ramp-down, the run's end, an abort) is not counted at all, as in k6.
    if (!interrupted) {
      const counters = this.#statsFor(this.#windowOf(this.#clock.now()), io.step).counters;
      if (io.requests === 0 && !this.#flow.iterationsMayBeEmpty) counters.dropped++;
      else counters.iterations++;
    }
    this.#inFlight--;
    if (this.#inFlight === 0 && this.#idle.length) for (const resolve of this.#idle.splice(0)) resolve();
  }

  /**
   * Sends one request of a flow and records its built-in metrics under `stepIndex`. A
   * stream request (SSE) gives its slot back at the headers like any other, then is read
   * until its hold time, the scenario's end, `holdUntilMs` (the iteration's hard stop) or
   * stop(), whichever comes first; its duration and TTFB are both the time to open.
   */
  async send(stepIndex: number, request: FlowRequest, intendedMs: number | null, holdUntilMs = Infinity): Promise<FlowResponse> {
    this.#requests++;
    const queuedMs = this.#clock.now();
    const wait = this.#slots.acquire();
    if (wait) await wait;
    // Stopped while queued for a connection slot: nothing leaves after stop().
    if (this.#stop) {
      this.#slots.release();
      throw new IterationInterrupted("run stopped before the request was sent");
    }
    const sendMs = this.#clock.now();
    this.#loopProbe.arm();
    // The timeout runs from the actual send, like k6's (time queued for a slot is lag).
    const timeout = this.#timeouts.add(sendMs + this.#a.spec.timeoutMs);
    // A stream is closed by aborting its request: cancelling the body alone can leave the
    // connection open (the target would hold the stream until its next write fails).
    const streamAbort = request.stream ? new AbortController() : null;
    const init: RequestInit = { method: request.method, signal: streamAbort ? AbortSignal.any([timeout.signal, streamAbort.signal]) : timeout.signal };
    // The run, the second it was sent in and its step, for the target's side of the count
    // (workers/target/request-ledger.ts, core/delivery.ts).
    const sentWindow = this.#windowOf(sendMs);
    // In the run's numbering: a named scenario's shard counts from its own start and steps.
    const part = this.#a.part;
    const tag = part ? `${this.#a.runId};${sentWindow + part.windowOffsetS};${stepIndex + part.stepOffset}` : `${this.#a.runId};${sentWindow};${stepIndex}`;
    init.headers = request.headers ? { ...request.headers, [RUN_HEADER]: tag } : { [RUN_HEADER]: tag };
    this.#statsFor(sentWindow, stepIndex).counters.sent++;
    if (request.body !== undefined) init.body = request.body;
    if (request.redirect) init.redirect = request.redirect;
    let holdingSlot = true;
    let status = 0;
    let ttfbMs = 0;
    let bytes = 0;
    let headers: Headers | null = null;
    let body: string | null = null;
    let error: "timeout" | "connection" | null = null;
    let response: Response | null = null;
    let errorMessage = "";
    try {
      response = await this.#fetch(request.url, init);
      ttfbMs = this.#clock.now() - sendMs;
      this.#slots.release();
      holdingSlot = false;
      status = response.status;
      headers = response.headers;
      if (request.stream && response.ok && response.body) {
        timeout.done(); // the timeout covers opening; a stream's hold time is its own
      } else if (request.readBody) {
        body = await response.text();
        bytes = body.length;
      } else {
        bytes = await bodyBytes(response);
      }
    } catch (e) {
      if (holdingSlot) this.#slots.release();
      if (timeout.signal.reason === RUN_STOPPED) {
        timeout.done();
        throw new IterationInterrupted("in flight when the run stopped");
      }
      error = isTimeout(e) ? "timeout" : "connection";
      errorMessage = error === "timeout" ? `timeout after ${this.#a.spec.timeoutMs} ms` : `connection error: ${e instanceof Error ? e.message : String(e)}`;
    }
    const opened = request.stream && !error && response?.ok && response.body ? response.body : null;
    const endMs = opened ? sendMs + ttfbMs : this.#clock.now();
    const clientDelayMs = this.#loopWatch.delayAt(opened ? this.#clock.now() : endMs);
    timeout.done();
    this.#clockGrid.observe(sendMs);
    this.#clockGrid.observe(endMs);
    // A target is behind Cloudflare or not: the first responses of an invocation tell.
    if (headers && this.#cloudflareChecks < CLOUDFLARE_CHECKS) {
      this.#cloudflareChecks++;
      if (headers.has("cf-ray") || headers.get("server")?.toLowerCase() === "cloudflare") this.#behindCloudflare = true;
    }

    const trail: RequestTrail = {
      queuedMs, sendMs, ttfbMs, endMs, intendedMs, clientDelayMs,
      status, statusText: response?.statusText ?? "", bytes, error, errorMessage,
    };
    recordTrail(this.#statsFor(this.#windowOf(endMs), stepIndex), trail, request.expect);
    if (opened) {
      const holdMs = request.stream!.holdMs;
      const until = Math.min(holdMs === null ? Infinity : endMs + holdMs, this.#a.t0Ms + this.#a.spec.durationMs, holdUntilMs, this.#a.deadlineMs);
      const stream = await this.#readStream(stepIndex, opened, sendMs, endMs, until, () => streamAbort!.abort());
      return { status, error, headers, body, durationMs: endMs - sendMs, stream };
    }
    return { status, error, headers, body, durationMs: error ? 0 : endMs - sendMs };
  }

  /**
   * Reads an open event stream until `untilMs` (or stop()), counting each event into the
   * window it arrives in; records time to open, to the first event, how long it stayed
   * open, and whether it ended before it was meant to.
   */
  async #readStream(stepIndex: number, body: ReadableStream<Uint8Array>, sendMs: number, openedMs: number, untilMs: number, abort: () => void): Promise<StreamOutcome> {
    const custom = (ms: number) => this.#statsFor(this.#windowOf(ms), stepIndex).custom;
    custom(openedMs).trend("sse_time_to_open", (openedMs - sendMs) * US_PER_MS);
    let messages = 0;
    let firstMessageMs: number | null = null;
    const sse = createSseReader(() => {
      const now = this.#clock.now();
      if (firstMessageMs === null) {
        firstMessageMs = now - sendMs;
        custom(now).trend("sse_time_to_first_message", firstMessageMs * US_PER_MS);
      }
      messages++;
      custom(now).count("sse_messages");
    });
    const reader = body.getReader();
    let endedEarly = false;
    const close = () => {
      abort();
      void reader.cancel().catch(() => {});
    };
    this.#streams.add(close);
    if (Number.isFinite(untilMs)) void this.#clock.sleep(Math.max(0, untilMs - this.#clock.now())).then(close);
    try {
      for (;;) {
        if (this.#stop || this.#clock.now() >= untilMs) break;
        const { done, value } = await reader.read();
        if (done) {
          endedEarly = this.#clock.now() < untilMs - 1 && !this.#stop;
          break;
        }
        sse.push(value);
      }
    } catch {
      endedEarly = !this.#stop && this.#clock.now() < untilMs - 1;
    } finally {
      this.#streams.delete(close);
      close();
    }
    const endMs = this.#clock.now();
    const last = custom(endMs);
    last.trend("sse_stream_duration", (endMs - openedMs) * US_PER_MS);
    if (endedEarly) last.count("sse_streams_ended_early");
    return { messages, firstMessageMs, openForMs: endMs - openedMs, endedEarly };
  }

  /** Keeps scraped samples with the window of `atMs`, flushed with its metrics. */
  recordSamples(samples: readonly SeriesSample[], atMs: number): void {
    const w = Math.max(this.#windowOf(atMs), this.#closedThrough);
    const window = this.#windows.at(w);
    const points = (window.series ??= []);
    for (const s of samples) points.push({ name: s.name, labels: s.labels, tMs: atMs, value: s.value });
  }

  /** The stats a flow's check or custom metric lands in: its step, the current window. */
  statsNow(stepIndex: number): MetricStats {
    return this.#statsFor(this.#windowOf(this.#clock.now()), stepIndex);
  }

  now(): number {
    return this.#clock.now();
  }
}

/**
 * What one iteration's flow sees of the engine. Checks and custom metrics are recorded
 * under the step of the last request sent, in the window of the moment they are recorded.
 */
class IterationIO implements FlowIO {
  readonly #engine: ShardEngine;
  readonly #intendedMs: number | null;
  readonly #hardStopMs: number;
  step = 0;
  requests = 0;
  #checkFailed = false;

  constructor(engine: ShardEngine, intendedMs: number | null, hardStopMs: number) {
    this.#engine = engine;
    this.#intendedMs = intendedMs;
    this.#hardStopMs = hardStopMs;
  }

  send(step: number, request: FlowRequest): Promise<FlowResponse> {
    if (!this.#engine.mayStartRequest(this.#hardStopMs)) return Promise.reject(new IterationInterrupted("past the iteration's stop time"));
    // Only the first request answers to the schedule; later ones start when asked.
    const intended = this.#intendedMs === null ? null : this.requests === 0 ? this.#intendedMs : this.#engine.now();
    this.step = step;
    this.requests++;
    this.#checkFailed = false;
    return this.#engine.send(step, request, intended, this.#hardStopMs);
  }

  sample(samples: readonly SeriesSample[]): void {
    this.#engine.recordSamples(samples, this.#engine.now());
  }

  check(passed: boolean): void {
    const c = this.#engine.statsNow(this.step).counters;
    if (passed) {
      c.checksPassed++;
      return;
    }
    c.checksFailed++;
    if (!this.#checkFailed) c.checkFailedRequests++;
    this.#checkFailed = true;
  }

  count(name: string, n = 1): void {
    this.#engine.statsNow(this.step).custom.count(name, n);
  }

  rate(name: string, passed: boolean): void {
    this.#engine.statsNow(this.step).custom.rate(name, passed);
  }

  trend(name: string, ms: number): void {
    this.#engine.statsNow(this.step).custom.trend(name, ms * US_PER_MS);
  }

  sleep(ms: number): Promise<void> {
    return this.#engine.think(ms, this.#hardStopMs);
  }

  now(): number {
    return this.#engine.now();
  }
}

function isTimeout(error: unknown): boolean {
  const name = (error as { name?: string } | null)?.name;
  return name === "TimeoutError" || name === "AbortError";
}

/** Shards' window closes (and so their stores and flushes) are spread over this much of each second. */
const CLOSE_SPREAD_MS = 600;

/** How long requests in flight at stop() may still finish before they are cut. */
const STOP_DRAIN_MS = 1_000;
/** The reason requests cut by stop() are aborted with (told apart from a timeout by identity). */
const RUN_STOPPED = new DOMException("run stopped", "AbortError");

/** Bodies up to this size (by content-length) are read in one piece; longer ones are drained. */
const WHOLE_BODY_MAX_BYTES = 1 << 20;

/**
 * The size of a body nobody reads, read to its end (the request's time includes it, as in
 * k6) while keeping none of it: a 50 MB answer costs one chunk of memory, not 50 MB per
 * request in flight. Small bodies with a known length are read whole, which is cheaper.
 */
async function bodyBytes(response: Response): Promise<number> {
  const length = Number(response.headers.get("content-length") ?? NaN);
  if (!response.body) return 0;
  if (length <= WHOLE_BODY_MAX_BYTES) return (await response.arrayBuffer()).byteLength;
  let bytes = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return bytes;
    bytes += value.byteLength;
  }
}
