/**
 * The shard's send loop: open-model pacing, connection slots, timing and window stats.
 *
 * No Durable Object API in here: the clock, sleep and fetch are injected, and closed windows
 * leave through a callback. LoadShard (a thin Durable Object) persists state and flushes
 * windows; tests and benchmarks drive the engine directly.
 *
 * Per iteration: when the pacer says it is due (never earlier), the engine either starts
 * it or, if the in-flight cap is reached, counts it in `dropped` — it never slides the
 * schedule. A started iteration runs the flow (scenarios/flow.ts: one request for custom
 * steps, several for a login). Each request waits for a connection slot, sends, takes a
 * timestamp at headers (TTFB) and after the body, and records duration, TTFB, corrected
 * latency (from the intended time: the schedule for a flow's first request, the moment the
 * flow asked for later ones), schedule lag and client delay (how long this isolate's event
 * loop held the response, core/metrics/loop-delay.ts) into the window of its completion
 * second; it is counted as `sent` in the window of the second it left in, the second its
 * `x-edgeload-run` header names, so the target's count of it lines up (core/run/delivery.ts).
 * The executors decide when iterations start (executors/: the arrival-rate pacer, the VU
 * loops, which an externally-controlled run's level drives: shard-control.ts); the engine runs
 * them, sends, and keeps the windows. Closed model: slots, timeouts and window stats work as
 * in the open model; schedule lag and corrected latency do not apply (executors/vus.ts). Its
 * pieces: windows (shard-windows.ts), iterations in flight (in-flight.ts), sleeps
 * (engine-sleeps.ts), sending a request and recording it (request-sender.ts).
 */
import type { OutboundFetch } from "../../core/outbound/outbound-request.ts";
import { ArrivalSchedule } from "../../core/schedule/arrival-schedule.ts";
import { interleaveCycle } from "../../core/data/interleave.ts";
import { ShardShare } from "../../core/schedule/pacer.ts";
import { interruptAtMs } from "../../core/schedule/graceful-stop.ts";
import type { ShardAssignment, ShardWindow } from "../../core/run/protocol.ts";
import type { MetricStats } from "../../core/metrics/metric-stats.ts";
import type { SampleTags, SubMetricFilter } from "../../core/metrics/sub-metrics.ts";
import { DEFAULT_SCENARIO } from "../../core/run/run-thresholds.ts";
import { LoopWatch, type LoopProbe } from "../../core/metrics/loop-delay.ts";
import type { Flow, FlowRequest, FlowResponse, IterationInfo, SeriesSample } from "../../scenarios/flow.ts";
import { ConnectionSlots } from "./connection-slots.ts";
import { TimeoutQueue } from "./timeout-queue.ts";
import { InFlightIterations } from "./in-flight.ts";
import { EngineSleeps } from "./engine-sleeps.ts";
import { ShardWindows } from "./shard-windows.ts";
import { CursorMarks, unaccountedRanges, type Covered, type IterationRange } from "./cursor-marks.ts";
import { IterationIO, runIteration, type IterationHost } from "./iteration-io.ts";
import { RequestSender, RUN_STOPPED } from "./request-sender.ts";
import { runArrivalRate } from "./executors/arrival-rate.ts";
import type { ExecutorHost } from "./executors/host.ts";
import { VuExecutor } from "./executors/vus.ts";
import type { ShardControl } from "./shard-control.ts";

export type { EngineClock, IterationProgress, SliceEnd, SliceResult } from "./engine-types.ts";
import type { EngineClock, IterationProgress, SliceResult } from "./engine-types.ts";

