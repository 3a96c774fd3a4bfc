/**
 * k6's event loop in the compat runtime (runtime/event-loop.ts), k6/timers (runtime/timers.ts)
 * and k6/websockets (runtime/websockets.ts), in plain Node over a scripted host whose
 * sockets echo what is sent: an iteration ends only when its timers have fired or been
 * cleared and its sockets have closed, events reach the script in k6's order, and a
 * handler that throws ends the iteration; k6/ws's ws.connect blocks until its socket closed. The shard's side of the sockets runs against a
 * real echo in test/e2e/script-websockets.test.ts.
 */
import { vuContext } from "../test/support/vu-context.ts";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { bundleScript } from "./bundle.ts";
import { evaluateInitContext } from "./init-context.ts";
import { createVuModules, sequence } from "./runtime/vu-modules.ts";
import type { IterationHost, SocketEvent } from "./runtime/wire.ts";

/** A host whose timers wait for real and whose sockets echo; `refuse` makes every connect fail. */
function echoHost(opts: { refuse?: boolean; stopAfterMs?: number } = {}) {
  const log: string[] = [];
  const sockets = new Map<number, { listener: (e: SocketEvent) => void; done: () => void }>();
  let nextId = 1;
  const started = Date.now();
  const host: IterationHost = {
    send: () => Promise.reject(new Error("no HTTP in these tests")),
    async sleep(_samples, ms) {
      if (opts.stopAfterMs !== undefined && Date.now() + ms - started > opts.stopAfterMs) throw new Error("IterationInterrupted: past the stop time");
      await new Promise((r) => setTimeout(r, ms));
    },
    socketSession(_samples, request, listener) {
      log.push(`connect ${request.url} [${request.protocols.join(",")}]`);
      if (opts.refuse) {
        // Events arrive after the constructor returned, as over RPC.
        return new Promise<void>((done) =>
          setTimeout(() => {
            listener({ type: "error", error: "websocket: bad handshake" });
            listener({ type: "close", code: 1006, reason: "" });
            done();
          }, 5),
        );
      }
      const id = nextId++;
      return new Promise<void>((done) => {
        sockets.set(id, { listener, done });
        setTimeout(() => listener({ type: "open", id, protocol: request.protocols[0] ?? "" }), 5);
      });
    },
    async socketSend(id, data) {
      log.push(`sent ${typeof data === "string" ? data : `${data.byteLength} bytes`}`);
      sockets.get(id)!.listener({ type: "message", data });
    },
    async socketClose(id, code, reason) {
      log.push(`close ${code}`);
      const s = sockets.get(id)!;
      sockets.delete(id);
      setTimeout(() => {
        s.listener({ type: "close", code, reason });
        s.done();
      }, 5);
    },
  };
  const context = vuContext(host, { scenario: { name: "default", executor: "shared-iterations", startTimeMs: 0 } });
  const modules = createVuModules(context) as Record<string, any>;
  return { log, modules, loop: context.loop!, timers: modules["k6/timers"], WebSocket: modules["k6/websockets"].WebSocket };
}

describe("k6/timers", () => {
  it("keeps the iteration alive until its timers fired or were cleared", async () => {
    const { timers, loop } = echoHost();
    const fired: string[] = [];
    timers.setTimeout(() => fired.push("timeout"), 30);
    // Cleared before it fires: never runs, does not hold the iteration.
    const cleared = timers.setTimeout(() => fired.push("cleared"), 10);
    timers.clearTimeout(cleared);
    let ticks = 0;
    const interval = timers.setInterval(() => {
      fired.push(`tick ${++ticks}`);
      if (ticks === 3) timers.clearInterval(interval);
    }, 10);
    expect(loop.pending).toBe(2);
    await loop.drained();
    expect(fired.sort()).toEqual(["tick 1", "tick 2", "tick 3", "timeout"]);
    expect(loop.pending).toBe(0);
  });

  it("ends the iteration with the error a callback threw, and cancels the rest", async () => {
    const { timers, loop } = echoHost();
    let later = false;
    timers.setTimeout(() => {
      throw new Error("thrown in a timer");
    }, 5);
    timers.setTimeout(() => (later = true), 200);
    await expect(loop.drained()).rejects.toThrow("thrown in a timer");
    await new Promise((r) => setTimeout(r, 250));
    expect(later).toBe(false);
  });

  it("interrupts an interval never cleared when the shard's wait refuses (the iteration's stop time)", async () => {
    const { timers, loop } = echoHost({ stopAfterMs: 100 });
    let ticks = 0;
    timers.setInterval(() => ticks++, 20);
    await expect(loop.drained()).rejects.toThrow(/IterationInterrupted/);
    expect(ticks).toBeGreaterThanOrEqual(2);
  });
});

