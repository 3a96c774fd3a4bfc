/**
 * From a k6 script file to a run spec, in Node: bundling (refusals), the init context
 * (options, metrics, opened files) and the options' mapping, checked by parseRunSpec.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { parseRunSpec } from "../core/spec/run-spec.ts";
import { bundleScript } from "./bundle.ts";
import { evaluateInitContext } from "./init-context.ts";
import { specFromOptions } from "./options.ts";
import { CookieJar } from "./runtime/cookie-jar.ts";
import { createVuModules, sequence, type VuContext } from "./runtime/vu-modules.ts";

const dir = mkdtempSync(join(tmpdir(), "k6-compat-"));
function script(name: string, source: string): string {
  const path = join(dir, name);
  writeFileSync(path, source);
  return path;
}
const ctx = { name: "s.js", target: "http://127.0.0.1:9090", bundle: "a".repeat(64), env: {}, metrics: {}, exports: ["default", "admin"] };

describe("bundleScript", () => {
  it.each([
    ["k6/experimental/browser", /import of k6\/experimental\/browser: k6's experimental browser module.*import k6\/browser/],
    ["k6/x/kafka", /import of k6\/x\/kafka: xk6 extensions are Go code/],
    // Without the CLI's fetcher (k6-compat/remote-modules.ts) nothing can load it: refused, named.
    ["https://jslib.k6.io/k6-utils/1.4.0/index.js", /remote module https:\/\/jslib.k6.io.*fetched by the CLI/],
    ["k6/net/grpc", /gRPC/],
  ])("refuses %s before any load, naming it", async (module, message) => {
    const path = script(`refuse-${module.replace(/\W/g, "_")}.js`, `import x from "${module}";\nexport default function () { x; }\n`);
    const r = await bundleScript(path);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.join("\n")).toMatch(message);
  });

  it("reads options, metrics and opened files from the init context", async () => {
    writeFileSync(join(dir, "users.json"), JSON.stringify(["a", "b"]));
    const path = script(
      "init.js",
      `
      import http from "k6/http";
      import { Trend, Rate, Counter, Gauge } from "k6/metrics";
      import { SharedArray } from "k6/data";
      const users = new SharedArray("users", () => JSON.parse(open("./users.json")));
      new Trend("login_ms", true); new Rate("ok"); new Counter("n"); new Gauge("g"); new Gauge("g_ms", true);
      export const options = { vus: Number(__ENV.VUS), duration: "10s" };
      export default function () { http.get(__ENV.BASE_URL + "/" + users[0]); }
    `,
    );
    const bundled = await bundleScript(path);
    expect(bundled.ok).toBe(true);
    const init = evaluateInitContext((bundled as { factory: string }).factory, path, { VUS: "7", BASE_URL: "http://127.0.0.1:9090" });
    expect(init).toEqual({
      ok: true,
      init: {
        options: { vus: 7, duration: "10s" },
        metrics: { login_ms: "trend", ok: "rate", n: "counter", g: "gauge", g_ms: "gauge" },
        // k6 takes isTime for a Gauge too.
        timeTrends: ["login_ms", "g_ms"],
        exports: ["default"],
        files: { "users.json": { text: '["a","b"]' } },
      },
    });
  });

  it.each([
    ["thrown", "exec.test.abort('no data');"],
    ["caught", "try { exec.test.abort('no data'); } catch (e) {}"],
  ])("names exec.test.abort() in the init context (%s) as an abort, k6's exit 108, not an exception", async (_case, call) => {
    const path = script(`init-abort-${_case}.js`, `import exec from "k6/execution";\n${call}\nexport default function () {}\n`);
    const bundled = await bundleScript(path);
    expect(bundled.ok).toBe(true);
    const init = evaluateInitContext((bundled as { factory: string }).factory, path, {});
    expect(init).toEqual({ ok: false, aborted: true, problems: ["the script's init context called exec.test.abort(): no data"] });
  });

  it("gives k6/execution's named exports (vu, scenario, instance, test) as well as its default, read live at each iteration", async () => {
    const path = script(
      "execution.js",
      `
      import exec, { instance, scenario, test, vu } from "k6/execution";
      export default function () {
        return [vu.idInTest, vu.iterationInScenario, scenario.name, scenario.iterationInTest, exec.vu.idInTest, exec.scenario.iterationInTest, typeof instance, typeof test.abort];
      }
    `,
    );
    const bundled = await bundleScript(path);
    if (!bundled.ok) throw new Error(bundled.problems.join("; "));
    const context: VuContext = {
      id: 3,
      iteration: 0,
      iterationInTest: 0,
      scenario: { name: "browse", executor: "constant-vus", startTimeMs: 0 },
      samples: [],
      host: null,
      jar: new CookieJar(),
      shared: new Map(),
    };
    const instantiate = vm.runInContext(bundled.factory, vm.createContext({})) as (...args: unknown[]) => { exports: Record<string, () => unknown> };
    const { exports } = instantiate(createVuModules(context), {}, context.id, () => "", sequence);
    expect(exports.default!()).toEqual([3, 0, "browse", 0, 3, 0, "object", "function"]);
    // The runtime moves the VU's context on between iterations; the imported bindings follow.
    context.iteration = 1;
    context.iterationInTest = 7;
    expect(exports.default!()).toEqual([3, 1, "browse", 7, 3, 7, "object", "function"]);
  });

  it("stops on a request in the init context, like k6", async () => {
    const path = script("init-request.js", `import http from "k6/http";\nhttp.get("http://127.0.0.1:9090/");\nexport default function () {}\n`);
    const r = await bundleScript(path);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems[0]).toMatch(/get\(\) in the init context/);
  });
});

describe("specFromOptions", () => {
  const parsed = (options: Record<string, unknown>) => {
    const r = specFromOptions(options, ctx);
    if (!r.ok) throw new Error(r.problems.join("; "));
    const spec = parseRunSpec(r.spec);
    if (!spec.ok) throw new Error(JSON.stringify(spec.problems));
    return spec.spec;
  };

  it.each([
    // vus + duration is constant-vus.
    [{ vus: 5, duration: "30s" }, "constant-vus", { startVUs: 5, stages: [{ target: 5, durationMs: 30_000 }] }],
    // iterations is shared-iterations, duration its maxDuration; no options is 1 VU × 1 iteration.
    [
      { vus: 4, iterations: 20, duration: "30s" },
      "shared-iterations",
      { startVUs: 4, stages: [{ target: 4, durationMs: 30_000 }], iterations: { kind: "shared", count: 20 } },
    ],
    [{}, "shared-iterations", { startVUs: 1, stages: [{ target: 1, durationMs: 600_000 }], iterations: { kind: "shared", count: 1 } }],
    // stages ramp from vus (default 1), as k6's ramping-vus shortcut.
    [
      {
        stages: [
          { duration: "10s", target: 20 },
          { duration: "5s", target: 0 },
        ],
      },
      "ramping-vus",
      {
        startVUs: 1,
        stages: [
          { target: 20, durationMs: 10_000 },
          { target: 0, durationMs: 5_000 },
        ],
      },
    ],
  ])("maps the shortcut %j to %s", (options, executor, vus) => {
    const spec = parsed(options);
    expect(spec.executor).toBe(executor);
    expect(spec.vus).toMatchObject(vus);
    expect(spec.script).toMatchObject({ bundle: ctx.bundle, exec: "default" });
  });

  it("maps scenarios with their executors, exec functions, start times and thresholds", () => {
    const spec = parsed({
      scenarios: {
        browse: { executor: "constant-arrival-rate", rate: 50, timeUnit: "1s", duration: "20s", preAllocatedVUs: 10, maxVUs: 50 },
        admin: { executor: "constant-vus", vus: 2, duration: "10s", exec: "admin", startTime: "5s", gracefulStop: "5s" },
      },
      thresholds: { "http_req_duration{scenario:admin}": [{ threshold: "p(95)<300", abortOnFail: true }] },
    });
    expect(spec.scenarios!.map((s) => [s.name, s.spec.executor, s.spec.script?.exec, s.startMs])).toEqual([
      ["browse", "constant-arrival-rate", "default", 0],
      ["admin", "constant-vus", "admin", 5000],
    ]);
    expect(spec.thresholds["http_req_duration{scenario:admin}"]).toEqual([{ threshold: "p(95)<300", abortOnFail: true }]);
    // The VUs k6 starts before the first iteration, which take iterations in turn (runtime/vu-pool.ts).
    expect(spec.scenarios!.map((s) => s.spec.preAllocatedVUs)).toEqual([10, undefined]);
  });

  it("takes summaryTrendStats into the run spec, where k6's summary and handleSummary data show them", () => {
    const r = specFromOptions({ vus: 1, duration: "1s", summaryTrendStats: ["avg", "p(50)", "p(99.9)"] }, ctx);
    expect(r.ok && r.spec.summaryTrendStats).toEqual(["avg", "p(50)", "p(99.9)"]);
    expect(r.ok && r.ignored).not.toContain("summaryTrendStats");
  });

  it("accepts maxRedirects as acted on (the VUs apply it), refusing one that is not a count", () => {
    const r = specFromOptions({ vus: 1, duration: "1s", maxRedirects: 5 }, ctx);
    expect(r.ok && r.ignored).toEqual([]);
    expect(specFromOptions({ vus: 1, duration: "1s", maxRedirects: "5" }, ctx)).toEqual({
      ok: false,
      problems: ['options.maxRedirects must be a whole number of redirects (0 or more), got "5"'],
    });
  });

  it("accepts userAgent as acted on (the VUs send it), refusing one that is not a string", () => {
    const r = specFromOptions({ vus: 1, duration: "1s", userAgent: "mine/1" }, ctx);
    expect(r.ok && r.ignored).toEqual([]);
    expect(specFromOptions({ vus: 1, duration: "1s", userAgent: 5 }, ctx)).toEqual({ ok: false, problems: ["options.userAgent must be a string, got 5"] });
  });

  it("declares a Trend or Gauge created without isTime as plain numbers (time: false), which the summary prints without a unit as k6 does", () => {
    const metrics = { waited: "trend", size: "trend", depth: "gauge", hits: "counter" } as const;
    const r = specFromOptions({ vus: 1, duration: "1s" }, { ...ctx, metrics, timeTrends: ["waited"] });
    expect(r.ok && r.spec.metrics).toEqual({
      waited: { type: "trend" },
      size: { type: "trend", time: false },
      // A gauge is declared as one: its thresholds read its last value (core/metrics/gauge-last.ts).
      depth: { type: "gauge", time: false },
      hits: { type: "counter" },
    });
    const parsed = r.ok ? parseRunSpec(r.spec) : null;
    expect(parsed?.ok && parsed.spec.unitlessTrends).toEqual(["size", "depth"]);
  });

  it("declares k6's group_duration when a threshold names it, so the threshold is k6's and not an unknown metric", () => {
    const thresholds = { "group_duration{group:::login}": ["max<500"] };
    const r = specFromOptions({ vus: 1, duration: "1s", thresholds }, ctx);
    expect(r.ok && r.spec.metrics).toEqual({ group_duration: { type: "trend" } });
    const parsed = r.ok ? parseRunSpec(r.spec) : null;
    expect(parsed?.ok).toBe(true);
    expect(specFromOptions({ vus: 1, duration: "1s" }, ctx)).not.toHaveProperty("spec.metrics");
  });

  it("declares k6's iteration_duration when a threshold names it, per scenario too, as the shards time every iteration", () => {
    const scenarios = { normal: { executor: "shared-iterations", iterations: 1 } };
    const thresholds = { "iteration_duration{scenario:normal}": ["p(99)<5000"], iteration_duration: ["max<9000"] };
    const r = specFromOptions({ scenarios, thresholds }, ctx);
    expect(r.ok ? r.spec.metrics : r.problems).toEqual({ iteration_duration: { type: "trend" } });
    const parsed = r.ok ? parseRunSpec(r.spec) : null;
    expect(parsed?.ok ? "" : JSON.stringify(parsed)).toBe("");
  });

  it("maps an externally-controlled scenario (vus, maxVUs, duration) to a spec that parses, sized for maxVUs", () => {
    const r = specFromOptions({ scenarios: { ctl: { executor: "externally-controlled", vus: 1, maxVUs: 4, duration: "1m" } } }, ctx);
    expect(r.ok ? "" : r.problems.join("\n")).toBe("");
    const parsed = r.ok ? parseRunSpec(r.spec) : null;
    expect(parsed?.ok ? parsed.spec.scenarios?.[0]?.spec.vus : parsed).toMatchObject({ startVUs: 4, externallyControlled: { startVUs: 1 } });
  });

  it("accepts options.rps, which the VUs apply (runtime/rps-limit.ts), and puts nothing of it in the spec", () => {
    const r = specFromOptions({ vus: 10, duration: "4s", rps: 5 }, ctx);
    expect(r.ok ? "" : r.problems.join("\n")).toBe("");
    expect(r.ok && JSON.stringify(r.spec)).not.toMatch(/rps/);
    expect(r.ok && r.ignored).toEqual([]);
  });

  it.each([
    [{ stages: [{ duration: "1s", target: 1 }], iterations: 3 }, /not with stages/],
    [{ scenarios: { s: { executor: "constant-vus", vus: 1, duration: "1s", exec: "nope" } } }, /exports no function named nope/],
    [{ vus: 1, duration: "1s", hosts: { "a.test": "127.0.0.1" } }, /options.hosts: a Worker.s fetch\(\) resolves a name through Cloudflare.s DNS/],
    // k6 reads rps as a whole number.
    [{ vus: 1, duration: "1s", rps: 2.5 }, /options.rps must be a whole number of requests per second, got 2.5/],
  ])("refuses %j", (options, message) => {
    const r = specFromOptions(options, ctx);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.join("\n")).toMatch(message);
  });
});
