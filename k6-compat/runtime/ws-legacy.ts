/**
 * k6/ws, k6's older callback API, over the same shard sockets as k6/websockets
 * (websockets.ts): `ws.connect(url, params, callback)` blocks (it is awaited after the async
 * rewrite, modules.ts) until the socket has closed, and returns k6's response object —
 * status 101, or status 0 with the error when the handshake failed (k6 returns it rather
 * than throwing). The callback gets the socket once the handshake succeeded, before its
 * `open` event, as in k6. The socket's own setTimeout/setInterval stop when it closes.
 */
import { VuEventLoop } from "./event-loop.ts";
import { createTimers } from "./timers.ts";
import type { SocketDeps } from "./websockets.ts";
import type { SocketEvent } from "./wire.ts";

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
    const callback = (typeof paramsOrCallback === "function" ? paramsOrCallback : maybeCallback) as Handler | undefined;
    const params = (typeof paramsOrCallback === "function" ? {} : (paramsOrCallback ?? {})) as ConnectParams;
    if (typeof callback !== "function") throw new TypeError("ws.connect(url, params, callback): the callback must be a function");
    const href = String(url);
    if (!/^wss?:\/\//.test(href)) throw new SyntaxError(`ws.connect("${href}"): the URL must start with ws:// or wss://`);
    const host = deps.host("ws.connect()");
    const loop = new VuEventLoop();
    const handlers = new Map<string, Handler[]>();
    const emit = (event: string, ...args: unknown[]) => {
      for (const h of handlers.get(event) ?? []) h(...args);
    };
    let id: number | null = null;
    let closed = false;
    let failure = "";
    const socketTimers = createTimers(() => loop, wait);
    const socket = {
      on(event: string, handler: Handler) {
        if (typeof handler !== "function") throw new TypeError(`socket.on("${event}"): the handler must be a function`);
        handlers.set(event, [...(handlers.get(event) ?? []), handler]);
      },
      send(text: unknown) {
        if (id === null || closed) throw new Error("socket.send(): the socket is not open");
        host.socketSend(id, String(text)).catch(() => {});
      },
      sendBinary(data: unknown) {
        if (id === null || closed) throw new Error("socket.sendBinary(): the socket is not open");
        if (!(data instanceof ArrayBuffer)) throw new TypeError("socket.sendBinary(): the data must be an ArrayBuffer");
        host.socketSend(id, data.slice(0)).catch(() => {});
      },
      close(code?: unknown) {
        if (id === null || closed) return;
        closed = true;
        host.socketClose(id, code === undefined ? 1000 : Number(code), "").catch(() => {});
      },
      ping(): never {
        throw new Error(
          "socket.ping(): a Worker's WebSocket API cannot send ping frames (the runtime answers the server's own), so edgeload has no pong or ws_ping",
        );
      },
      setTimeout: (fn: Handler, ms: number) => socketTimers.setTimeout(fn, ms),
      setInterval: (fn: Handler, ms: number) => socketTimers.setInterval(fn, ms),
    };
    const receive = (event: SocketEvent) => {
      if (event.type === "open") {
        id = event.id;
        callback(socket);
        emit("open");
      } else if (event.type === "message") {
        if (typeof event.data === "string") emit("message", event.data);
        else emit("binaryMessage", event.data);
      } else if (event.type === "error") {
        if (id === null) failure = event.error;
        else emit("error", { error: () => event.error });
      } else {
        closed = true;
        if (id !== null) emit("close", event.code);
      }
    };
    const release = loop.hold(() => {
      if (id !== null && !closed) host.socketClose(id, 1001, "").catch(() => {});
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
    if (id === null) return { url: "", status: 0, headers: {}, body: "", error: failure || "websocket: connection failed" };
    return { url: href, status: 101, headers: {}, body: "", error: "" };
  }
  return { connect };
}
