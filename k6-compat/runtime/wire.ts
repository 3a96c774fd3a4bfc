/**
 * What crosses between a shard and the isolate its k6 script runs in (Workers RPC, so
 * plain structured-clone data). The shard's engine sends every request, so slots,
 * timeouts, the allow-list and the measurements are the engine's own; the script's
 * isolate only decides what to send and records k6 checks and custom metrics.
 */
import type { VuPoolRange } from "../../core/schedule/vu-ids.ts";
import type { LogLevel } from "../../core/metrics/script-output.ts";
import type { RedirectCookies } from "../../core/outbound/outbound-request.ts";
import type { ShardLoadShare } from "./rps-limit.ts";

export type { RedirectCookies, RedirectHop } from "../../core/outbound/outbound-request.ts";

export interface WireRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Bytes, so fetch adds no Content-Type of its own (k6-request.ts). */
  readonly body?: Uint8Array;
  /** Statuses that count as success for http_req_failed; null: k6's default 200–399. */
  readonly expect: readonly number[] | null;
  /** False for `responseType: "none"` (the body is read and dropped). */
  readonly readBody: boolean;
  /** The most redirects it follows (k6's params.redirects, else options.maxRedirects); absent: k6's default, 10. */
  readonly maxRedirects?: number;
  /** k6's params.timeout in ms; absent: the run's timeout (k6's 60 s for a script, core/spec/script-schema.ts). */
  readonly timeoutMs?: number;
  /** The request's `step` (or `name`) tag: the step it is recorded under, when the run declares it. */
  readonly step?: string;
  /** Its k6 tags but those the response decides (status, expected_response): for the run's sub-metrics. */
  readonly tags?: Readonly<Record<string, string>>;
}

export interface WireResponse {
  /** 0 when there was no response (see `error`). */
  readonly status: number;
  readonly error: "timeout" | "connection" | null;
  /** Why the request failed, when it did (a refused redirect, a URL off the allow-list). */
  readonly errorDetail?: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Each Set-Cookie header on its own (a headers object would join them). */
  readonly setCookies: readonly string[];
  readonly body: string | null;
  readonly durationMs: number;
  /** The URL the response came from, after the redirects followed (absent: the request's). */
  readonly url?: string;
}

/** A sample's k6 tags (group, scenario, check, the script's own), for the run's sub-metrics. */
export type SampleTags = Readonly<Record<string, string>>;

/** A k6 check or custom metric sample, recorded in the script's isolate and applied by the shard. */
export type Sample =
  | { readonly type: "check"; readonly name: string; readonly passed: boolean; readonly tags?: SampleTags }
  | { readonly type: "counter"; readonly name: string; readonly value: number; readonly tags?: SampleTags }
  | { readonly type: "rate"; readonly name: string; readonly passed: boolean; readonly tags?: SampleTags }
  | { readonly type: "trend" | "gauge"; readonly name: string; readonly value: number; readonly tags?: SampleTags }
  /** A console line (script-console.ts): k6 prints it with its level. */
  | { readonly type: "log"; readonly level: LogLevel; readonly message: string; readonly vu: number };

/** The shard's side of one iteration, handed to the script's isolate as an RPC stub. */
export interface IterationHost {
  /**
   * Applies the samples recorded so far, then sends the request; each redirect it follows
   * hands its cookies to `redirectCookies` (the VU's jar), which names the next hop's Cookie.
   */
  send(samples: readonly Sample[], request: WireRequest, redirectCookies?: RedirectCookies): Promise<WireResponse>;
  /** Think time (ms); rejects when the iteration must stop. */
  sleep(samples: readonly Sample[], ms: number): Promise<void>;
  /**
   * Opens a WebSocket (k6/websockets) and resolves when it has closed; every event of it
   * reaches `listener` in order, the first being `open` (with the socket's id) or `error`.
   * Rejects when the iteration must stop, after closing the socket.
   */
  socketSession(samples: readonly Sample[], request: SocketRequest, listener: (event: SocketEvent) => void): Promise<void>;
  /** Sends a message on an open socket (`id` from its `open` event). */
  socketSend(id: number, data: string | ArrayBuffer): Promise<void>;
  /** Starts the closing handshake; the `close` event follows. */
  socketClose(id: number, code: number, reason: string): Promise<void>;
}

