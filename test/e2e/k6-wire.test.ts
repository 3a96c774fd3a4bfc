/**
 * k6's requests byte for byte where a target could tell (issue 53): one script run under real
 * k6 v1.8.1 and under `edgeload run`, each against a loopback echo server started here that
 * records every request as it arrived (method, path and query, the raw header lines with their
 * case and order, the body's bytes). The two logs are compared request by request over a
 * matrix of bodies × methods, params and redirects; so are the checks naming what each
 * `res.request` showed, and the requests each tool counted: every redirect hop is one
 * `http_reqs` with its own status and URL, as k6 counts them.
 *
 * What a Worker cannot control is set aside by name below, each with its reason; docs/k6.md
 * ("What a target sees") lists the same.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runUnderEdgeload, runUnderK6, type SideRun } from "./beside-k6.ts";
import { describeWithK6 } from "./k6.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

type Exported = {
  root_group: { checks: Record<string, { name: string; passes: number; fails: number }> };
  metrics: Record<string, { count?: number; passes?: number; fails?: number }>;
};

/** The statuses the matrix's hops answer with, each counted by a sub-metric both tools export. */
const STATUSES = [200, 301, 302, 303, 307, 308] as const;

/** One request as the target saw it. */
interface Seen {
  readonly method: string;
  readonly url: string;
  readonly rawHeaders: readonly string[];
  readonly body: string;
}

/**
 * The rows: each request's method, path (unique, so the logs line up by it), body and params.
 * Bodies: none, a string, an object (a form), an ArrayBuffer, JSON with its own Content-Type.
 */
const BODIES = ["none", "string", "object", "arraybuffer", "json"] as const;
const WITH_BODY = ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
const ROWS: Array<{ method: string; path: string; body: string; params?: Record<string, unknown> }> = [
  { method: "GET", path: "/w/get?q=1&b=x%20y", body: "none" },
  { method: "HEAD", path: "/w/head", body: "none" },
  ...WITH_BODY.flatMap((method) => BODIES.map((body) => ({ method, path: `/w/${method.toLowerCase()}-${body}`, body }))),
  // Headers: names as given (Go sends them in canonical form), one given twice in two cases, k6's User-Agent replaced.
  {
    method: "GET",
    path: "/w/headers",
    body: "none",
    params: { headers: { "x-lower-case": "1", "X-UPPER": "2", Accept: "application/json", "x-twice": "a", "X-Twice": "b", "User-Agent": "mine/1" } },
  },
  // A Content-Length of the script's is dropped: Go counts the body.
  { method: "POST", path: "/w/content-length", body: "string", params: { headers: { "Content-Length": "99" } } },
  // params.cookies with the Cookie header given and the jar's (set before: see the script).
  { method: "GET", path: "/w/cookies", body: "none", params: { headers: { Cookie: "h=1" }, cookies: { a: "1" } } },
  // Tags and responseType change nothing on the wire.
  { method: "GET", path: "/w/tags", body: "none", params: { tags: { name: "tagged", mine: "x" } } },
  { method: "GET", path: "/w/binary", body: "none", params: { responseType: "binary" } },
  { method: "GET", path: "/w/none", body: "none", params: { responseType: "none" } },
  // redirects: 0 stops at the 302; 1 follows one of two; the default follows both.
  { method: "GET", path: "/redirect/302?to=/w/never", body: "none", params: { redirects: 0 } },
  { method: "GET", path: "/redirect/302?to=/redirect/302%3Fto%3D/w/never-two", body: "none", params: { redirects: 1 } },
  { method: "GET", path: "/redirect/302?to=/redirect/302%3Fto%3D/w/chain-end", body: "none" },
  // Each followed status from a POST with a body: 301/302/303 go on as a GET without it, 307/308 resend both.
  ...[301, 302, 303, 307, 308].map((code) => ({ method: "POST", path: `/redirect/${code}?to=/w/after-${code}`, body: "json" })),
  // A hop to another host drops Authorization (and the jar's cookies for the first).
  { method: "GET", path: "/redirect/302?to=CROSS/w/cross-after", body: "none", params: { headers: { Authorization: "Bearer t", "X-Keep": "1" } } },
  // A redirect's Set-Cookie goes into the VU's jar: the next hop carries it, and later requests.
  { method: "GET", path: "/cookies/set?sid=abc&to=/w/cookie-after", body: "none" },
  { method: "GET", path: "/w/cookie-later", body: "none" },
];

