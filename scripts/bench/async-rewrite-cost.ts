/**
 * What the async rewrite (k6-compat/async-transform.ts) costs an iteration: scripts bundled
 * and rewritten as `edgeload run` does, their default function run over the compat layer's
 * real k6 modules and a host that answers at once (no RPC, no network: what is left is the
 * script's JavaScript and its awaits), side by side with the same script written async by
 * hand with the fewest awaits it needs. Two scripts:
 *
 *  (a) the script bench's own (k6-constant-rate.js: one GET): today's colouring already
 *      rewrote it this way, so rewritten and by hand must cost the same;
 *  (b) one made of helpers — a class, a factory returning functions, a group, a forEach over
 *      the pages — which only the points-to rewrite gets right: the price of its awaits and
 *      of running forEach's callbacks in order through its helper.
 *
 *   node scripts/bench/async-rewrite-cost.ts [--iterations 20000] [--rounds 7]
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import vm from "node:vm";
import { bundleScript } from "../../k6-compat/bundle.ts";
import { CookieJar } from "../../k6-compat/runtime/cookie-jar.ts";
import { createVuModules, sequence } from "../../k6-compat/runtime/vu-modules.ts";
import type { IterationHost } from "../../k6-compat/runtime/wire.ts";
import { markdownTable } from "./markdown-table.ts";

const HELPERS = `import http from "k6/http";
import { check, group } from "k6";
class Client {
  constructor(base) { this.base = base; }
  get(path) { return http.get(this.base + path); }
  post(path, body) { return http.post(this.base + path, body); }
}
function createApi(client) {
  const login = (user) => client.post("/login", JSON.stringify({ user })).json();
  const page = (n) => client.get("/page/" + n);
  return { login, page };
}
const api = createApi(new Client(__ENV.TARGET_URL));
export default function () {
  const session = api.login("alice");
  group("pages", () => {
    [1, 2, 3].forEach((n) => check(api.page(n), { ok: (r) => r.status === 200 }));
  });
  return session;
}
`;

const HELPERS_BY_HAND = `import http from "k6/http";
import { check, group } from "k6";
class Client {
  constructor(base) { this.base = base; }
  get(path) { return http.get(this.base + path); }
  post(path, body) { return http.post(this.base + path, body); }
}
function createApi(client) {
  const login = async (user) => (await client.post("/login", JSON.stringify({ user }))).json();
  const page = (n) => client.get("/page/" + n);
  return { login, page };
}
const api = createApi(new Client(__ENV.TARGET_URL));
export default async function () {
  const session = await api.login("alice");
  await group("pages", async () => {
    for (const n of [1, 2, 3]) check(await api.page(n), { ok: (r) => r.status === 200 });
  });
  return session;
}
`;

const VARIANTS = {
  "(a) one GET, rewritten": 'import http from "k6/http";\nexport default function () {\n  http.get(__ENV.TARGET_URL);\n}\n',
  "(a) one GET, by hand": 'import http from "k6/http";\nexport default async function () {\n  await http.get(__ENV.TARGET_URL);\n}\n',
  "(b) helpers, rewritten": HELPERS,
  "(b) helpers, by hand": HELPERS_BY_HAND,
} as const;

type Variant = keyof typeof VARIANTS;

interface Prepared {
  readonly run: () => Promise<unknown>;
  readonly requests: () => number;
  readonly awaits: number;
}

async function prepare(dir: string, name: Variant): Promise<Prepared> {
  const path = join(dir, `${name.replace(/\W+/g, "-")}.js`);
  writeFileSync(path, VARIANTS[name]);
  const bundled = await bundleScript(path);
  if (!bundled.ok) throw new Error(`${name}: ${bundled.problems.join("; ")}`);
  let requests = 0;
  const response = { status: 200, error: null, headers: { "content-type": "application/json" }, setCookies: [], body: '{"token":"t"}', durationMs: 1 };
  const unused = () => Promise.reject(new Error("no sockets in this bench"));
  const host: IterationHost = {
    send: () => {
      requests++;
      return Promise.resolve(response);
    },
    sleep: () => Promise.resolve(),
    socketSession: unused,
    socketSend: unused,
    socketClose: unused,
  };
  const context = {
    id: 1,
    iteration: 0,
    iterationInTest: 0,
    scenario: { name: "bench", executor: "constant-vus", startTimeMs: 0 },
    samples: [] as unknown[],
    host,
    jar: new CookieJar(),
    shared: new Map(),
  };
  const modules = createVuModules(context as Parameters<typeof createVuModules>[0]);
  const factory = vm.runInNewContext(bundled.factory, { URL, TextEncoder, TextDecoder });
  const vu = factory(modules, { TARGET_URL: "http://127.0.0.1:9/x" }, 1, () => "", sequence) as { exports: { default: () => unknown } };
  return {
    run: async () => {
      // Samples leave with each request in a shard; here they would only pile up.
      context.samples.length = 0;
      return vu.exports.default();
    },
    requests: () => requests,
    awaits: (bundled.factory.match(/\(await |\bawait /g) ?? []).length,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function asyncRewriteBench(iterations: number, rounds: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "edgeload-async-rewrite-bench-"));
  const names = Object.keys(VARIANTS) as Variant[];
  const prepared = new Map<Variant, Prepared>();
  for (const name of names) prepared.set(name, await prepare(dir, name));
  const nsPerIteration = new Map<Variant, number[]>(names.map((n) => [n, []]));
  // Warm every variant, then interleave them round by round so drift hits all alike.
  for (const p of prepared.values()) for (let i = 0; i < iterations / 4; i++) await p.run();
  for (let round = 0; round < rounds; round++) {
    for (const name of names) {
      const p = prepared.get(name)!;
      const started = process.hrtime.bigint();
      for (let i = 0; i < iterations; i++) await p.run();
      nsPerIteration.get(name)!.push(Number(process.hrtime.bigint() - started) / iterations);
    }
  }
  console.log(`\n## async rewrite: ${iterations} iterations × ${rounds} rounds per script, median µs an iteration (host answers at once)\n`);
  const rows = names.map((name) => {
    const p = prepared.get(name)!;
    const requestsEach = p.requests() / (iterations * (rounds + 0.25));
    return [name, requestsEach.toFixed(0), String(p.awaits), (median(nsPerIteration.get(name)!) / 1000).toFixed(2)];
  });
  const ratio = (rewritten: Variant, byHand: Variant) => (median(nsPerIteration.get(rewritten)!) / median(nsPerIteration.get(byHand)!)).toFixed(2);
  console.log(markdownTable(["script", "requests/iteration", "awaits in the bundle", "µs/iteration"], rows));
  console.log(
    `\nrewritten ÷ by hand: (a) ×${ratio("(a) one GET, rewritten", "(a) one GET, by hand")}, (b) ×${ratio("(b) helpers, rewritten", "(b) helpers, by hand")}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { iterations: { type: "string", default: "20000" }, rounds: { type: "string", default: "7" } } });
  await asyncRewriteBench(Number(values.iterations), Number(values.rounds));
}
