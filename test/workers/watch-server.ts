/**
 * A loopback server for the scheduled-runs tests (test/workers/schedules.test.ts), started
 * in Node before the workers project and handed to it as WATCH_SERVER_URL:
 *
 *   ANY  /slow                 a target whose delay the test sets (a release that got slower)
 *   POST /hook/<name>          a webhook receiver: records method, headers and raw body
 *   POST /control/delay?ms=N   sets /slow's delay
 *   POST /control/fail?n=N     the next N webhook deliveries answer 503 (to see the retries)
 *   GET  /control/hooks        every delivery received, oldest first
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";

interface Delivery {
  readonly path: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  readonly status: number;
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export default async function setup(project: TestProject) {
  let delayMs = 5;
  let failNext = 0;
  const deliveries: Delivery[] = [];
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const body = await bodyOf(request);
    const json = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    if (url.pathname === "/slow") {
      setTimeout(() => json(200, { ok: true, delayMs }), delayMs);
    } else if (url.pathname.startsWith("/hook/")) {
      const status = failNext > 0 ? 503 : 200;
      if (failNext > 0) failNext--;
      deliveries.push({ path: url.pathname, headers: request.headers, body, status });
      json(status, { received: status === 200 });
    } else if (url.pathname === "/control/delay") {
      delayMs = Number(url.searchParams.get("ms"));
      json(200, { delayMs });
    } else if (url.pathname === "/control/fail") {
      failNext = Number(url.searchParams.get("n"));
      json(200, { failNext });
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