describe("k6/experimental/streams", () => {
  it("reads to its end a stream a k6/timers timer feeds, as k6's example does, the iteration waiting for the timers", async () => {
    const { modules, loop, timers } = echoHost();
    const { ReadableStream } = modules["k6/experimental/streams"];
    let n = 0;
    const stream = new ReadableStream({
      start(controller: { enqueue(v: number): void; close(): void }) {
        const next = () => {
          if (n < 3) {
            controller.enqueue(++n);
            timers.setTimeout(next, 5);
          } else controller.close();
        };
        timers.setTimeout(next, 5);
      },
    });
    const reader = stream.getReader();
    const read: number[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) read.push(r.value);
    await loop.drained();
    expect(read).toEqual([1, 2, 3]);
  });
});

describe("k6/websockets", () => {
  it("connects, sends, receives the echoes in order and ends the iteration when the socket closes", async () => {
    const { WebSocket, loop, log, timers } = echoHost();
    const seen: string[] = [];
    const ws = new WebSocket("ws://127.0.0.1:9/echo", "chat");
    expect(ws.readyState).toBe(WebSocket.CONNECTING);
    // send before open: k6 throws InvalidStateError.
    expect(() => ws.send("early")).toThrow(/InvalidStateError/);
    ws.onopen = () => {
      seen.push(`open ${ws.protocol}`);
      for (let i = 1; i <= 3; i++) ws.send(`m${i}`);
    };
    ws.addEventListener("message", (e: { data: string }) => {
      seen.push(e.data);
      if (e.data === "m3") timers.setTimeout(() => ws.close(), 10);
    });
    ws.onclose = (e: { code: number }) => seen.push(`close ${e.code} state ${ws.readyState}`);
    await loop.drained();
    expect(seen).toEqual(["open chat", "m1", "m2", "m3", "close 1000 state 3"]);
    expect(log).toEqual(["connect ws://127.0.0.1:9/echo [chat]", "sent m1", "sent m2", "sent m3", "close 1000"]);
  });

  it("hands an async listener (one that sleeps, as the rewrite writes it) the next event only once its promise settled, as k6's blocked loop does", async () => {
    const { WebSocket, loop } = echoHost();
    const seen: string[] = [];
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const ws = new WebSocket("ws://127.0.0.1:9/echo");
    ws.addEventListener("open", async () => {
      seen.push("open");
      ws.send("a"); // its echo arrives while this handler sleeps
      await pause(30);
      seen.push("open done");
    });
    ws.addEventListener("message", async (e: { data: string }) => {
      seen.push(`message ${e.data}`);
      await pause(10);
      seen.push(`message ${e.data} done`);
      if (e.data === "a") ws.send("b");
      else ws.close();
    });
    ws.addEventListener("close", () => seen.push("close"));
    await loop.drained();
    expect(seen).toEqual(["open", "open done", "message a", "message a done", "message b", "message b done", "close"]);
  });

  it("ends the iteration with an async listener's rejection", async () => {
    const { WebSocket, loop } = echoHost();
    const ws = new WebSocket("ws://127.0.0.1:9/echo");
    ws.addEventListener("open", async () => {
      await new Promise((r) => setTimeout(r, 5));
      throw new Error("rejected in a listener");
    });
    await expect(loop.drained()).rejects.toThrow("rejected in a listener");
  });

  it("gives binary messages as an ArrayBuffer when binaryType is arraybuffer, and refuses an unknown one", async () => {
    const { WebSocket, loop } = echoHost();
    const ws = new WebSocket("wss://127.0.0.1:9/echo");
    expect(ws.binaryType).toBe("blob");
    expect(() => (ws.binaryType = "text")).toThrow(/unknown binaryType text/);
    ws.binaryType = "arraybuffer";
    let received: unknown;
    ws.onopen = () => ws.send(new Uint8Array([1, 2, 3]));
    ws.onmessage = (e: { data: unknown }) => {
      received = e.data;
      ws.close();
    };
    await loop.drained();
    expect(received).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(received as ArrayBuffer)]).toEqual([1, 2, 3]);
  });

  it("reports a failed connect as error then close, as k6 does", async () => {
    const { WebSocket, loop } = echoHost({ refuse: true });
    const seen: string[] = [];
    const ws = new WebSocket("ws://127.0.0.1:9/nothing");
    ws.onerror = (e: { error: string }) => seen.push(`error ${e.error}`);
    ws.onclose = (e: { code: number }) => seen.push(`close ${e.code}`);
    await loop.drained();
    expect(seen).toEqual(["error websocket: bad handshake", "close 1006"]);
  });

  it("ends the iteration with a handler's exception, closing the socket", async () => {
    const { WebSocket, loop, log } = echoHost();
    const ws = new WebSocket("ws://127.0.0.1:9/echo");
    ws.onopen = () => {
      throw new Error("thrown in onopen");
    };
    await expect(loop.drained()).rejects.toThrow("thrown in onopen");
    expect(log).toContain("close 1001");
  });

  it.each([
    // Not a WebSocket URL.
    ["http://127.0.0.1/x", /must start with ws:\/\/ or wss:\/\//],
    ["not a url", /not a URL/],
  ])("refuses new WebSocket(%s)", (url, message) => {
    const { WebSocket } = echoHost();
    expect(() => new WebSocket(url)).toThrow(message);
  });

  it("says why ping() cannot work in a Worker", async () => {
    const { WebSocket, loop } = echoHost();
    const ws = new WebSocket("ws://127.0.0.1:9/echo");
    let error = "";
    ws.onopen = () => {
      try {
        ws.ping();
      } catch (e) {
        error = (e as Error).message;
      }
      ws.close();
    };
    await loop.drained();
    expect(error).toMatch(/cannot send ping frames/);
  });
});

