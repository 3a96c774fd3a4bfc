/**
 * The WebSockets of one k6 script iteration (k6/websockets, k6-compat/runtime/websockets.ts),
 * opened by the shard: the script's isolate has no network of its own. A Worker opens an
 * outbound WebSocket with a fetch carrying `Upgrade: websocket` to the http(s) form of the
 * ws(s) URL, then accepts the socket the response carries.
 *
 * k6's ws_* metrics are recorded here, where the socket is: ws_sessions and ws_connecting
 * when the handshake completes, ws_msgs_sent and ws_msgs_received per message (k6/websockets'
 * close frame is a message sent, as in k6; k6/ws's is not),
 * ws_session_duration when it closes (trends in ms, k6-compat/runtime/wire.ts SOCKET_METRICS),
 * each with the socket's k6 tags (url, group, scenario, the script's own) for sub-metrics.
 * A session still open when the iteration must stop (its hard stop, the run's end) is
 * closed with 1001 "going away" and the iteration is interrupted, as k6 does at gracefulStop.
 *
 * The handshake goes out through the outbound module (workers/outbound/): the target's
 * allow-list, no redirect followed.
 *
 * Platform limits (core/plan/platform-limits.ts): the handshake is a subrequest and counts
 * among the connections an invocation may have waiting for response headers until the
 * 101 arrives; an open socket does not.
 */
import type { Outbound } from "../../core/outbound/outbound-request.ts";
import type { FlowIO } from "../../scenarios/flow.ts";
import type { SampleTags, SocketEvent, SocketRequest } from "../../k6-compat/runtime/wire.ts";

/** How often an open session looks whether its iteration must stop (think time ends at the stop time anyway). */
const WATCH_MS = 1_000;
/** RFC 6455 §7.4.1: no close frame was received (a failed connect, a dropped connection). */
const ABNORMAL_CLOSURE = 1006;
const GOING_AWAY = 1001;

export class ScriptSockets {
  readonly #io: FlowIO;
  readonly #outbound: Outbound;
  readonly #open = new Map<number, { readonly socket: WebSocket; readonly closeFrameIsMessage: boolean; readonly tags: SampleTags }>();
  #nextId = 1;

  constructor(io: FlowIO, outbound: Outbound) {
    this.#io = io;
    this.#outbound = outbound;
  }

  /** Opens `request`'s socket, hands its events to `listener` in order, resolves once it has closed. */
  async session(request: SocketRequest, listener: (event: SocketEvent) => unknown): Promise<void> {
    const url = httpUrlOf(request.url);
    const refused = this.#outbound.policy(new URL(url));
    if (refused) throw new Error(`WebSocket to ${request.url} refused before it was opened: ${refused}`);
    let delivered: Promise<unknown> = Promise.resolve();
    // One event at a time, so the script sees them in the order they happened.
    const deliver = (event: SocketEvent) => (delivered = delivered.then(() => listener(event)).catch(() => {}));

    const io = this.#io;
    const started = io.now();
    const headers: Record<string, string> = { ...request.headers, Upgrade: "websocket" };
    if (request.protocols.length) headers["Sec-WebSocket-Protocol"] = request.protocols.join(", ");
    let socket: WebSocket | null = null;
    let failure = "";
    let protocol = "";
    try {
      // k6's WebSocket client follows no redirect: a 3xx is a bad handshake, and never a way to another host.
      const response = await this.#outbound.fetch(url, { headers, redirect: "manual" });
      socket = response.webSocket;
      protocol = response.headers.get("Sec-WebSocket-Protocol") ?? "";
      if (!socket) {
        failure = `websocket: bad handshake (${request.url} answered ${response.status})`;
        await response.body?.cancel();
      }
    } catch (error) {
      failure = `websocket: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (!socket) {
      deliver({ type: "error", error: failure });
      deliver({ type: "close", code: ABNORMAL_CLOSURE, reason: "" });
      await delivered;
      return;
    }
    // Binary frames as ArrayBuffers, which cross to the script's isolate (newer compatibility dates give Blobs).
    (socket as WebSocket & { binaryType: string }).binaryType = "arraybuffer";
    socket.accept();
    const tags = request.tags;
    io.count("ws_sessions", 1, tags);
    io.trend("ws_connecting", io.now() - started, tags);
    const id = this.#nextId++;
    this.#open.set(id, { socket, closeFrameIsMessage: request.closeFrameIsMessage, tags });
    let closed = false;
    const whenClosed = new Promise<void>((resolve) => {
      socket.addEventListener("close", (event) => {
        closed = true;
        deliver({ type: "close", code: event.code, reason: event.reason });
        resolve();
      });
    });
    socket.addEventListener("message", (event) => {
      io.count("ws_msgs_received", 1, tags);
      deliver({ type: "message", data: event.data as string | ArrayBuffer });
    });
    socket.addEventListener("error", (event) => deliver({ type: "error", error: (event as ErrorEvent).message || "websocket: connection error" }));
    deliver({ type: "open", id, protocol });

    let interruption: unknown = null;
    while (!closed) {
      const tick = io.sleep(WATCH_MS);
      tick.catch(() => {}); // a tick that loses the race may still end at the stop time
      try {
        await Promise.race([whenClosed, tick]);
      } catch (error) {
        interruption = error;
        break;
      }
    }
    this.#open.delete(id);
    io.trend("ws_session_duration", io.now() - started, tags);
    if (interruption !== null) {
      closeQuietly(socket, GOING_AWAY, "the iteration was interrupted");
      throw interruption;
    }
    await delivered;
  }

  send(id: number, data: string | ArrayBuffer): void {
    const open = this.#open.get(id);
    if (!open) throw new Error("InvalidStateError: the WebSocket is not open");
    open.socket.send(data);
    this.#io.count("ws_msgs_sent", 1, open.tags);
  }

  close(id: number, code: number, reason: string): void {
    const open = this.#open.get(id);
    if (!open) return;
    closeQuietly(open.socket, code, reason);
    // k6/websockets counts the close frame it writes among the messages sent (xk6-websockets' writePump); k6/ws does not.
    if (open.closeFrameIsMessage) this.#io.count("ws_msgs_sent", 1, open.tags);
  }

  /** Closes what the iteration left open (it ended with an error): its sessions then end. */
  closeAll(): void {
    for (const { socket } of this.#open.values()) closeQuietly(socket, GOING_AWAY, "the iteration ended");
  }
}

/** The URL the handshake is fetched from: ws:// → http://, wss:// → https://. */
export function httpUrlOf(socketUrl: string): string {
  const url = new URL(socketUrl);
  if (url.protocol === "ws:") url.protocol = "http:";
  else if (url.protocol === "wss:") url.protocol = "https:";
  else throw new Error(`${socketUrl}: a WebSocket URL starts with ws:// or wss://`);
  return url.href;
}

function closeQuietly(socket: WebSocket, code: number, reason: string): void {
  try {
    socket.close(code, reason);
  } catch {
    // Already closed or closing: nothing to do.
  }
}
