/**
 * A flow is what one iteration does: one request (a custom step) or several in order (the
 * mail-OTP login). Flows are plain async functions over an injected `FlowIO`, so they know
 * nothing of pacing, connection slots, timeouts or windows — the shard engine owns those —
 * and they run unchanged in plain Node against a scripted IO in tests.
 *
 * A flow reports through the IO: `send` records the request's built-in metrics under its
 * step (duration, TTFB, status, http_req_failed by `expect`), `check` counts a k6 check on
 * the last request, `count`/`rate`/`trend` record custom metrics, and `sleep` is think time
 * (on the engine's clock, cut short when the VU or the run has to stop).
 * An iteration whose flow sends nothing (e.g. every refresh family is busy) counts as a
 * dropped iteration.
 */
import type { LogLevel } from "../core/metrics/script-output.ts";
import type { RedirectCookies } from "../core/outbound/outbound-request.ts";

export interface FlowRequest {
  readonly url: string;
  readonly method: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** A body of bytes (a k6 script's), sent as they are: fetch labels a string body `text/plain;charset=UTF-8`. */
  readonly bodyBytes?: Uint8Array;
  /** Statuses that count as success for http_req_failed (default 200–399). */
  readonly expect?: ReadonlySet<number> | null;
  /** Whether the flow needs the body text (else it is read and discarded). */
  readonly readBody?: boolean;
  /** "manual" to see a redirect instead of following it (silent authentication). */
  readonly redirect?: "manual" | "follow";
  /** The most redirects followed (k6's maxRedirects); one needing more answers with its last 3xx. Default 10. */
  readonly maxRedirects?: number;
  /** A k6 VU's jar at each redirect followed (core/outbound/outbound-request.ts). */
  readonly redirectCookies?: RedirectCookies;
  /** How long it may take (a k6 script's params.timeout); absent: the run's timeout. */
  readonly timeoutMs?: number;
  /**
   * A Server-Sent Events stream: after the headers the engine reads events for `holdMs`
   * (null: until the scenario ends), recording the SSE metrics, then closes it.
   */
  readonly stream?: { readonly holdMs: number | null };
  /** The request's k6 tags (a script's params.tags, name, group, method), for the run's sub-metrics (core/metrics/sub-metrics.ts). */
  readonly tags?: Readonly<Record<string, string>>;
}

/** How a stream went (see FlowRequest.stream). */
export interface StreamOutcome {
  readonly messages: number;
  /** From the send to the first event, or null when none came. */
  readonly firstMessageMs: number | null;
  /** How long it was open after its headers. */
  readonly openForMs: number;
  /** The server or the network ended it before its hold time was over. */
  readonly endedEarly: boolean;
}

/** A sample of a scraped series (see FlowIO.sample). */
export interface SeriesSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface FlowResponse {
  /** 0 when there was no response (see `error`). */
  readonly status: number;
  readonly error: "timeout" | "connection" | null;
  readonly headers: Headers | null;
  /** The body text when `readBody` was asked for, else null. */
  readonly body: string | null;
  /** http_req_duration of this request (ms; 0 without a response). */
  readonly durationMs: number;
  /** For a stream request that opened: how it went. */
  readonly stream?: StreamOutcome;
  /** The URL the response came from, after the redirects followed (absent: the request's). */
  readonly url?: string;
  /**
   * The 3xx hops followed before it, each a request of its own as k6 counts them, when its
   * sender does not record them itself (a setup or teardown phase: scenarios/run-phase.ts).
   */
  readonly redirects?: readonly FollowedHop[];
}

/** A 3xx a request's redirect chain went through: where, how, its status, its own time and bytes, and where it led. */
export interface FollowedHop {
  readonly url: string;
  readonly method: string;
  readonly status: number;
  readonly durationMs: number;
  readonly bytes: number;
  readonly to: { readonly url: string; readonly method: string };
}

/**
 * A request's redirect handling as fetch init fields: `maxRedirects` is not fetch's own but
 * the outbound module's (workers/outbound/outbound-fetch.ts), which follows redirects.
 */
export interface RedirectInit {
  redirect?: "manual" | "follow";
  maxRedirects?: number;
  redirectCookies?: RedirectCookies;
}

export function redirectInit(request: FlowRequest): RedirectInit {
  return {
    ...(request.redirect ? { redirect: request.redirect } : {}),
    ...(request.maxRedirects !== undefined ? { maxRedirects: request.maxRedirects } : {}),
    ...(request.redirectCookies ? { redirectCookies: request.redirectCookies } : {}),
  };
}

export interface FlowIO {
  send(step: number, request: FlowRequest): Promise<FlowResponse>;
  /** Counts one k6 check on the last request sent; `tags` (k6's: check, group, the script's own) feed the run's sub-metrics. */
  check(passed: boolean, tags?: Readonly<Record<string, string>>): void;
  count(name: string, n?: number, tags?: Readonly<Record<string, string>>): void;
  rate(name: string, passed: boolean, tags?: Readonly<Record<string, string>>): void;
  /** Records a custom trend sample in milliseconds. */
  trend(name: string, ms: number, tags?: Readonly<Record<string, string>>): void;
  /** Sets a k6 Gauge to `value`, stamped now (its last value); absent where gauges are not kept (setup, teardown). */
  gauge?(name: string, value: number): void;
  /** Stores samples of a scraped series with the run, stamped now (see custom-steps' scrape). */
  sample(samples: readonly SeriesSample[]): void;
  /** Think time: resolves after `ms`, or rejects with IterationInterrupted when the iteration must stop. */
  sleep(ms: number): Promise<void>;
  /** Epoch milliseconds. */
  now(): number;
  /**
   * What a k6 script said (workers/shard/script-flow.ts): a console line, an uncaught
   * error that ended the iteration, an exec.test.abort() that ends the run, an
   * exec.test.fail() that marks it failed. Counted with the window's stats; absent where
   * there are none (setup and teardown).
   */
  log?(level: LogLevel, message: string, vu: number): void;
  scriptError?(message: string, at: string | null): void;
  abortTest?(message: string): void;
  failTest?(message: string): void;
}

export interface IterationInfo {
  /** The run-wide iteration index (identical whatever the shard layout). */
  readonly global: number;
  readonly shard: number;
  readonly region: string;
  /** Closed-model runs: the VU's global number, 1-based like k6's __VU (absent for arrival-rate runs). */
  readonly vu?: number;
  /**
   * Captured values: the VU's, kept across its iterations (closed model), or this
   * iteration's own (arrival-rate executors, where the flow starts with an empty map).
   */
  readonly captured?: Map<string, string>;
}

/**
 * Thrown out of `send`/`sleep` when an iteration must stop mid-flow (a ramp-down's
 * graceful period or the run's end passed, or the run was aborted). Not a failure of the
 * target: the engine does not count the iteration.
 */
export class IterationInterrupted extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "IterationInterrupted";
  }
}

