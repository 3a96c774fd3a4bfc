/**
 * Issue 53's scripts, run under real k6 and under `edgeload run` against the same local
 * target: functions that make requests reached through a returned object, a factory's
 * method and a client built around the token a login returns. Before the async rewrite
 * followed them (k6-compat/async-transform-flow.ts), edgeload's calls returned promises:
 * `r.status` was undefined, the checks failed and no request was sent, while k6 passed.
 * Each script's checks, requests and exit code must be k6's.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { runUnderEdgeload, runUnderK6 } from "./beside-k6.ts";
import { describeWithK6 } from "./k6.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

type Exported = { metrics: Record<string, { count?: number; passes?: number; fails?: number }> };

const ITERATIONS = 3;
const OPTIONS = `export const options = { vus: 1, iterations: ${ITERATIONS}, thresholds: { checks: ["rate==1"] } };`;

const SCRIPTS = {
  // The first snippet, as reported: one check, one request an iteration.
  "api-get.js": {
    requestsPerIteration: 1,
    checksPerIteration: 1,
    source: `import http from "k6/http";
import { check } from "k6";
${OPTIONS}
const api = (b) => { const get = function () { return http.get(b + '/get'); }; return { get }; };
export default function () { check(api(__ENV.BASE_URL).get(), { s: (r) => r.status === 200 }); }
`,
  },
  // The second: a factory returning { login }, its response's json read.
  "auth-login.js": {
    requestsPerIteration: 1,
    checksPerIteration: 1,
    source: `import http from "k6/http";
import { check } from "k6";
${OPTIONS}
function createAuth(base) {
  function login(user, password) {
    return http.post(base + "/session/login", JSON.stringify({ user, password }), { headers: { "Content-Type": "application/json" } });
  }
  return { login };
}
const auth = createAuth(__ENV.BASE_URL);
export default function () {
  const r = auth.login("alice", "secret");
  check(r.json(), { "login answered": (body) => body.ok === true && body.path === "/session/login" });
}
`,
  },
  // A client made from a login's answer (the login taken out of its object under another
  // name), its pages fetched in a group, one after another.
  "factory-login.js": {
    requestsPerIteration: 4,
    checksPerIteration: 2,
    source: `import http from "k6/http";
import { check, group, sleep } from "k6";
${OPTIONS}
class Session {
  constructor(base, token) { this.base = base; this.token = token; }
  get(path) { return http.get(this.base + path, { headers: { Authorization: "Bearer " + this.token } }); }
}
const factory = {
  login(base) {
    const answer = http.post(base + "/session/login", "{}").json();
    return new Session(base, String(answer.n));
  },
};
const { login: signIn } = factory;
export default function () {
  const session = signIn(__ENV.BASE_URL);
  const statuses = [];
  group("pages", () => {
    ["/page/1", "/page/2", "/page/3"].forEach((p) => statuses.push(session.get(p).status));
  });
  check(statuses, { "three pages": (s) => s.length === 3 && s.every((x) => x === 200) });
  check(session, { "a token": (s) => s.token.length > 0 });
  sleep(0.1);
}
`,
  },
} as const;

describeWithK6("issue 53's scripts, beside k6", (k6) => {
  const fixture = useLocalStack("edgeload-async-rewrite-");
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "edgeload-async-rewrite-"));
    for (const [name, { source }] of Object.entries(SCRIPTS)) await writeFile(join(dir, name), source);
  });

  it.each(Object.entries(SCRIPTS))("%s: k6's checks, requests and exit code", async (name, expected) => {
    const args = ["-e", `BASE_URL=${fixture.stack.targetUrl}`];
    const script = join(dir, name);
    const k6Run = await runUnderK6<Exported>(k6, script, args, join(dir, `${name}.k6.json`));
    const edge = await runUnderEdgeload<Exported>(fixture, script, args, join(dir, `${name}.edge.json`));
    const seen = (s: Exported) => ({
      requests: s.metrics.http_reqs?.count,
      passes: s.metrics.checks?.passes,
      fails: s.metrics.checks?.fails,
    });
    const everyCheckPasses = { requests: expected.requestsPerIteration * ITERATIONS, passes: expected.checksPerIteration * ITERATIONS, fails: 0 };
    expect(k6Run.code, k6Run.output).toBe(0);
    expect(seen(k6Run.summary)).toEqual(everyCheckPasses);
    expect(edge.code, edge.output).toBe(k6Run.code);
    expect(seen(edge.summary)).toEqual(seen(k6Run.summary));
  });
});
