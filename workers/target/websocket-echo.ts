/**
 * `GET /ws/echo`: a WebSocket that sends back every message as it came (text as text,
 * binary as binary) and closes when the client closes, with the client's code. The local
 * target's WebSocket endpoint, for k6 scripts' k6/websockets runs under k6 and under edgeload
 * (test/e2e/script-websockets.test.ts). A request without `Upgrade: websocket` gets 426.
 */

/** RFC 6455 §7.4.1: 1005 means the close frame had no code; it may not be sent back. */
const NO_STATUS = 1005;

export function websocketEcho(request: Request): Response {
  if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") {
    return new Response("this endpoint speaks WebSocket: send Upgrade: websocket\n", { status: 426, headers: { Upgrade: "websocket" } });
  }
  const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
  // Binary frames as ArrayBuffers (newer compatibility dates give Blobs, which send() would stringify).
  (server as WebSocket & { binaryType: string }).binaryType = "arraybuffer";
  server.accept();
  server.addEventListener("message", (event) => server.send(event.data));
  server.addEventListener("close", (event) => {
    try {
      server.close(event.code === NO_STATUS ? 1000 : event.code, event.reason);
    } catch {
      // Already closed by the runtime.
    }
  });
  // The first subprotocol the client offers, as an echo server would accept any.
  const offered = request.headers.get("Sec-WebSocket-Protocol")?.split(",")[0]?.trim();
  return new Response(null, { status: 101, webSocket: client, ...(offered ? { headers: { "Sec-WebSocket-Protocol": offered } } : {}) });
}