/**
 * Thrown out of a flow when its iteration could not run at all: a k6 script's isolate did not
 * start (a loader error, init code that throws only at the edge) or died under it. Not the
 * target's failure, and not an iteration: the engine counts it as a script error, and a run
 * in which no iteration could run ends in error (core/run/script-start.ts).
 */
export class IterationCouldNotRun extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "IterationCouldNotRun";
  }
}

export interface Flow {
  run(io: FlowIO, it: IterationInfo): Promise<void>;
  /**
   * Whether an iteration that sent nothing still ran (a k6 script's may only sleep). By
   * default it did not: it counts as dropped.
   */
  readonly iterationsMayBeEmpty?: boolean;
  /** Whether each counted iteration's time is kept as k6's iteration_duration (a k6 script's). */
  readonly timesIterations?: boolean;
  /** k6's minIterationDuration (ms): a shorter iteration's VU waits out the rest before its next. */
  readonly minIterationMs?: number;
  /**
   * The shard's alarm is over (`final`: the shard is done): what the flow held for it ends
   * (a k6 script's browser connection, workers/shard/browser-session.ts).
   */
  invocationEnded?(final: boolean): Promise<void>;
  /** State to persist with each checkpoint (refresh families), if the flow keeps any. */
  snapshot?(): unknown;
  restore?(state: unknown): void;
}

/** A JSON body, or null when it is not JSON. */
export function jsonBody<T = Record<string, unknown>>(r: FlowResponse): T | null {
  if (r.body === null) return null;
  try {
    return JSON.parse(r.body) as T;
  } catch {
    return null;
  }
}

/** HTTP Basic client authentication, as Authrim's suite sends it. */
export const basicAuth = (id: string, secret: string) => `Basic ${btoa(`${id}:${secret}`)}`;

export const FORM = "application/x-www-form-urlencoded";
