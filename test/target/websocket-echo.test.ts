/**
 * The target's WebSocket echo (workers/target/websocket-echo.ts) inside workerd: text and
 * binary messages come back as sent, the client's close code comes back, the first offered
 * subprotocol is accepted, and a plain GET is told to upgrade.
 */
import { describe, expect, it } from "vitest";
import { call } from "./target-calls.ts";

describe("GET /ws/echo", () => {
  it("echoes text and binary messages, then closes with the client's code", async () => {
    const response = await call("/ws/echo", { headers: { Upgrade: "websocket", "Sec-WebSocket-Protocol": "chat, other" } });
    expect(response.status).toBe(101);
    expect(response.headers.get("Sec-WebSocket-Protocol")).toBe("chat");
    const socket = response.webSocket! as WebSocket & { binaryType: string };
    socket.binaryType = "arraybuffer";
    socket.accept();
    const received: Array<string | number[]> = [];
    const closed = new Promise<number>((resolve) => socket.addEventListener("close", (e) => resolve(e.code)));
    const three = new Promise<void>((resolve) =>
      socket.addEventListener("message", (e) => {
        received.push(typeof e.data === "string" ? e.data : [...new Uint8Array(e.data as ArrayBuffer)]);
        if (received.length === 3) resolve();
      }),
    );
    socket.send("one");
    socket.send(new Uint8Array([1, 2, 3]));
    socket.send("three");
    await three;
    expect(received).toEqual(["one", [1, 2, 3], "three"]);
    socket.close(4000, "done");
    expect(await closed).toBe(4000);
  });

  it("answers 426 to a request that does not ask to upgrade", async () => {
    const response = await call("/ws/echo");
    expect(response.status).toBe(426);
    await response.arrayBuffer();
  });
});
