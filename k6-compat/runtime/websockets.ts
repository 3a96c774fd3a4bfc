/**
 * k6/websockets (and k6/experimental/websockets, the same API): k6's browser-like
 * `WebSocket`, run over the shard's outbound WebSockets. The script's isolate has no
 * network of its own, so the socket lives in the shard (workers/shard/script-sockets.ts);
 * this side keeps the browser-visible state (readyState, listeners, binaryType) and talks
 * to it through the iteration's host: one `socketSession` call per socket, during which the
 * shard hands every event to a listener in order, and `socketSend`/`socketClose`, queued so
 * they reach the socket in the order the script made them.
 *
 * Each open socket holds the VU's event loop (event-loop.ts): the iteration ends when every
 * socket it opened has closed, as in k6. Semantics read from grafana/xk6-websockets (the
 * module k6 ships as k6/websockets): errors then close on a failed connect; `send` on a
 * socket that is not open throws InvalidStateError; an exception in a handler ends the
 * iteration. A handler that sleeps blocks k6's event loop; the async rewrite makes such a
 * listener async, and the socket hands it its next event only once its promise settles.
 */
import type { VuEventLoop } from "./event-loop.ts";
import type { IterationHost, Sample, SocketEvent } from "./wire.ts";

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;
/** RFC 6455 §7.4.1: 1000 normal closure, 1001 going away. */
const NORMAL_CLOSURE = 1000;
const GOING_AWAY = 1001;

type Listener = (event: Record<string, unknown>) => unknown;
const EVENT_TYPES = ["open", "message", "error", "close", "ping", "pong"] as const;
type EventType = (typeof EVENT_TYPES)[number];

interface SocketParams {
  readonly headers?: Record<string, unknown>;
  readonly tags?: Record<string, unknown>;
}

export interface SocketDeps {
  /** The running iteration's host (throws in the init context). */
  readonly host: (call: string) => IterationHost;
  readonly loop: () => VuEventLoop;
  /** Checks and custom metrics recorded so far, to travel with the socket's opening. */
  readonly drain: () => Sample[];
  /** A sample's k6 tags: the VU's group and scenario, then the script's own. */
  readonly tags: (own: Record<string, unknown> | undefined) => Record<string, string>;
}

/** The module's exports for one VU. */
export function createWebSockets(deps: SocketDeps): Record<string, unknown> {
  /** k6's `new WebSocket(url, protocols?, params?)`, over this VU's host and event loop. */
  class WebSocket extends ShardWebSocket {
    constructor(url: unknown, protocols?: unknown, params?: SocketParams | null) {
      super(deps, url, protocols, params);
    }
  }
  return { WebSocket, Blob };
}

/**
 * k6's browser-like WebSocket, made for one VU by createWebSockets (which passes the VU's
 * deps): the state the script sees, and the shard's socket behind it.
 */
class ShardWebSocket {
  static readonly CONNECTING = CONNECTING;
  static readonly OPEN = OPEN;
  static readonly CLOSING = CLOSING;
  static readonly CLOSED = CLOSED;
  readonly url: string;
  readyState: number = CONNECTING;
  protocol = "";
  bufferedAmount = 0;
  onopen: Listener | null = null;
  onmessage: Listener | null = null;
  onerror: Listener | null = null;
  onclose: Listener | null = null;
  onping: Listener | null = null;
  onpong: Listener | null = null;
  #binaryType: "blob" | "arraybuffer" = "blob";
  readonly #listeners = new Map<EventType, Listener[]>();
  readonly #host: IterationHost;
  readonly #loop: VuEventLoop;
  #id: number | null = null;
  /** Sends and the close, in the order the script made them. */
  #outbox: Promise<void> = Promise.resolve();
  /** The events waiting for an async handler of an earlier one (null when none is running). */
  #inbox: Promise<void> | null = null;

  constructor(deps: SocketDeps, url: unknown, protocols: unknown, params: SocketParams | null | undefined) {
    this.url = socketUrl(url);
    this.#host = deps.host("new WebSocket()");
    this.#loop = deps.loop();
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(params?.headers ?? {})) headers[k] = String(v);
    const list = protocols === undefined || protocols === null ? [] : Array.isArray(protocols) ? protocols.map(String) : [String(protocols)];
    const release = this.#loop.hold(() => this.#abandon());
    const loop = this.#loop;
    this.#host
      .socketSession(
        deps.drain(),
        { url: this.url, protocols: list, headers, closeFrameIsMessage: true, tags: { url: this.url, ...deps.tags(params?.tags) } },
        (event) => this.#deliver(event),
      )
      .then(
        // The socket is done once its last event's handlers are.
        () => (this.#inbox ?? Promise.resolve()).then(release),
        (error: unknown) => {
          this.readyState = CLOSED;
          loop.fail(error);
          release();
        },
      );
  }

  get binaryType(): string {
    return this.#binaryType;
  }

  set binaryType(value: string) {
    if (value !== "blob" && value !== "arraybuffer") throw new Error(`unknown binaryType ${value}, the supported ones are "blob" and "arraybuffer"`);
    this.#binaryType = value;
  }