const SCRIPT = `
import http from "k6/http";
import { check } from "k6";

const ROWS = ${JSON.stringify(ROWS)};

// Sub-metrics, so that the summaries count the requests by status and by the URL of one hop.
const thresholds = { http_reqs: ["count>=0"], http_req_failed: ["rate>=0"] };
for (const status of ${JSON.stringify(STATUSES)}) thresholds["http_reqs{status:" + status + "}"] = ["count>=0"];
thresholds["http_reqs{name:" + __ENV.BASE_URL + "/w/after-301}"] = ["count>=0"];
export const options = { thresholds };
function bodyOf(kind) {
  if (kind === "string") return "hello wire é";
  if (kind === "object") return { b: "2", a: ["x", "y z"] };
  if (kind === "arraybuffer") return new Uint8Array([0, 1, 254, 255]).buffer;
  if (kind === "json") return JSON.stringify({ k: "v" });
  return undefined;
}

export default function () {
  const base = __ENV.BASE_URL;
  http.cookieJar().set(base, "jar", "j1");
  for (const row of ROWS) {
    const params = Object.assign({}, row.params || {});
    if (row.body === "json") params.headers = Object.assign({ "Content-Type": "application/json" }, params.headers || {});
    const url = base + row.path.replace("CROSS", __ENV.CROSS_URL);
    const res = http.request(row.method, url, bodyOf(row.body), params);
    // What res.request shows, keys sorted: the check's name must be the same under both tools.
    const shown = res.request;
    const headers = Object.keys(shown.headers).sort().map((k) => [k, shown.headers[k]]);
    const cookies = Object.keys(shown.cookies).sort().map((k) => [k, shown.cookies[k]]);
    check(res, { [row.path + " shows " + JSON.stringify([shown.method, headers, shown.body, cookies])]: () => true });
  }
}
`;

/** The echo target: records each request, answers 200 "ok", or a redirect, or sets cookies and redirects. */
function echoServer(seen: Seen[]): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks).toString("hex") });
      const url = new URL(req.url!, "http://echo");
      const to = url.searchParams.get("to");
      const code = /^\/redirect\/(\d{3})$/.exec(url.pathname)?.[1];
      if (code && to) res.writeHead(Number(code), { Location: to });
      else if (url.pathname === "/cookies/set" && to) {
        const cookies = [...url.searchParams].filter(([name]) => name !== "to").map(([name, value]) => `${name}=${value}; Path=/`);
        res.writeHead(302, { Location: to, "Set-Cookie": cookies });
      } else res.writeHead(200, { "Content-Type": "text/plain" });
      res.end("ok");
    });
  });
}

/**
 * Headers set aside by name, each a platform limit or edgeload's own:
 *  - x-edgeload-run: edgeload's, naming the run, second and step of each request so a target
 *    can count what arrived (core/run/protocol.ts RUN_HEADER).
 *  - cf-worker: Cloudflare adds it to every subrequest a Worker makes, naming the Worker's
 *    zone (wrangler dev emulates it); a Worker cannot leave it out.
 */
const IGNORED = new Set(["x-edgeload-run", "cf-worker"]);

/**
 * Lines a Worker's fetch writes where it decides, compared by value but not by place: workerd
 * writes Content-Length and Host first, then the other headers in name order, User-Agent
 * among them; Go writes Host, User-Agent and Content-Length first, then the others in name order.
 */
const PLACED_BY_PLATFORM = new Set(["host", "content-length", "user-agent"]);

/**
 * A shard's warm-up, edgeload's own: a HEAD of the target's origin before the run's first
 * second opens the connection (workers/shard/warm-up.ts). It carries no run header, as it is
 * in no metric; every request of the script does.
 */
const isWarmUp = (s: Seen) => s.method === "HEAD" && s.url === "/" && !s.rawHeaders.some((name) => name.toLowerCase() === "x-edgeload-run");

/** A request as compared: the placed lines by name, the rest in the order they arrived. */
function comparable(s: Seen) {
  const lines: Array<[string, string]> = [];
  for (let i = 0; i < s.rawHeaders.length; i += 2) lines.push([s.rawHeaders[i]!, s.rawHeaders[i + 1]!]);
  const kept = lines.filter(([name]) => !IGNORED.has(name.toLowerCase()));
  const placed = Object.fromEntries(kept.filter(([name]) => PLACED_BY_PLATFORM.has(name.toLowerCase())).map(([name, value]) => [name, value]));
  const ordered = kept.filter(([name]) => !PLACED_BY_PLATFORM.has(name.toLowerCase())).map(([name, value]) => `${name}: ${value}`);
  return { request: `${s.method} ${s.url}`, placed, ordered, body: s.body };
}