export class ShardEngine implements IterationHost {
  /** Whether this is a closed-model (VU) run: no schedule share, no cursor. */
  readonly closedModel: boolean;
  readonly #share: ShardShare | null;
  /** The closed model's executor (executors/vus.ts); null for arrival-rate runs. */
  readonly #vus: VuExecutor | null;
  /** What the executors drive (executors/host.ts). */
  readonly #host: ExecutorHost;
  /** The executor's sleep and the flows' think times (engine-sleeps.ts). */
  readonly #sleeps: EngineSleeps;
  #requests = 0;
  readonly #a: ShardAssignment;
  /** The run's k6 sub-metrics: requests, checks and custom metrics matching one are recorded under it too. */
  readonly subMetrics: readonly SubMetricFilter[];
  /** The k6 tags every request of this shard has unless it says otherwise: the test's, its scenario, the root group. */
  readonly #defaultTags: SampleTags;
  readonly #clock: EngineClock;
  readonly #flow: Flow;
  /** Step an iteration dropped at its due time is counted under. */
  readonly #dropStep: (global: number) => number;
  readonly #timeouts = new TimeoutQueue();
  /** Open windows, and when each closes (shard-windows.ts). */
  readonly #windows: ShardWindows;
  /** Open event streams: closing functions, called at stop(). */
  readonly #streams = new Set<() => void>();
  /** Sends a flow's requests and records their metrics (request-sender.ts). */
  readonly #sender: RequestSender;
  #cursor = 0; // next own iteration to consider
  /** Which iterations the closed windows account for (cursor-marks.ts). */
  readonly #cursorMarks = new CursorMarks();
  readonly #inFlight = new InFlightIterations();
  #stop = false;
  /** This engine's probe of the event loop (client_delay), left when its slice ends. */
  readonly #loopProbe: LoopProbe;

