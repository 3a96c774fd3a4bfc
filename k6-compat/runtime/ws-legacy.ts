/**
 * k6/ws, k6's older callback API, over the same shard sockets as k6/websockets
 * (websockets.ts): `ws.connect(url, params, callback)` blocks (it is awaited after the async
 * rewrite, modules.ts) until the socket has closed, and returns k6's response object —
 * status 101, or status 0 with the error when the handshake failed (k6 returns it rather
 * than throwing). The callback gets the socket once the handshake succeeded, before its
 * `open` event, as in k6. The socket's own setTimeout/setInterval stop when it closes.
 */
import { VuEventLoop } from "./event-loop.ts";
import { createTimers, type Timers } from "./timers.ts";
import type { SocketDeps } from "./websockets.ts";
import type { IterationHost, SocketEvent } from "./wire.ts";

type Handler = (...args: unknown[]) => unknown;

interface ConnectParams {
  readonly headers?: Record<string, unknown>;
  readonly tags?: Record<string, unknown>;
}

export interface LegacyResponse {
  readonly url: string;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly error: string;
}

/** `wait(ms)`: the shard's think time, as for k6/timers. */
export function createLegacyWs(deps: SocketDeps, wait: (ms: number) => Promise<void>): Record<string, unknown> {
  async function connect(url: unknown, paramsOrCallback?: unknown, maybeCallback?: unknown): Promise<LegacyResponse> {
    const { href, params, callback } = connectArguments(url, paramsOrCallback, maybeCallback);
    const host = deps.host("ws.connect()");
    const loop = new VuEventLoop();
    const state: SocketState = { id: null, closed: false, failure: "", handlers: new Map() };
    const socket = legacySocket(
      host,
      state,
      createTimers(() => loop, wait),
    );
    const receive = (event: SocketEvent) => {
      if (event.type === "open") {
        state.id = event.id;
        callback(socket);
        emit(state, "open");
      } else if (event.type === "message") {
        if (typeof event.data === "string") emit(state, "message", event.data);
        else emit(state, "binaryMessage", event.data);
      } else if (event.type === "error") {
        if (state.id === null) state.failure = event.error;
        else emit(state, "error", { error: () => event.error });
      } else {
        state.closed = true;
        if (state.id !== null) emit(state, "close", event.code);
      }
    };
    const release = loop.hold(() => {
      if (state.id !== null && !state.closed) host.socketClose(state.id, 1001, "").catch(() => {});
    });
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(params.headers ?? {})) headers[k] = String(v);
    host
      .socketSession(deps.drain(), { url: href, protocols: [], headers, closeFrameIsMessage: false, tags: { url: href, ...deps.tags(params.tags) } }, (event) =>
        loop.run(() => receive(event)),
      )
      .then(
        // Closed: the socket's timers stop with it (cancelAll releases every hold).
        () => loop.cancelAll(),
        (error: unknown) => {
          loop.fail(error);
          release();
        },
      );
    await loop.drained();
    if (state.id === null) return { url: "", status: 0, headers: {}, body: "", error: state.failure || "websocket: connection failed" };
    return { url: href, status: 101, headers: {}, body: "", error: "" };
  }
  return { connect };
}

/** One connection as k6/ws sees it. */
interface SocketState {
  /** The shard's socket, once the handshake succeeded. */
  id: number | null;
  closed: boolean;
  /** The handshake's error, when it failed. */
  failure: string;
  /** socket.on()'s handlers, by event. */
  readonly handlers: Map<string, Handler[]>;
}

/** `ws.connect(url, callback)` or `ws.connect(url, params, callback)`, checked. */
function connectArguments(url: unknown, paramsOrCallback: unknown, maybeCallback: unknown): { href: string; params: ConnectParams; callback: Handler } {
  const callback = (typeof paramsOrCallback === "function" ? paramsOrCallback : maybeCallback) as Handler | undefined;
  const params = (typeof paramsOrCallback === "function" ? {} : (paramsOrCallback ?? {})) as ConnectParams;
  if (typeof callback !== "function") throw new TypeError("ws.connect(url, params, callback): the callback must be a function");
  const href = String(url);
  if (!/^wss?:\/\//.test(href)) throw new SyntaxError(`ws.connect("${href}"): the URL must start with ws:// or wss://`);
  return { href, params, callback };
}

function emit(state: SocketState, event: string, ...args: unknown[]): void {
  for (const h of state.handlers.get(event) ?? []) h(...args);
}

/** The `socket` the connect callback gets; its timers (`timers`) stop when it closes. */
function legacySocket(host: IterationHost, state: SocketState, timers: Timers) {
  return {
    on(event: string, handler: Handler) {
      if (typeof handler !== "function") throw new TypeError(`socket.on("${event}"): the handler must be a function`);
      state.handlers.set(event, [...(state.handlers.get(event) ?? []), handler]);
    },
    send(text: unknown) {
      if (state.id === null || state.closed) throw new Error("socket.send(): the socket is not open");
      host.socketSend(state.id, String(text)).catch(() => {});
    },
    sendBinary(data: unknown) {
      if (state.id === null || state.closed) throw new Error("socket.sendBinary(): the socket is not open");
      if (!(data instanceof ArrayBuffer)) throw new TypeError("socket.sendBinary(): the data must be an ArrayBuffer");
      host.socketSend(state.id, data.slice(0)).catch(() => {});
    },
    close(code?: unknown) {
      if (state.id === null || state.closed) return;
      state.closed = true;
      host.socketClose(state.id, code === undefined ? 1000 : Number(code), "").catch(() => {});
    },
    ping(): never {
      throw new Error(
        "socket.ping(): a Worker's WebSocket API cannot send ping frames (the runtime answers the server's own), so edgeload has no pong or ws_ping",
      );
    },
    setTimeout: (fn: Handler, ms: number) => timers.setTimeout(fn, ms),
    setInterval: (fn: Handler, ms: number) => timers.setInterval(fn, ms),
  };
}