describe("a bundled script", () => {
  const dir = mkdtempSync(join(tmpdir(), "k6-event-loop-"));
  const write = (name: string, source: string) => {
    const path = join(dir, name);
    writeFileSync(path, source);
    return path;
  };

  /** VU 1 of the bundled script at `path`, over an echo host. */
  async function bundledVu<E>(path: string) {
    const bundled = await bundleScript(path);
    if (!bundled.ok) throw new Error(bundled.problems.join("\n"));
    const { modules, loop } = echoHost();
    const factory = vm.runInNewContext(bundled.factory, { URL, Promise, Blob });
    return { loop, exports: (factory(modules, {}, 1, () => "", sequence) as { exports: E }).exports };
  }

  it("has k6's timer globals: the iteration waits for a bare setTimeout", async () => {
    const path = write(
      "globals.js",
      [
        'import { WebSocket } from "k6/experimental/websockets";',
        'import { setInterval as every, clearInterval } from "k6/timers";',
        "export const fired = [];",
        "export default function () {",
        '  setTimeout(() => fired.push("global timeout"), 20);',
        '  const id = every(() => { fired.push("interval"); clearInterval(id); }, 5);',
        "  return typeof WebSocket;",
        "}",
      ].join("\n"),
    );
    const { loop, exports } = await bundledVu<{ default: () => string; fired: string[] }>(path);
    expect(exports.default()).toBe("function");
    expect(loop.pending).toBe(2);
    await loop.drained();
    expect(exports.fired).toEqual(["interval", "global timeout"]);
  });

  it("declares k6's ws_* metrics in the init context only when it imports k6/websockets", async () => {
    const uses = write("uses-ws.js", 'import { WebSocket } from "k6/websockets";\nexport default function () { new WebSocket("ws://127.0.0.1/"); }\n');
    const plain = write("plain.js", "export default function () {}\n");
    const metricsOf = async (path: string) => {
      const bundled = await bundleScript(path);
      if (!bundled.ok) throw new Error(bundled.problems.join("\n"));
      const init = evaluateInitContext(bundled.factory, path, {});
      if (!init.ok) throw new Error(init.problems.join("\n"));
      return init.init;
    };
    const withSockets = await metricsOf(uses);
    expect(withSockets.metrics).toEqual({
      ws_connecting: "trend",
      ws_session_duration: "trend",
      ws_sessions: "counter",
      ws_msgs_sent: "counter",
      ws_msgs_received: "counter",
    });
    expect(withSockets.timeTrends.sort()).toEqual(["ws_connecting", "ws_session_duration"]);
    expect((await metricsOf(plain)).metrics).toEqual({});
  });

  it("runs k6/ws's ws.connect as k6 does: awaited, the callback after the handshake, returning once the socket closed", async () => {
    const path = write(
      "old-ws.js",
      [
        'import ws from "k6/ws";',
        "export const seen = [];",
        "export default function () {",
        '  const res = ws.connect("ws://127.0.0.1:9/echo", {}, function (socket) {',
        '    seen.push("callback");',
        '    socket.on("open", () => { socket.send("hello"); socket.setTimeout(() => socket.close(), 20); });',
        '    socket.on("message", (data) => seen.push("message " + data));',
        '    socket.on("close", () => seen.push("close"));',
        '    socket.setInterval(() => seen.push("never: the socket closed first"), 1000);',
        "  });",
        '  seen.push("returned " + res.status);',
        "}",
      ].join("\n"),
    );
    const { loop, exports } = await bundledVu<{ default: () => Promise<void>; seen: string[] }>(path);
    await exports.default();
    expect(exports.seen).toEqual(["callback", "message hello", "close", "returned 101"]);
    expect(loop.pending).toBe(0);
  });

  it("returns status 0 and the error from ws.connect when the handshake fails, as k6 does", async () => {
    const { modules } = echoHost({ refuse: true });
    let called = false;
    const res = await modules["k6/ws"].connect("ws://127.0.0.1:9/nothing", () => (called = true));
    expect(res).toEqual({ url: "", status: 0, headers: {}, body: "", error: "websocket: bad handshake" });
    expect(called).toBe(false);
  });
});
