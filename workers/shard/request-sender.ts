/**
 * Sending one request of a flow and recording its built-in metrics: the half of the engine
 * that touches HTTP (k6 keeps it apart from its executors the same way). The engine
 * (engine.ts) decides when iterations run; this waits for a connection slot, tags the
 * request with its run and second, measures it (measure-request.ts), records its trail into
 * the window of its completion second (core/metrics/request-trail.ts) and, for a stream,
 * reads it until its hold time (event-stream.ts). A request that is redirected is recorded
 * hop by hop, as k6 records it (redirect-hops.ts): each hop counted sent in the second it
 * leaves in, with its own run tag, and recorded once when it ends; the flow gets the last
 * hop's response.
 */
import type { OutboundFetch, OutboundInit } from "../../core/outbound/outbound-request.ts";
import { RUN_HEADER, runHeaderValue, type ShardAssignment } from "../../core/run/protocol.ts";
import { recordTrail } from "../../core/metrics/request-trail.ts";
import { recordRequestSubMetrics, type SampleTags, type SubMetricFilter } from "../../core/metrics/sub-metrics.ts";
import { ClockGrid } from "../../core/metrics/clock-resolution.ts";
import type { LoopWatch } from "../../core/metrics/loop-delay.ts";
import { IterationInterrupted, redirectInit, type FlowRequest, type FlowResponse } from "../../scenarios/flow.ts";
import type { ConnectionSlots } from "./connection-slots.ts";
import { CUT_AT_GRACEFUL_STOP, type TimeoutQueue } from "./timeout-queue.ts";
import { CloudflareSignature } from "./cloudflare-signature.ts";
import type { ShardWindows } from "./shard-windows.ts";
import { fetchAndMeasure, trailOf, type Measured } from "./measure-request.ts";
import { RedirectHops, type Hop, type HopSender } from "./redirect-hops.ts";
import { readEventStream } from "./event-stream.ts";
import type { EngineClock } from "./engine-types.ts";

/** The reason requests cut by stop() are aborted with (told apart from a timeout by identity). */
export const RUN_STOPPED = new DOMException("run stopped", "AbortError");

/** What the sender shares with its engine: the windows, slots and timeouts, and whether the run stopped. */
export interface SenderDeps {
  readonly a: ShardAssignment;
  readonly clock: EngineClock;
  readonly fetch: OutboundFetch;
  readonly windows: ShardWindows;
  readonly slots: ConnectionSlots;
  readonly timeouts: TimeoutQueue;
  readonly loopWatch: LoopWatch;
  readonly loopProbe: { arm(): void };
  /** Open event streams' closing functions, called at stop(). */
  readonly streams: Set<() => void>;
  readonly isStopped: () => boolean;
  readonly subMetrics: readonly SubMetricFilter[];
  /** The k6 tags every request of this shard has unless it says otherwise. */
  readonly defaultTags: SampleTags;
}

/** A request on its way: when it left, in which window it was counted sent, what aborts it. */
interface Sending {
  readonly queuedMs: number;
  readonly sendMs: number;
  /** Its timeout: the request's own (a k6 script's params.timeout), else the run's. */
  readonly timeoutMs: number;
  readonly timeout: { readonly signal: AbortSignal; done(): void };
  readonly streamAbort: AbortController | null;
  readonly init: OutboundInit;
  readonly sentWindow: number;
  /** Its hops: the one in flight, and each followed redirect's, recorded as it is followed. */
  readonly hops: RedirectHops;
}

export class RequestSender {
  readonly #d: SenderDeps;
  /** The grid of the clock readings requests are timed with (core/metrics/clock-resolution.ts). */
  readonly clockGrid = new ClockGrid();
  /** Whether responses carried Cloudflare's signature (cloudflare-signature.ts). */
  readonly cloudflare = new CloudflareSignature();

  /** What a redirect chain asks of the sender: its hops counted sent and recorded (redirect-hops.ts). */
  readonly #hopSender: HopSender;