  /**
   * `loopWatch`: the probes of the event loop this engine runs in, shared with the other
   * engines there (LoadShard passes one per isolate); its own otherwise.
   */
  constructor(
    a: ShardAssignment,
    clock: EngineClock,
    fetcher: OutboundFetch,
    onWindow: (w: Omit<ShardWindow, "part">) => void,
    flow: Flow,
    loopWatch = new LoopWatch(clock),
    progress: IterationProgress | null = null,
    control: ShardControl | null = null,
  ) {
    this.#a = a;
    this.subMetrics = a.subMetrics ?? [];
    // k6's test-wide tags (options.tags, a scenario's tags), then the scenario's name and the root group.
    this.#defaultTags = { ...a.spec.tags, group: "", scenario: a.part?.scenario ?? DEFAULT_SCENARIO };
    this.#clock = clock;
    this.#windows = new ShardWindows(a, onWindow);
    this.#flow = flow;
    this.#loopProbe = loopWatch.join(() => this.#inFlight.count > 0 && !this.#stop);
    // The executor's wakes look at the loop too: a shard whose arrivals come often arms no probe timer.
    this.#sleeps = new EngineSleeps(clock, () => this.#stop, this.#loopProbe);
    const vus = a.spec.vus ?? null;
    this.closedModel = vus !== null;
    this.#share = vus ? null : new ShardShare(new ArrivalSchedule(a.spec.stages), a.slice);
    this.#host = this.#executorHost();
    this.#vus = vus ? new VuExecutor(this.#host, vus, progress, control) : null;
    this.#sender = new RequestSender({
      a,
      clock,
      fetch: fetcher,
      windows: this.#windows,
      slots: new ConnectionSlots(a.spec.connectionSlots),
      timeouts: this.#timeouts,
      loopWatch,
      loopProbe: this.#loopProbe,
      streams: this.#streams,
      isStopped: () => this.#stop,
      subMetrics: this.subMetrics,
      defaultTags: this.#defaultTags,
    });
    // A scenario's or a script's steps are not a weighted pick: a drop is its first step's.
    const cycle = a.spec.scenario || a.spec.script ? [0] : interleaveCycle(a.spec.steps.map((s) => s.weight));
    this.#dropStep = (global) => cycle[global % cycle.length]!;
  }

  /** This shard's share of the open-model schedule (not for closed-model runs). */
  get share(): ShardShare {
    if (!this.#share) throw new Error("a closed-model run has no arrival schedule");
    return this.#share;
  }

  /** Windows below this number are complete and have been handed to the callback. */
  get closedThrough(): number {
    return this.#windows.closedThrough;
  }

  /**
   * What the closed windows account for: every own iteration below `cursor`, and `past`.
   * Checkpointed with each closed window: any other iteration is counted in an open window
   * only, so a crash counts it interrupted, never twice and never not at all
   * (cursor-marks.ts; engine.test.ts, chaos flat seed 123, tree seeds 45 and 69).
   */
  get covered(): Covered {
    return this.#cursorMarks.coveredBy(this.#windows.closedThrough, this.#cursor);
  }

  /** The detected resolution of the clock requests were timed with, in µs (null: none timed yet). */
  get clockResolutionUs(): number | null {
    return this.#sender.clockGrid.resolutionUs;
  }

  /**
   * Whether a response carried Cloudflare's signature (`cf-ray`, `server: cloudflare`):
   * the target is behind Cloudflare, and the load reached it as Worker subrequests.
   */
  get behindCloudflare(): boolean {
    return this.#sender.cloudflare.seen;
  }

  /**
   * Ask the loop to stop sending. In-flight requests get STOP_DRAIN_MS to finish; then they
   * are cut (interrupted, not counted, as k6 does on abort), so an abort stops the shard
   * within seconds whatever the request timeout.
   */
  stop(): void {
    if (!this.#stop) void this.#clock.sleep(STOP_DRAIN_MS).then(() => this.#timeouts.abortAll(RUN_STOPPED));
    this.#stop = true;
    this.#sleeps.wake();
    this.#sleeps.wakeThinkers();
    for (const close of this.#streams) close();
  }

  /**
   * Open model: counts own iterations [from, to) dropped and interrupted without sending them,
   * except those `accounted` in windows already closed: a restarted shard resumes at the
   * current time instead of replaying what it missed (restart-loss.ts).
   */
  skip(from: number, to: number, nowMs: number, accounted: readonly IterationRange[] = []): void {
    const windowS = this.#windows.windowOf(nowMs);
    const stats = this.#windows.statsFor(windowS, 0);
    // Counted in a window closed before this engine: passed over, and a further restart passes over them too.
    for (const [a, b] of accounted) this.#cursorMarks.counted(Math.max(a, from), Math.min(b, to), -1);
    for (const [a, b] of unaccountedRanges(from, to, accounted)) {
      this.#cursorMarks.counted(a, b, windowS);
      stats.counters.dropped += b - a;
      stats.counters.interrupted += b - a;
    }
  }

  /**
   * Closed model: counts interrupted, at `nowMs`, the iterations a dead instance had in flight
   * at `diedAtMs` (executors/vus.ts inFlightAt; restart-loss.ts); returns how many.
   */
  interruptInFlight(diedAtMs: number, nowMs: number): number {
    const lost = this.#vus?.inFlightAt(diedAtMs) ?? 0;
    this.#windows.statsFor(this.#windows.windowOf(nowMs), 0).counters.interrupted += lost;
    return lost;
  }

  /**
   * Runs the schedule from `cursor` until the share is exhausted, the deadline passes,
   * stop() is called, or `budget` iterations were started (then "handoff": the caller
   * continues in a fresh invocation). Waits for in-flight requests before returning and
   * closes every window that has ended.
   */
  async run(cursor: number, budget: number): Promise<SliceResult> {
    try {
      return this.#vus ? await this.#vus.run(budget) : await runArrivalRate(this.#host, this.share, cursor, budget);
    } finally {
      this.#loopProbe.leave();
    }
  }

  /** Iteration-count executors: how far they got, kept across a handoff (executors/vus.ts). */
  get iterationProgress(): IterationProgress | null {
    return this.#vus?.iterationProgress ?? null;
  }

  /** The engine as its executors see it: pacing, windows, timeouts and iterations. */
  #executorHost(): ExecutorHost {
    return {
      a: this.#a,
      clock: this.#clock,
      isStopped: () => this.#stop,
      requestsSent: () => this.#requests,
      peakInFlight: () => this.#inFlight.peak,
      closeDue: (nowMs) => this.#windows.closeDue(nowMs),
      untilNextClose: (nowMs) => this.#windows.untilNextClose(nowMs),
      nextTimeoutMs: () => this.#timeouts.nextDeadlineMs,
      sweepTimeouts: (nowMs) => this.#timeouts.sweep(nowMs),
      sleep: (ms) => this.#sleeps.sleep(ms),
      wake: () => this.#sleeps.wake(),
      wakeSleepers: () => this.#sleeps.wakeThinkers(),
      launch: (k, nowMs) => this.#launch(k, nowMs),
      dropUnstarted: (count, nowMs) => {
        this.#cursorMarks.counted(this.#cursor, this.#cursor + count, this.#windows.windowOf(nowMs));
        // k6's dropped_iterations, and edgeload's own failure to send them (the verdict reads it).
        const counters = this.#windows.statsFor(this.#windows.windowOf(nowMs), 0).counters;
        counters.unstarted += count;
        counters.dropped += count;
      },
      setCursor: (k) => (this.#cursor = k),
      startIteration: (it, hardStopMs) => {
        this.#inFlight.add();
        return this.#iteration(it, null, hardStopMs);
      },
      sleepsEnded: () => this.#loopProbe.idle(),
      drain: () => this.#inFlight.drain(this.#timeouts, this.#clock),
      closeAll: () => this.closeAll(),
    };
  }

  /**
   * Think time for a flow: resolves after `ms`, or throws IterationInterrupted at the
   * iteration's hard stop or the deadline (or at once when the run is stopped).
   */
  think(ms: number, hardStopMs: number): Promise<void> {
    return this.#sleeps.think(ms, Math.min(hardStopMs, this.#a.deadlineMs));
  }

  /** Whether a flow may still send: not stopped, before its iteration's hard stop and the deadline. */
  mayStartRequest(hardStopMs: number): boolean {
    return !(this.#stop || this.#clock.now() >= Math.min(hardStopMs, this.#a.deadlineMs));
  }

  /** Hands out every window still open, including the current one (end of the shard). */
  closeAll(): void {
    this.#windows.closeAll();
  }

  #launch(k: number, now: number): void {
    const global = this.share.globalIndex(k);
    const intendedMs = this.#a.t0Ms + this.share.schedule.dueMs(global);
    if (this.#inFlight.count >= this.#a.shard.maxInFlight) {
      this.#cursorMarks.counted(k, k + 1, this.#windows.windowOf(now));
      this.#windows.statsFor(this.#windows.windowOf(now), this.#dropStep(global)).counters.dropped++;
      return;
    }
    this.#cursorMarks.started(k);
    this.#inFlight.add();
    // In progress at the schedule's end, it has the graceful stop to finish (core/schedule/graceful-stop.ts).
    const it = { global, shard: this.#a.shard.index, region: this.#a.shard.region };
    void this.#iteration(it, intendedMs, this.#a.t0Ms + interruptAtMs(this.#a.spec), this.#noting(k)).then(() =>
      // Ended without a request counted sent (its drop, if any, counted now): accounted now.
      this.#cursorMarks.accounted(k, this.#windows.windowOf(this.#clock.now())),
    );
  }

  /** Runs one iteration's flow (iteration-io.ts); `intendedMs` is null in the closed model (no schedule). */
  async #iteration(it: IterationInfo, intendedMs: number | null, hardStopMs: number, host: IterationHost = this): Promise<void> {
    await runIteration(this.#flow, new IterationIO(host, intendedMs, hardStopMs), it, this);
    this.#inFlight.remove();
  }

  /** The engine as open-model iteration `k` sees it: its first request counted sent accounts for it (cursor-marks.ts). */
  #noting(k: number): IterationHost {
    const accounted = (windowS: number) => this.#cursorMarks.accounted(k, windowS);
    return {
      now: () => this.now(),
      mayStartRequest: (hardStopMs) => this.mayStartRequest(hardStopMs),
      send: (step, request, intendedMs, holdUntilMs) => this.send(step, request, intendedMs, holdUntilMs, accounted),
      recordSamples: (samples, atMs) => this.recordSamples(samples, atMs),
      statsNow: (step) => this.statsNow(step),
      subMetrics: this.subMetrics,
      think: (ms, hardStopMs) => this.think(ms, hardStopMs),
      stop: () => this.stop(),
    };
  }

  /**
   * Sends one request of a flow and records its built-in metrics under `stepIndex`
   * (request-sender.ts); `countedSent` is told the window it was counted sent in.
   */
  send(
    stepIndex: number,
    request: FlowRequest,
    intendedMs: number | null,
    holdUntilMs = Infinity,
    countedSent?: (windowS: number) => void,
  ): Promise<FlowResponse> {
    this.#requests++;
    return this.#sender.send(stepIndex, request, intendedMs, holdUntilMs, countedSent);
  }

  /** Keeps scraped samples with the window of `atMs`, flushed with its metrics. */
  recordSamples(samples: readonly SeriesSample[], atMs: number): void {
    this.#windows.recordSamples(samples, atMs);
  }

  /** The stats a flow's check or custom metric lands in: its step, the current window. */
  statsNow(stepIndex: number): MetricStats {
    return this.#windows.statsFor(this.#windows.windowOf(this.#clock.now()), stepIndex);
  }

  now(): number {
    return this.#clock.now();
  }
}

/** How long requests in flight at stop() may still finish before they are cut. */
const STOP_DRAIN_MS = 1_000;
