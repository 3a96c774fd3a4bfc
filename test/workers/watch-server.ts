/**
 * A loopback server for the scheduled-runs tests (test/workers/schedules.test.ts,
 * schedule-week.test.ts), started in Node before the workers project and handed to it as
 * WATCH_SERVER_URL:
 *
 *   ANY  /slow[/<key>]                a target whose delay the test sets (a release that got slower)
 *   POST /hook/<key>                  a webhook receiver: records method, headers and raw body, and
 *                                     drops a delivery id it has already processed (answers 200,
 *                                     recorded as `duplicate`), as docs/schedules.md tells receivers
 *   POST /control/delay?key=K&ms=N    sets /slow/K's delay (no key: /slow's)
 *   POST /control/target?key=K&mode=M /slow/K is `ok`, `fail` (answers 500) or `away` (drops the connection)
 *   POST /control/fail?key=K&n=N      the next N deliveries to /hook/K answer 503 (to see the retries)
 *   POST /control/receiver?key=K&mode=M  /hook/K is `up`, `down` (drops every connection) or
 *                                     `ack-lost` (processes the next delivery but answers 503, so it comes again)
 *   GET  /control/hooks               every delivery received, oldest first
 *
 * Modes are kept per key, so test files running side by side do not change each other's target or receiver.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";

interface Delivery {
  readonly path: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  readonly status: number;
  /** A delivery id this receiver had already processed: dropped. */
  readonly duplicate: boolean;
  /** Acted on: new, and taken (answered 200, or its answer lost on the way back). */
  readonly processed: boolean;
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export default async function setup(project: TestProject) {
  const delayMs = new Map<string, number>();
  const target = new Map<string, "ok" | "fail" | "away">();
  const receiver = new Map<string, "up" | "down" | "ack-lost">();
  const failNext = new Map<string, number>();
  const deliveries: Delivery[] = [];
  const processed = new Set<string>();
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const body = await bodyOf(request);
    const json = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    const key = url.searchParams.get("key") ?? "";
    if (url.pathname === "/slow" || url.pathname.startsWith("/slow/")) {
      const slow = url.pathname.slice("/slow/".length);
      const mode = target.get(slow) ?? "ok";
      const delay = delayMs.get(slow) ?? 5;
      if (mode === "away") request.socket.destroy();
      else setTimeout(() => json(mode === "fail" ? 500 : 200, { ok: mode === "ok", delayMs: delay }), delay);
    } else if (url.pathname.startsWith("/hook/")) {
      const hook = url.pathname.slice("/hook/".length);
      const mode = receiver.get(hook) ?? "up";
      if (mode === "down") return void request.socket.destroy();
      const id = String(request.headers["x-edgeload-delivery"] ?? "");
      const duplicate = id !== "" && processed.has(id);
      const failing = failNext.get(hook) ?? 0;
      const status = failing > 0 || mode === "ack-lost" ? 503 : 200;
      if (failing > 0) failNext.set(hook, failing - 1);
      // ack-lost: the alert is processed, but its answer is lost on the way back (once).
      const taken = !duplicate && (status === 200 || mode === "ack-lost");
      if (taken) processed.add(id);
      if (mode === "ack-lost") receiver.set(hook, "up");
      deliveries.push({ path: url.pathname, headers: request.headers, body, status, duplicate, processed: taken });
      json(status, { received: status === 200, duplicate });
    } else if (url.pathname === "/control/delay") {
      delayMs.set(key, Number(url.searchParams.get("ms")));
      json(200, { key, delayMs: delayMs.get(key) });
    } else if (url.pathname === "/control/target") {
      target.set(key, url.searchParams.get("mode") as "ok" | "fail" | "away");
      json(200, { key, target: target.get(key) });
    } else if (url.pathname === "/control/receiver") {
      receiver.set(key, url.searchParams.get("mode") as "up" | "down" | "ack-lost");
      json(200, { key, receiver: receiver.get(key) });
    } else if (url.pathname === "/control/fail") {
      failNext.set(key, Number(url.searchParams.get("n")));
      json(200, { key, failNext: failNext.get(key) });
    } else if (url.pathname === "/control/hooks") {
      json(200, deliveries);
    } else json(404, { error: "no such route" });
  });
  // Keep-alive connections from workerd must not hold the server open at teardown.
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  project.provide("watchServerUrl", `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    watchServerUrl: string;
  }
}