/**
 * What a script's isolate runs iterations on: one session, opened by one call into the isolate
 * (the call billed as a request), serves many iterations (workers/shard/script-flow.ts).
 */
export interface ScriptSessionApi {
  /** Keeps setup()'s result (JSON) for this isolate's iterations. */
  prepare(setupJson: string): void;
  /** Runs one iteration of `start.exec`; requests and sleeps go through `host`. */
  iteration(host: IterationHost, start: IterationStart): Promise<IterationOutcome>;
}

/** A WebSocket a script opens: its ws:// or wss:// URL, subprotocols and handshake headers. */
export interface SocketRequest {
  readonly url: string;
  readonly protocols: readonly string[];
  readonly headers: Readonly<Record<string, string>>;
  /** Whether the close frame the script sends counts in ws_msgs_sent: k6/websockets counts it, k6/ws does not. */
  readonly closeFrameIsMessage: boolean;
  /** The ws_* samples' k6 tags (url, group, scenario, params.tags), for the run's sub-metrics. */
  readonly tags: SampleTags;
}

/** What happens on a script's WebSocket, in the order the shard saw it. */
export type SocketEvent =
  | { readonly type: "open"; readonly id: number; readonly protocol: string }
  | { readonly type: "message"; readonly data: string | ArrayBuffer }
  | { readonly type: "error"; readonly error: string }
  | { readonly type: "close"; readonly code: number; readonly reason: string };

export interface IterationStart {
  /** The k6 function to run: "default" or a scenario's `exec`. */
  readonly exec: string;
  /** __VU: the closed model's VU id in the test, or null to take a VU from the shard's pool (arrival rate). */
  readonly vu: number | null;
  /**
   * This shard's pool of VUs (arrival rate): its own slice of its scenario's ids
   * (core/schedule/vu-ids.ts), handed out by k6's rule (vu-pool.ts).
   */
  readonly pool: VuPoolRange;
  /** exec.scenario.iterationInTest: unique within the scenario, across its shards. */
  readonly iterationInTest: number;
  readonly scenario: { readonly name: string; readonly executor: string; readonly startTimeMs: number };
  readonly env: Readonly<Record<string, string>>;
  /**
   * Which setup() result the iteration needs (its length and a hash: the data itself, which
   * may be a whole seed set, crosses once per isolate through `prepare`), or null for none.
   */
  readonly setupDataKey: string | null;
  /** The shard's share of the test's load: its part of options.rps (rps-limit.ts). Absent: the isolate's requests share the whole rate. */
  readonly shard?: ShardLoadShare;
}

export interface IterationOutcome {
  /** The isolate does not hold the setup data asked for: `prepare` it, then ask again. */
  readonly needsSetupData?: boolean;
  /** Samples recorded after the last request or sleep. */
  readonly samples: readonly Sample[];
  /** The script threw: its message (k6 logs it and counts the iteration). */
  readonly error: string | null;
  /** Where it threw (`file.js:line`), when the stack names a line of the script (script-failure.ts). */
  readonly at?: string | null;
  /** The script called exec.test.abort(): its message. The whole run stops (k6's exit code 108). */
  readonly aborted?: string | null;
  /** The script called exec.test.fail(): its first message. The run goes on and ends failed (k6's exit code 110). */
  readonly markedFailed?: string;
}

/** k6's built-in trend of each group's time (ms), recorded by group() (vu-modules.ts). */
export const GROUP_DURATION = "group_duration";

/** The name an interruption travels under (RPC keeps an error's message, not its class). */
export const INTERRUPTED = "IterationInterrupted";

/**
 * k6's built-in WebSocket metrics, recorded by the shard (workers/shard/script-sockets.ts):
 * trends in milliseconds, counters by one. ws_ping has no sample: Workers' WebSocket API
 * cannot send a ping frame (docs/k6.md).
 */
export const SOCKET_METRICS = {
  ws_connecting: "trend",
  ws_session_duration: "trend",
  ws_sessions: "counter",
  ws_msgs_sent: "counter",
  ws_msgs_received: "counter",
} as const;