  constructor(deps: SenderDeps) {
    this.#d = deps;
    this.#hopSender = {
      clock: deps.clock,
      isStopped: deps.isStopped,
      recordHop: (chain, hop, measured, endMs) => this.#record(chain, hop, measured, endMs, deps.loopWatch.delayAt(endMs)),
      sendingHop: (chain, sendMs) => {
        const sentWindow = deps.windows.windowOf(sendMs);
        deps.windows.statsFor(sentWindow, chain.stepIndex).counters.sent++;
        return { [RUN_HEADER]: runHeaderValue(deps.a.runId, sentWindow, chain.stepIndex, deps.a.part) };
      },
    };
  }

  /**
   * Sends one request of a flow and records its built-in metrics under `stepIndex`. A
   * stream request (SSE) gives its slot back at the headers like any other, then is read
   * until its hold time, the scenario's end, `holdUntilMs` (the iteration's hard stop) or
   * stop(), whichever comes first; its duration and TTFB are both the time to open.
   */
  async send(
    stepIndex: number,
    request: FlowRequest,
    intendedMs: number | null,
    holdUntilMs: number,
    countedSent: ((windowS: number) => void) | undefined,
  ): Promise<FlowResponse> {
    const d = this.#d;
    const sending = await this.#leave(stepIndex, request, intendedMs, holdUntilMs);
    countedSent?.(sending.sentWindow);
    const { timeout, timeoutMs, hops } = sending;
    const deps = { fetch: d.fetch, clock: d.clock, slots: d.slots, timeout, stoppedReason: RUN_STOPPED, timeoutMs };
    const measured = await fetchAndMeasure(deps, request, sending.init, hops);
    if (timeout.signal.reason === CUT_AT_GRACEFUL_STOP) {
      // Cut at its iteration's hard stop: k6 cancels it there and records nothing of it
      // (k6 v1.8.1: no http_reqs, the iteration interrupted; engine.test.ts). Hops already
      // followed were recorded, as k6 had saved theirs.
      timeout.done();
      throw new IterationInterrupted("in flight at the iteration's graceful stop");
    }
    const { status, headers, body, error, response } = measured;
    // The hop that ended the chain: the request itself unless a redirect was followed.
    const last = hops.current;
    // Where the redirects led (fetch's response.url), for a script's res.url.
    const url = response?.url ? { url: response.url } : {};
    const opened = request.stream && !error && response?.ok && response.body ? response.body : null;
    const endMs = opened ? last.sendMs + measured.ttfbMs : d.clock.now();
    timeout.done();
    this.#record(hops, last, measured, endMs, d.loopWatch.delayAt(opened ? d.clock.now() : endMs));
    // As k6's res.timings: the last hop's.
    const durationMs = endMs - last.sendMs;
    if (opened) {
      const stream = await this.#readStream(stepIndex, request, opened, { ...sending, sendMs: last.sendMs }, endMs, holdUntilMs);
      return { status, error, headers, body, durationMs, stream, ...url };
    }
    return { status, error, headers, body, durationMs: error ? 0 : durationMs, ...url };
  }

  /** Waits for a slot, then starts the request's timeout and counts it sent in the second it leaves in. */
  async #leave(stepIndex: number, request: FlowRequest, intendedMs: number | null, holdUntilMs: number): Promise<Sending> {
    const d = this.#d;
    const queuedMs = d.clock.now();
    const wait = d.slots.acquire();
    if (wait) await wait;
    // Stopped while queued for a connection slot: nothing leaves after stop().
    if (d.isStopped()) {
      d.slots.release();
      throw new IterationInterrupted("run stopped before the request was sent");
    }
    const sendMs = d.clock.now();
    d.loopProbe.arm();
    // The timeout runs from the actual send, like k6's (time queued for a slot is lag). The
    // iteration's hard stop (its graceful stop, core/schedule/graceful-stop.ts) cuts it sooner.
    const timeoutMs = request.timeoutMs ?? d.a.spec.timeoutMs;
    const timeoutAtMs = sendMs + timeoutMs;
    const timeout = holdUntilMs < timeoutAtMs ? d.timeouts.add(holdUntilMs, CUT_AT_GRACEFUL_STOP) : d.timeouts.add(timeoutAtMs);
    // A stream is closed by aborting its request: cancelling the body alone can leave the
    // connection open (the target would hold the stream until its next write fails).
    const streamAbort = request.stream ? new AbortController() : null;
    const signal = streamAbort ? AbortSignal.any([timeout.signal, streamAbort.signal]) : timeout.signal;
    // Its redirects, if any, are recorded hop by hop: the first hop is the request itself.
    const first: Hop = { url: request.url, method: request.method, queuedMs, sendMs, intendedMs };
    const hops = new RedirectHops(this.#hopSender, stepIndex, request, first);
    const init: OutboundInit = { method: request.method, signal, redirectWatcher: hops, ...redirectInit(request) };
    // The run, the second it was sent in and its step, for the target's side of the count
    // (workers/target/request-ledger.ts, core/run/delivery.ts).
    const sentWindow = d.windows.windowOf(sendMs);
    const tag = runHeaderValue(d.a.runId, sentWindow, stepIndex, d.a.part);
    init.headers = request.headers ? { ...request.headers, [RUN_HEADER]: tag } : { [RUN_HEADER]: tag };
    const body = request.bodyBytes ?? request.body;
    if (body !== undefined) init.body = body;
    d.windows.statsFor(sentWindow, stepIndex).counters.sent++;
    return { queuedMs, sendMs, timeoutMs, timeout, streamAbort, init, sentWindow, hops };
  }

  /**
   * Records one hop's trail in the window of its completion second, and its sub-metrics under
   * k6's request tags as the shard knows them: the hop's URL as `name` and `url` (unless the
   * request is tagged), its method, the script's own tags over them.
   */
  #record(chain: RedirectHops, hop: Hop, measured: Measured, endMs: number, clientDelayMs: number): void {
    const d = this.#d;
    const { stepIndex, request } = chain;
    this.clockGrid.observe(hop.sendMs);
    this.clockGrid.observe(endMs);
    // A target is behind Cloudflare or not: the first responses of an invocation tell.
    if (measured.headers) this.cloudflare.observe(measured.headers);
    const trail = trailOf(measured, { queuedMs: hop.queuedMs, sendMs: hop.sendMs, endMs, intendedMs: hop.intendedMs, clientDelayMs });
    const stats = d.windows.statsFor(d.windows.windowOf(endMs), stepIndex);
    // Every hop by the request's expected statuses, as k6's responseCallback judges each round trip.
    const failed = recordTrail(stats, trail, request.expect);
    if (d.subMetrics.length) {
      const tags = { name: hop.url, url: hop.url, method: hop.method, ...d.defaultTags, ...request.tags };
      recordRequestSubMetrics(() => stats.custom, d.subMetrics, tags, trail, failed);
    }
  }

  /** Reads an opened event stream until its hold time, the scenario's end, the iteration's hard stop or stop(). */
  #readStream(stepIndex: number, request: FlowRequest, body: ReadableStream<Uint8Array>, sending: Sending, openedMs: number, holdUntilMs: number) {
    const d = this.#d;
    const holdMs = request.stream!.holdMs;
    const until = Math.min(holdMs === null ? Infinity : openedMs + holdMs, d.a.t0Ms + d.a.spec.durationMs, holdUntilMs, d.a.deadlineMs);
    return readEventStream({
      body,
      sendMs: sending.sendMs,
      openedMs,
      untilMs: until,
      abort: () => sending.streamAbort!.abort(),
      clock: d.clock,
      isStopped: d.isStopped,
      open: d.streams,
      customAt: (ms) => d.windows.statsFor(d.windows.windowOf(ms), stepIndex).custom,
    });
  }
}
