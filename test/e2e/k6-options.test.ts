/**
 * k6 options that change how a script's iterations behave, run under real k6 and under
 * `edgeload run` against the same local target, side by side (issue 47): k6's 60 s default
 * request timeout, a request's own `timeout`, `throw` (a request with no response throws;
 * `params.throw` overrides it), `noCookiesReset` (the VU's jar outlives its iteration) and
 * `minIterationDuration` (a short iteration's VU waits out the rest). `insecureSkipTLSVerify`
 * cannot be honoured by a Worker and is refused before any load, exit 104. Thresholds on a
 * Gauge read its last value, on vus_max the VUs the plan initialises.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { runUnderEdgeload, runUnderK6, type SideRun } from "./beside-k6.ts";
import { runCli } from "./cli-process.ts";
import { describeWithK6 } from "./k6.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

type Exported = {
  metrics: Record<string, { count?: number; passes?: number; fails?: number; value?: number; thresholds?: Record<string, boolean> }>;
  root_group: { checks: Record<string, { name: string; passes: number; fails: number }> };
};

/** Every check of the script passes under k6; each names the behaviour it pins. */
const SCRIPT = `
import http from "k6/http";
import { check } from "k6";
import exec from "k6/execution";
import { Counter, Gauge } from "k6/metrics";

const pacedCount = new Counter("paced_iterations");
const depth = new Gauge("depth");
const pastRefused = new Counter("past_refused_request");

export const options = {
  throw: true,
  noCookiesReset: true,
  minIterationDuration: "1s",
  // A gauge's threshold reads its last value (3, the third paced iteration's): one holds, one
  // fails (exit 99). vus_max: the 4 scenarios' VUs.
  thresholds: { depth: ["value==3", "value<3"], vus_max: ["value==4"] },
  scenarios: {
    timeouts: { executor: "per-vu-iterations", vus: 1, iterations: 1, exec: "timeouts" },
    refused: { executor: "per-vu-iterations", vus: 1, iterations: 2, exec: "refused" },
    cookies: { executor: "per-vu-iterations", vus: 1, iterations: 2, exec: "cookies" },
    // 2.5 s: paced iterations start at 0, 1 and 2 s; at "3s" a fourth one's start at 3.0 s
    // raced the scenario's end, and k6 itself sometimes ran it.
    paced: { executor: "constant-vus", vus: 1, duration: "2.5s", exec: "paced" },
  },
};

export function timeouts() {
  const cut = http.get(__ENV.BASE_URL + "/delay?ms=3000", { timeout: "500ms", throw: false });
  check(cut, {
    "params.timeout cuts the request: status 0": (r) => r.status === 0,
    "params.timeout cuts the request: error_code 1050": (r) => r.error_code === 1050,
  });
  let thrown = "";
  try {
    http.get(__ENV.BASE_URL + "/delay?ms=3000", { timeout: 300 });
  } catch (e) {
    thrown = String(e);
  }
  check(thrown, { "throw: a timed-out request throws": (t) => t.includes("request timeout") });
  // Longer than edgeload's old 10 s default, well within k6's 60 s.
  const slow = http.get(__ENV.BASE_URL + "/delay?ms=11000");
  check(slow, { "the default timeout is k6's 60 s": (r) => r.status === 200 });
}

export function refused() {
  http.get("http://127.0.0.1:1/");
  pastRefused.add(1);
}

export function cookies() {
  const jar = http.cookieJar();
  if (exec.vu.iterationInScenario === 0) jar.set(__ENV.BASE_URL, "kept", "yes");
  else check(jar.cookiesForURL(__ENV.BASE_URL), { "noCookiesReset keeps the jar": (c) => (c.kept || [])[0] === "yes" });
}

export function paced() {
  http.get(__ENV.BASE_URL + "/delay?ms=5");
  pacedCount.add(1);
  depth.add(exec.vu.iterationInScenario + 1);
}
`;

describeWithK6("k6 options that change behaviour, beside k6", (k6) => {
  const fixture = useLocalStack("edgeload-k6-options-");
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "edgeload-k6-options-"));
    await writeFile(join(dir, "options.js"), SCRIPT);
    await writeFile(
      join(dir, "insecure.js"),
      'import http from "k6/http";\nexport const options = { insecureSkipTLSVerify: true };\nexport default function () { http.get(__ENV.BASE_URL); }\n',
    );
  });

  it("times out, throws, keeps cookies, paces iterations and judges gauge thresholds as k6 does", async () => {
    const args = ["-e", `BASE_URL=${fixture.stack.targetUrl}`];
    const script = join(dir, "options.js");
    // Side by side: each run lasts the 11 s request; neither loads the target much.
    const [k6Run, edge] = await Promise.all([
      runUnderK6<Exported>(k6, script, args, join(dir, "k6.json")),
      runUnderEdgeload<Exported>(fixture, script, args, join(dir, "edge.json")),
    ]);
    expect(k6Run.code, k6Run.output).toBe(99);
    expect(edge.code, edge.output).toBe(k6Run.code);
    const verdicts = (run: SideRun<Exported>, metric: string) => run.summary.metrics[metric]?.thresholds;
    expect(verdicts(k6Run, "depth")).toEqual({ "value==3": false, "value<3": true });
    expect(verdicts(edge, "depth")).toEqual(verdicts(k6Run, "depth"));
    expect(verdicts(edge, "vus_max")).toEqual(verdicts(k6Run, "vus_max"));
    const checks = (run: SideRun<Exported>) =>
      Object.fromEntries(Object.values(run.summary.root_group.checks).map((c) => [c.name, { passes: c.passes, fails: c.fails }]));
    expect(checks(k6Run)).toEqual({
      "params.timeout cuts the request: status 0": { passes: 1, fails: 0 },
      "params.timeout cuts the request: error_code 1050": { passes: 1, fails: 0 },
      "throw: a timed-out request throws": { passes: 1, fails: 0 },
      "the default timeout is k6's 60 s": { passes: 1, fails: 0 },
      "noCookiesReset keeps the jar": { passes: 1, fails: 0 },
    });
    expect(checks(edge)).toEqual(checks(k6Run));
    const count = (run: SideRun<Exported>, metric: string) => run.summary.metrics[metric]?.count ?? 0;
    // minIterationDuration 1s: 3 iterations of one VU in 2.5 s (back to back, hundreds).
    expect(count(k6Run, "paced_iterations")).toBe(3);
    expect(count(edge, "paced_iterations")).toBe(3);
    // throw: the refused connection ended both iterations there, each still counted, its request too.
    expect(count(edge, "past_refused_request")).toBe(count(k6Run, "past_refused_request"));
    expect(count(k6Run, "past_refused_request")).toBe(0);
    expect(edge.output).toMatch(/Get "http:\/\/127\.0\.0\.1:1\/": connection error/);
    expect(count(edge, "http_reqs")).toBe(count(k6Run, "http_reqs"));
    expect(count(edge, "iterations")).toBe(count(k6Run, "iterations"));
  });

  it("refuses insecureSkipTLSVerify: true before any load, saying why and what to do", async () => {
    const r = await runCli(["run", join(dir, "insecure.js"), "-e", `BASE_URL=${fixture.stack.targetUrl}`], {
      EDGELOAD_URL: fixture.stack.apiUrl,
      EDGELOAD_TOKEN: fixture.stack.token,
    });
    expect(r.code, r.stdout + r.stderr).toBe(104);
    expect(r.stderr).toMatch(/options.insecureSkipTLSVerify: a Worker's fetch\(\) always verifies the target's TLS certificate/);
    expect(r.stderr).toMatch(/run this script under k6/);
  });
});