  addEventListener(type: string, listener: Listener): void {
    if (!(EVENT_TYPES as readonly string[]).includes(type)) throw new Error(`unknown WebSocket event "${type}" (known: ${EVENT_TYPES.join(", ")})`);
    if (typeof listener !== "function") throw new TypeError("addEventListener needs a function");
    const list = this.#listeners.get(type as EventType) ?? [];
    list.push(listener);
    this.#listeners.set(type as EventType, list);
  }

  send(data: unknown): void {
    const id = this.#openId();
    const payload = payloadOf(data);
    this.#queue(async () => this.#host.socketSend(id, await payload));
  }

  close(code?: unknown, reason?: unknown): void {
    if (this.readyState === CLOSING || this.readyState === CLOSED) return;
    const id = this.#id;
    this.readyState = CLOSING;
    if (id === null) return; // still connecting: the shard closes it once open (see #receive)
    this.#queue(() => this.#host.socketClose(id, code === undefined ? NORMAL_CLOSURE : Number(code), reason === undefined ? "" : String(reason)));
  }

  ping(): never {
    this.#openId();
    throw new Error(
      "WebSocket.ping(): a Worker's WebSocket API cannot send ping frames (the runtime answers the server's own), so edgeload has no pong or ws_ping",
    );
  }

  #openId(): number {
    if (this.readyState !== OPEN || this.#id === null) throw new Error("InvalidStateError: the WebSocket is not open");
    return this.#id;
  }

  #queue(step: () => Promise<void>): void {
    // A send racing the server's close fails in the shard; the close event tells the script.
    this.#outbox = this.#outbox.then(step).catch(() => {});
  }

  /** Hands `event` to its handlers now, or once those of the events before it are done. */
  #deliver(event: SocketEvent): void {
    if (this.#inbox) this.#inbox = this.#inbox.then(() => this.#handle(event));
    else this.#inbox = this.#handle(event) ?? null;
  }

  /** Runs the event's handlers (a throw or a rejection ends the iteration); the promise of an async one's, else undefined. */
  #handle(event: SocketEvent): Promise<void> | undefined {
    let running: Promise<void> | undefined;
    this.#loop.run(() => {
      running = this.#receive(event);
    });
    return running?.catch((error: unknown) => this.#loop.fail(error));
  }

  #receive(event: SocketEvent): Promise<void> | undefined {
    const base = { type: event.type, timestamp: Date.now(), target: this };
    if (event.type === "open") {
      this.#id = event.id;
      this.protocol = event.protocol;
      if (this.readyState === CLOSING) {
        // close() was called while connecting.
        this.#queue(() => this.#host.socketClose(event.id, NORMAL_CLOSURE, ""));
        return;
      }
      this.readyState = OPEN;
      return this.#dispatch("open", base);
    }
    if (event.type === "message") {
      if (this.readyState !== OPEN) return; // as k6: messages after close() are dropped
      const data = typeof event.data === "string" || this.#binaryType === "arraybuffer" ? event.data : new Blob([event.data]);
      return this.#dispatch("message", { ...base, data, origin: this.url });
    }
    if (event.type === "error") return this.#dispatch("error", { ...base, error: event.error });
    this.readyState = CLOSED;
    return this.#dispatch("close", { ...base, code: event.code, reason: event.reason });
  }

  /** Runs the event's handlers in order; from the first that gives a promise on, each waits for the one before. */
  #dispatch(type: EventType, event: Record<string, unknown>): Promise<void> | undefined {
    const own = this[`on${type}`];
    const handlers = [...(typeof own === "function" ? [own] : []), ...(this.#listeners.get(type) ?? [])];
    return runInOrder(handlers, (handler) => handler.call(this, event));
  }

  /** The iteration ended with an error: no handler of this socket runs again; the shard closes it. */
  #abandon(): void {
    const id = this.#id;
    this.readyState = CLOSED;
    if (id !== null) this.#host.socketClose(id, GOING_AWAY, "").catch(() => {});
  }
}

/** Calls each of `handlers`; once one gives a promise, the rest run after it settles (the promise of that chain). */
function runInOrder(handlers: readonly Listener[], call: (handler: Listener) => unknown): Promise<void> | undefined {
  for (let i = 0; i < handlers.length; i++) {
    const result = call(handlers[i]!);
    if (result instanceof Promise) return result.then(() => runInOrder(handlers.slice(i + 1), call));
  }
  return undefined;
}

function socketUrl(url: unknown): string {
  const text = String(url);
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new SyntaxError(`new WebSocket("${text}"): not a URL`);
  }
  if (parsed.protocol !== "ws:" && parsed.protocol !== "wss:") throw new SyntaxError(`new WebSocket("${text}"): the URL must start with ws:// or wss://`);
  return parsed.href;
}

/** What `send` accepts, as k6: a string, an ArrayBuffer, a view of one, or a Blob. */
function payloadOf(data: unknown): string | ArrayBuffer | Promise<string | ArrayBuffer> {
  if (typeof data === "string") return data;
  if (data instanceof ArrayBuffer) return data.slice(0);
  if (ArrayBuffer.isView(data)) return (data.buffer as ArrayBuffer).slice(data.byteOffset, data.byteOffset + data.byteLength);
  if (typeof Blob !== "undefined" && data instanceof Blob) return data.arrayBuffer();
  throw new TypeError(`WebSocket.send(): unsupported data ${Object.prototype.toString.call(data)} (a string, an ArrayBuffer, a typed array or a Blob)`);
}
