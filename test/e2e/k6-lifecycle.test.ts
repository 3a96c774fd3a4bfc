/**
 * The event loop and lifecycle as k6 has them (issue 53), each script run under real k6 and
 * under `edgeload run` against the same local target, side by side:
 *
 * - an iteration ends only once the `http.asyncRequest`s it did not await (and what their
 *   `.then`s and its timers start) have settled; one still in flight at the graceful stop is
 *   cut, its iteration interrupted and uncounted (k6-compat/runtime/event-loop.ts);
 * - `global` is the global object, in the init context too (k6-compat/runtime/script-global.ts);
 * - `exec.test.options` is k6's consolidated options, the `stages` shortcut derived into
 *   `scenarios.default`, as jslib's tagWithCurrentStageIndex reads it, and refused in the init
 *   context (k6-compat/test-options.ts);
 * - setup()'s and teardown()'s requests, checks and custom metrics count in the run: a failed
 *   check in setup() fails a `checks` threshold, and their checks sit in the `setup` and
 *   `teardown` groups (coordinator/run/phase-metrics.ts).
 */
import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, expect, it } from "vitest";
import { runUnderEdgeload, runUnderK6, type SideRun } from "./beside-k6.ts";
import { runCli } from "./cli-process.ts";
import { describeWithK6 } from "./k6.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

type Group = { checks: Record<string, { name: string; passes: number; fails: number }>; groups: Record<string, Group> };
type Exported = {
  metrics: Record<string, { count?: number; passes?: number; fails?: number; thresholds?: Record<string, boolean> }>;
  root_group: Group;
};

/** Requests not awaited, a .then that starts one, a timer that starts one; and one in flight at the graceful stop. */
const EVENT_LOOP = `
import http from "k6/http";
const B = __ENV.BASE_URL;
export const options = {
  scenarios: {
    pending: { executor: "per-vu-iterations", vus: 1, iterations: 2, exec: "pending" },
    cut: { executor: "constant-vus", vus: 1, duration: "1s", gracefulStop: "0s", exec: "cut" },
  },
};
export async function pending() {
  http.asyncRequest("GET", B + "/delay?ms=600");
  http.asyncRequest("GET", B + "/delay?ms=50").then(() => Promise.resolve()).then(() => http.asyncRequest("GET", B + "/then"));
  setTimeout(() => { http.asyncRequest("GET", B + "/timer"); }, 100);
  await http.asyncRequest("GET", B + "/awaited");
}
export function cut() {
  http.asyncRequest("GET", B + "/delay?ms=4000");
}
`;

/** What k6 v1.8.1 shows as exec.test.options.scenarios for the stages shortcut below. */
const STAGES_SCENARIOS =
  '{"default":{"executor":"ramping-vus","startTime":null,"gracefulStop":null,"env":null,"exec":null,"tags":null,"startVUs":null,"stages":[{"duration":"2s","target":1}],"gracefulRampDown":null}}';

const REALM = `
import http from "k6/http";
import { check, sleep } from "k6";
import exec from "k6/execution";
// Read in the init context, as jslibs built for Node read it.
const root = typeof self === "object" ? self : global;
export const options = { stages: [{ duration: "2s", target: 1 }] };
/** The stage running now, from the scenario's stages, as jslib's getCurrentStageIndex finds it. */
function currentStage() {
  const scenario = exec.test.options.scenarios[exec.scenario.name];
  if (!scenario || !scenario.stages) throw new Error("no stages for scenario " + exec.scenario.name);
  return scenario.stages.length - 1;
}
export default function () {
  check(null, {
    "global is the global object": () => root === globalThis && global.JSON === JSON,
    "exec.test.options.scenarios as k6 derives them": () => JSON.stringify(exec.test.options.scenarios) === ${JSON.stringify(STAGES_SCENARIOS)},
    "the shortcut itself is gone": () => exec.test.options.stages === undefined,
    "the options are frozen": () => Object.isFrozen(exec.test.options.scenarios.default),
    "the stage index": () => currentStage() === 0,
  });
  http.get(__ENV.BASE_URL + "/healthz");
  sleep(0.5);
}
`;

const INIT_OPTIONS = 'import exec from "k6/execution";\nconst o = exec.test.options;\nexport default function () {}\n';

/** setup() and teardown() each fail a check; every check and request of theirs counts. */
const PHASES = `
import http from "k6/http";
import { check, group } from "k6";
import { Counter } from "k6/metrics";
const seeded = new Counter("seeded");
const B = __ENV.BASE_URL;
export const options = { iterations: 2, thresholds: { checks: ["rate==1"], "http_reqs{group:::setup}": ["count==1"] } };
export function setup() {
  check(http.get(B + "/login?status=404"), { "setup logs in": (r) => r.status === 200 });
  seeded.add(3);
  group("seed", () => { check(1, { "seeded in a group": () => true }); });
  return { n: 1 };
}
export default function () {
  check(http.get(B + "/healthz"), { "iteration ok": (r) => r.status === 200 });
}
export function teardown() {
  check(http.get(B + "/logout?status=500"), { "teardown logs out": (r) => r.status === 200 });
}
`;

