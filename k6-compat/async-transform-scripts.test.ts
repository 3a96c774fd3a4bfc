/**
 * Whole scripts through the async rewrite (async-transform.ts), as `edgeload run` prepares
 * them: bundled with their modules (bundle.ts), rewritten, and run in a VM over the compat
 * layer's real k6 modules (runtime/vu-modules.ts) and a host that answers every request with
 * JSON naming its path. Helpers the script imports — its own ES modules, a CommonJS module
 * that requires k6/http as a jslib bundle does, k6chaijs itself — must make their requests
 * awaited, so that checks see responses and every request is sent. test/e2e/async-rewrite.test.ts
 * runs the scripts beside real k6.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { noSockets } from "../test/support/no-sockets.ts";
import { vuContext } from "../test/support/vu-context.ts";
import { bundleScript } from "./bundle.ts";
import { RemoteModules } from "./remote-modules.ts";
import { createVuModules, sequence } from "./runtime/vu-modules.ts";
import type { IterationHost, Sample } from "./runtime/wire.ts";

const dir = mkdtempSync(join(tmpdir(), "k6-async-rewrite-"));
const write = (files: Record<string, string>) => {
  for (const [name, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), source);
  }
  return join(dir, Object.keys(files)[0]!);
};
/** k6chaijs as jslib serves it, read from the fixture (test/fixtures/k6chaijs/SOURCE.md). */
const CHAI_URL = "https://jslib.k6.io/k6chaijs/4.5.0.1/index.js";
const offline = () => new RemoteModules({ cacheDir: join(dir, "cache"), modulesDir: resolve("test/fixtures/k6chaijs"), lockFile: null });

/** One iteration of the script's default function: its requests (in order) and its checks. */
async function iterate(path: string, remote: RemoteModules | null = null) {
  const bundled = await bundleScript(path, remote);
  if (!bundled.ok) throw new Error(bundled.problems.join("\n"));
  const requests: string[] = [];
  const samples: Sample[] = [];
  const host: IterationHost = {
    async send(sent, request) {
      samples.push(...sent);
      requests.push(`${request.method} ${new URL(request.url).pathname}`);
      await new Promise((r) => setTimeout(r, 1));
      const body = JSON.stringify({ path: new URL(request.url).pathname, token: "t-1" });
      return { status: 200, error: null, headers: { "content-type": "application/json" }, setCookies: [], body, durationMs: 1 };
    },
    async sleep(sent) {
      samples.push(...sent);
    },
    ...noSockets,
  };
  const context = vuContext(host);
  const modules = createVuModules(context);
  const factory = vm.runInNewContext(bundled.factory, { URL, TextEncoder, TextDecoder });
  const vu = factory(modules, { BASE_URL: "http://target" }, 1, () => "", sequence) as { exports: { default: () => unknown } };
  await vu.exports.default();
  samples.push(...context.samples);
  const checks = samples.filter((s) => s.type === "check").map((s) => `${s.name}: ${s.type === "check" && s.passed}`);
  return { requests, checks };
}

describe("scripts through the async rewrite, over the compat layer's k6", () => {
  it("issue 53: a helper's function returned in an object, called and checked", async () => {
    const path = write({
      "factory.js": `import http from "k6/http";
import { check } from "k6";
const api = (b) => { const get = function () { return http.get(b + '/get'); }; return { get }; };
export default function () { check(api(__ENV.BASE_URL).get(), { s: (r) => r.status === 200 }); }
`,
    });
    expect(await iterate(path)).toEqual({ requests: ["GET /get"], checks: ["s: true"] });
  });

  it("issue 53: a factory's login that posts, its json read", async () => {
    const path = write({
      "login.js": `import http from "k6/http";
import { check } from "k6";
function makeAuth(base) {
  return { login(user, password) { return http.post(base + "/session/login", JSON.stringify({ user, password })); } };
}
const auth = makeAuth(__ENV.BASE_URL);
export default function () {
  const r = auth.login("alice", "secret");
  check(r.json(), { "logged in": (body) => body.path === "/session/login" && body.token === "t-1" });
}
`,
    });
    expect(await iterate(path)).toEqual({ requests: ["POST /session/login"], checks: ["logged in: true"] });
  });

  it("a default export calling a function of the script's own module", async () => {
    const path = write({
      "uses-module.js": `import { check } from "k6";
import { fetchAll, Client } from "./lib/requests.js";
export default function () {
  const pages = fetchAll(__ENV.BASE_URL, ["/a", "/b"]);
  const c = new Client(__ENV.BASE_URL);
  check(pages, { "both pages": (p) => p.length === 2 && p.every((r) => r.status === 200) });
  check(c.page("/c"), { "client page": (r) => r.json().path === "/c" });
}
`,
      "lib/requests.js": `import http from "k6/http";
export function fetchAll(base, paths) { return paths.map((p) => http.get(base + p)); }
export class Client {
  constructor(base) { this.base = base; }
  page(p) { return http.get(this.base + p); }
}
`,
    });
    expect(await iterate(path)).toEqual({ requests: ["GET /a", "GET /b", "GET /c"], checks: ["both pages: true", "client page: true"] });
  });

  it("a CommonJS helper that requires k6/http, as a jslib bundle does", async () => {
    const path = write({
      "uses-cjs.js": `import { check } from "k6";
import client from "./vendor/client.js";
export default function () {
  check(client.getJson(__ENV.BASE_URL + "/cjs"), { "json through require": (j) => j.path === "/cjs" });
}
`,
      "vendor/client.js": `var http = require("k6/http");
function getJson(url) { return http.get(url).json(); }
module.exports = { getJson: getJson };
`,
    });
    expect(await iterate(path)).toEqual({ requests: ["GET /cjs"], checks: ["json through require: true"] });
  });

  it("a CommonJS module that replaces k6/http's get for every importer, as the http-instrumentation jslibs do", async () => {
    const path = write({
      "instrumented.js": `import http from "k6/http";
import { check } from "k6";
import tracing from "./vendor/tracing.js";
tracing.instrumentHTTP();
export default function () {
  check(http.get(__ENV.BASE_URL + "/traced"), { "through the replaced get": (r) => r.json().path === "/traced/client-1" });
}
`,
      "vendor/tracing.js": `const http = require("k6/http");
const request = http.request;
let traced = 0;
class Client {
  request(method, url, ...args) {
    traced++;
    try { return request(method, url + "/client-" + traced, ...args); } finally { traced += 0; }
  }
  get(url, ...args) { return this.request("GET", url, null, ...args); }
}
function instrumentHTTP() { const client = new Client(); http.get = client.get.bind(client); }
module.exports = { default: { instrumentHTTP }, __esModule: true, instrumentHTTP };
`,
    });
    // The script's http.get is the replaced one (the client names its request), as in k6.
    expect(await iterate(path)).toEqual({ requests: ["GET /traced/client-1"], checks: ["through the replaced get: true"] });
  });

  it("k6chaijs's describe and expect, the requests made in describe's callbacks", async () => {
    const path = write({
      "chai.js": `import http from "k6/http";
import { describe, expect } from "${CHAI_URL}";
const pages = [() => http.get(__ENV.BASE_URL + "/one"), () => http.get(__ENV.BASE_URL + "/two")];
export default function () {
  describe("pages", () => {
    for (const page of pages) expect(page().status, "status").to.equal(200);
  });
}
`,
    });
    const { requests, checks } = await iterate(path, offline());
    expect(requests).toEqual(["GET /one", "GET /two"]);
    expect(checks.every((c) => c.endsWith(": true"))).toBe(true);
    expect(checks.length).toBeGreaterThan(0);
  }, 30_000);
});
