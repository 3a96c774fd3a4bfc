/**
 * A loopback stand-in for the target-ownership tests (test/workers/target-verification.test.ts),
 * started in Node before the workers project and handed to it as VERIFICATION_SERVER_URL.
 * It is at once a DNS-over-HTTPS resolver (JSON API), a target that can serve the
 * well-known file, and the load target of the runs it admits:
 *
 *   GET  /dns-query?name=N&type=TXT        {Status: 0, Answer: [TXT records of N]} or {Status: 3} (NXDOMAIN)
 *   GET  /.well-known/edgeload-verification  the body the test set, else 404
 *   ANY  other paths                       200 "ok" (the load of an admitted run)
 *   PUT  /control/txt {name, values}       the TXT records of a name ([] withdraws them)
 *   PUT  /control/well-known {status, body}  what the well-known file answers (status 404: none)
 *   GET  /control/dns-queries              every DoH query received: its URL and accept header
 *   POST /control/reset                    no records, no file, no queries
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export default async function setup(project: TestProject) {
  const txt = new Map<string, string[]>();
  let wellKnown = { status: 404, body: "not found" };
  const queries: Array<{ url: string; accept: string | undefined }> = [];
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const body = await bodyOf(request);
    const send = (status: number, value: unknown, type = "application/json") => {
      response.writeHead(status, { "content-type": type });
      response.end(typeof value === "string" ? value : JSON.stringify(value));
    };
    if (url.pathname === "/dns-query") {
      queries.push({ url: url.pathname + url.search, accept: request.headers.accept });
      const name = url.searchParams.get("name") ?? "";
      const values = txt.get(name);
      // Resolvers quote a TXT string in `data`, as in a zone file.
      if (!values?.length) send(200, { Status: 3, Question: [{ name, type: 16 }] }, "application/dns-json");
      else send(200, { Status: 0, Answer: values.map((v) => ({ name, type: 16, TTL: 60, data: JSON.stringify(v) })) }, "application/dns-json");
    } else if (url.pathname === "/.well-known/edgeload-verification") {
      send(wellKnown.status, wellKnown.body, "text/plain");
    } else if (url.pathname === "/control/txt") {
      const { name, values } = JSON.parse(body) as { name: string; values: string[] };
      txt.set(name, values);
      send(200, { name, values });
    } else if (url.pathname === "/control/well-known") {
      wellKnown = JSON.parse(body) as typeof wellKnown;
      send(200, wellKnown);
    } else if (url.pathname === "/control/dns-queries") {
      send(200, queries);
    } else if (url.pathname === "/control/reset") {
      txt.clear();
      wellKnown = { status: 404, body: "not found" };
      queries.length = 0;
      send(200, { reset: true });
    } else send(200, "ok", "text/plain");
  });
  // Keep-alive connections from workerd must not hold the server open at teardown.
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  project.provide("verificationServerUrl", `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    verificationServerUrl: string;
  }
}
