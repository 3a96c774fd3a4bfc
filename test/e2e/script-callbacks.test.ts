/**
 * Callbacks that make requests run as k6 runs them: k6chaijs's `describe(name, fn)` (the
 * jslib bundle, served offline from test/fixtures/k6chaijs with --modules-dir, see its
 * SOURCE.md) and a script's own function that calls the callback it is given — run under
 * real k6 and under `edgeload run` against the same local target. Before the async rewrite
 * followed callbacks into the functions they are passed to, this script was refused
 * ("a callback that makes requests or sleeps, passed to a call").
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { runUnderEdgeload, runUnderK6 } from "./beside-k6.ts";
import { describeWithK6 } from "./k6.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

type Exported = { metrics: Record<string, { count?: number; passes?: number; fails?: number }> };

const MODULES_DIR = resolve("test/fixtures/k6chaijs");
const CHAI_URL = "https://jslib.k6.io/k6chaijs/4.5.0.1/index.js";
const ITERATIONS = 3;

/** Per iteration: a passing describe, a failing one, and two requests through `twice`. */
const script = (chai: string) => `
import http from "k6/http";
import { check } from "k6";
import { describe, expect } from "${chai}";

export const options = { vus: 1, iterations: ${ITERATIONS}, thresholds: { checks: ["rate>0.9"] } };

/** The script's own function taking a callback that makes requests. */
function twice(fn) {
  fn();
  return fn();
}

export default function () {
  describe("delay answers", () => {
    const res = http.get(__ENV.BASE_URL + "/delay?ms=5");
    expect(res.status, "delay status").to.equal(200);
  });
  describe("a page answering 404", () => {
    const res = http.get(__ENV.BASE_URL + "/missing?status=404");
    expect(res.status, "missing page status").to.equal(200);
  });
  const last = twice(() => http.get(__ENV.BASE_URL + "/delay?ms=5"));
  check(last, { "twice's last is 200": (r) => r.status === 200 });
}
`;

describeWithK6("callbacks that make requests, beside k6", (k6) => {
  const fixture = useLocalStack("edgeload-script-callbacks-");
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "edgeload-script-callbacks-"));
    // k6 imports only file and https URLs: its copy imports the same bytes from the file.
    await writeFile(join(dir, "k6.js"), script(join(MODULES_DIR, "jslib.k6.io/k6chaijs/4.5.0.1/index.js")));
    await writeFile(join(dir, "edge.js"), script(CHAI_URL));
  });

  it("runs k6chaijs's describe and a script's own callback-taking function with k6's checks, requests and exit code", async () => {
    const base = ["-e", `BASE_URL=${fixture.stack.targetUrl}`];
    const k6Run = await runUnderK6<Exported>(k6, join(dir, "k6.js"), base, join(dir, "k6.json"));
    const edge = await runUnderEdgeload<Exported>(fixture, join(dir, "edge.js"), ["--modules-dir", MODULES_DIR, ...base], join(dir, "edge.json"));
    // One check of three fails in every iteration: the checks threshold fails, exit 99.
    expect(k6Run.code).toBe(99);
    expect(edge.code, edge.output).toBe(k6Run.code);
    const checks = (s: Exported) => ({ passes: s.metrics.checks?.passes, fails: s.metrics.checks?.fails });
    expect(checks(k6Run.summary)).toEqual({ passes: 2 * ITERATIONS, fails: ITERATIONS });
    expect(checks(edge.summary)).toEqual(checks(k6Run.summary));
    // Every callback ran, in order, awaited: four requests an iteration.
    expect(k6Run.summary.metrics.http_reqs?.count).toBe(4 * ITERATIONS);
    expect(edge.summary.metrics.http_reqs?.count).toBe(k6Run.summary.metrics.http_reqs?.count);
  });
});