/** Every check as path → passes/fails, through the groups. */
function checksOf(group: Group, into: Record<string, string> = {}): Record<string, string> {
  for (const c of Object.values(group.checks)) into[c.name] = `${c.passes}/${c.fails}`;
  for (const [name, inner] of Object.entries(group.groups)) {
    const nested = checksOf(inner);
    for (const [k, v] of Object.entries(nested)) into[`${name}::${k}`] = v;
  }
  return into;
}

const count = (run: SideRun<Exported>, metric: string) => run.summary.metrics[metric]?.count ?? 0;

describeWithK6("the event loop and lifecycle, beside k6", (k6) => {
  const fixture = useLocalStack("edgeload-k6-lifecycle-");
  let dir: string;
  let args: string[];
  const both = (name: string) =>
    Promise.all([
      runUnderK6<Exported>(k6, join(dir, name), args, join(dir, `${name}.k6.json`)),
      runUnderEdgeload<Exported>(fixture, join(dir, name), args, join(dir, `${name}.edge.json`)),
    ]);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "edgeload-k6-lifecycle-"));
    args = ["-e", `BASE_URL=${fixture.stack.targetUrl}`];
    await Promise.all(
      Object.entries({ "event-loop.js": EVENT_LOOP, "realm.js": REALM, "init-options.js": INIT_OPTIONS, "phases.js": PHASES }).map(([name, text]) =>
        writeFile(join(dir, name), text),
      ),
    );
  });

  it("ends an iteration once its pending requests and timers are done, and cuts one in flight at the graceful stop", async () => {
    const [k6Run, edge] = await both("event-loop.js");
    expect(k6Run.code, k6Run.output).toBe(0);
    expect(edge.code, edge.output).toBe(0);
    // Five requests in each of the two `pending` iterations; the `cut` one is neither counted nor its request.
    expect(count(k6Run, "http_reqs")).toBe(10);
    expect(count(edge, "http_reqs")).toBe(count(k6Run, "http_reqs"));
    expect(count(k6Run, "iterations")).toBe(2);
    expect(count(edge, "iterations")).toBe(count(k6Run, "iterations"));
  });

  /** A run that dies in its init context writes no summary: its exit code and output. */
  const initFailure = (name: string) =>
    Promise.all([
      promisify(execFile)(k6, ["run", "--quiet", ...args, join(dir, name)], { env: { ...process.env, K6_NO_USAGE_REPORT: "true" } }).then(
        () => ({ code: 0 }),
        (error: { code?: number }) => ({ code: error.code }),
      ),
      runCli(["run", join(dir, name), ...args], { EDGELOAD_URL: fixture.stack.apiUrl, EDGELOAD_TOKEN: fixture.stack.token }).then((r) => ({
        code: r.code,
        output: r.stdout + r.stderr,
      })),
    ]);

  it("has global, and exec.test.options as k6 derives it from stages; refuses the options in the init context", async () => {
    const [[k6Run, edge], [k6Init, edgeInit]] = await Promise.all([both("realm.js"), initFailure("init-options.js")]);
    expect(k6Run.code, k6Run.output).toBe(0);
    expect(edge.code, edge.output).toBe(0);
    expect(k6Run.summary.metrics.checks?.fails).toBe(0);
    expect(edge.summary.metrics.checks?.fails, edge.output).toBe(0);
    expect(Object.keys(checksOf(edge.summary.root_group)).sort()).toEqual(Object.keys(checksOf(k6Run.summary.root_group)).sort());
    // k6: a script exception in the init context (107), naming why.
    expect(k6Init.code).toBe(107);
    expect(edgeInit.code, edgeInit.output).toBe(107);
    expect(edgeInit.output).toMatch(/getting test options in the init context is not supported/);
  });

  it("counts setup()'s and teardown()'s requests, checks and metrics, and fails the checks threshold on setup's", async () => {
    const [k6Run, edge] = await both("phases.js");
    expect(k6Run.code).toBe(99);
    expect(edge.code, edge.output).toBe(k6Run.code);
    const verdicts = (run: SideRun<Exported>) => [run.summary.metrics.checks?.thresholds, run.summary.metrics["http_reqs{group:::setup}"]?.thresholds];
    expect(verdicts(k6Run)).toEqual([{ "rate==1": true }, { "count==1": false }]);
    expect(verdicts(edge)).toEqual(verdicts(k6Run));
    expect(checksOf(k6Run.summary.root_group)).toEqual({
      "iteration ok": "2/0",
      "setup::setup logs in": "0/1",
      "setup::seed::seeded in a group": "1/0",
      "teardown::teardown logs out": "0/1",
    });
    expect(checksOf(edge.summary.root_group)).toEqual(checksOf(k6Run.summary.root_group));
    for (const metric of ["http_reqs", "iterations", "seeded", "http_reqs{group:::setup}"]) expect(count(edge, metric), metric).toBe(count(k6Run, metric));
    expect(count(k6Run, "http_reqs")).toBe(4);
  });
});