/**
 * A DELETE or OPTIONS without a body: workerd sends `Content-Length: 0`, Go sends none. The
 * one place a target can tell them apart that no script can change.
 */
function withoutPlatformContentLength(k6: ReturnType<typeof comparable>, edge: ReturnType<typeof comparable>) {
  const bodiless = /^(DELETE|OPTIONS) /.test(edge.request) && edge.body === "" && !("Content-Length" in k6.placed);
  if (!bodiless || edge.placed["Content-Length"] !== "0") return edge;
  const { "Content-Length": _zero, ...placed } = edge.placed;
  return { ...edge, placed };
}

const checkNames = (run: SideRun<Exported>) => Object.values(run.summary.root_group.checks).map((c) => `${c.name} ${c.passes}/${c.fails}`);

describeWithK6("k6's requests on the wire, beside k6", (k6) => {
  const fixture = useLocalStack("edgeload-k6-wire-");
  const seen: Seen[] = [];
  const server = echoServer(seen);
  let dir: string;
  let port: number;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "edgeload-k6-wire-"));
    await writeFile(join(dir, "wire.js"), SCRIPT);
    // Both loopback names reach it (IPv4 and IPv6): the cross-origin hop goes to localhost.
    await new Promise<void>((resolve) => server.listen({ port: 0, host: "::", ipv6Only: false }, resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("sends every row of the matrix as k6 does, and shows it in res.request as k6 does", async () => {
    const args = ["-e", `BASE_URL=http://127.0.0.1:${port}`, "-e", `CROSS_URL=http://localhost:${port}`];
    const script = join(dir, "wire.js");
    // One after the other: each run's requests are its own in the log.
    const k6Run = await runUnderK6<Exported>(k6, script, args, join(dir, "k6.json"));
    expect(k6Run.code, k6Run.output).toBe(0);
    const byK6 = seen.splice(0).map(comparable);
    const edgeRun = await runUnderEdgeload<Exported>(fixture, script, args, join(dir, "edge.json"));
    expect(edgeRun.code, edgeRun.output).toBe(0);
    const byEdge = seen
      .splice(0)
      .filter((s) => !isWarmUp(s))
      .map(comparable);

    // The matrix as k6 sent it, so a row that went missing on both sides still fails.
    const hopsK6Follows = 1 + 2 + 5 + 1 + 1; // redirects 1, the default chain, 301–308, the cross hop, the cookie hop
    expect(byK6).toHaveLength(ROWS.length + hopsK6Follows);
    expect(byK6.find((r) => r.request === "GET /w/cookie-after")?.ordered).toContain("Cookie: jar=j1; sid=abc");
    // Go names the hop's source in Referer and holds Authorization back from another host.
    expect(byK6.find((r) => r.request === "GET /w/cross-after")?.ordered).toEqual([
      `Referer: http://127.0.0.1:${port}/redirect/302?to=http://localhost:${port}/w/cross-after`,
      "X-Keep: 1",
    ]);
    expect(byK6.find((r) => r.request === "POST /w/after-307")?.body).toBe(Buffer.from('{"k":"v"}').toString("hex"));

    // Request by request, field by field.
    expect(byEdge.map((r) => r.request)).toEqual(byK6.map((r) => r.request));
    expect(byEdge.map((edge, i) => withoutPlatformContentLength(byK6[i]!, edge))).toEqual(byK6);
    expect(checkNames(edgeRun).sort()).toEqual(checkNames(k6Run).sort());

    // Counted as k6 counts them: one http_reqs per request the target saw, each redirect hop
    // with its own status and its own URL as its name.
    const counts = (run: SideRun<Exported>) => ({
      all: run.summary.metrics.http_reqs?.count,
      failed: run.summary.metrics.http_req_failed?.passes,
      byStatus: Object.fromEntries(STATUSES.map((status) => [status, run.summary.metrics[`http_reqs{status:${status}}`]?.count ?? 0])),
      afterThe301: run.summary.metrics[`http_reqs{name:http://127.0.0.1:${port}/w/after-301}`]?.count ?? 0,
    });
    expect(counts(k6Run)).toMatchObject({ all: byK6.length, failed: 0, byStatus: { 301: 1, 303: 1, 307: 1, 308: 1 }, afterThe301: 1 });
    expect(counts(edgeRun)).toEqual(counts(k6Run));
  });
});
