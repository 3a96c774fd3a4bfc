/**
 * Thresholds on tags (issue 36, point 2): one script with k6 sub-metrics of every kind a
 * public script uses — `{name:…}`, a script's own tag (`{staticAsset:yes}`), a group
 * (`{group:::login}`), the response's `status`, tagged checks and a tagged custom Trend and
 * Counter — run under real k6 and under `edgeload run` against the local stack's target.
 * Both must give the same exit code (99: two thresholds fail), the same verdict for every
 * threshold, and the same sub-metric counts (shared iterations: every count is exact), with
 * each sub-metric printed under its metric and handed to handleSummary as k6 hands it.
 * A second script pins the smaller points of the same issue (point 6) beside k6:
 * handleSummary's `root_group` with each check's passes and fails in its nested groups,
 * `iteration_duration`, `vus` and `vus_max`; `Rate.add()` returning true; a Trend created
 * without isTime printed without a unit.
 * Load goes only to the loopback target: 6 iterations of 4 requests, then 2 VUs for 2 s.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, expect, it } from "vitest";
import { runCli } from "./cli-process.ts";
import { describeWithK6 } from "./k6.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

type ExportedMetric = Record<string, number | Record<string, boolean>> & { thresholds?: Record<string, boolean> };
type HandedMetric = { type: string; contains: string; values: Record<string, number>; thresholds?: Record<string, { ok: boolean }> };

interface Outcome {
  readonly code: number;
  readonly exported: Record<string, ExportedMetric>;
  readonly handed: Record<string, HandedMetric>;
  readonly output: string;
}

const SCRIPT = `
import http from "k6/http";
import { check, group } from "k6";
import { Counter, Trend } from "k6/metrics";

const assetSize = new Trend("asset_size");
const assets = new Counter("assets");

export const options = {
  vus: 2,
  iterations: 6,
  tags: { testid: "sub-metrics" },
  thresholds: {
    "http_req_duration{name:home}": ["p(95)<5000"],
    "http_reqs{staticAsset:yes}": ["count==6"],
    "http_req_duration{group:::login}": ["max<5000"],
    "http_reqs{status:503}": ["count==6"],
    "http_req_failed{name:broken}": ["rate<0.5"],
    "checks{myTag:x}": ["rate==1"],
    "checks{myTag:y}": ["rate>0.5"],
    "asset_size{staticAsset:yes}": ["avg<5"],
    "assets{kind:css}": ["count==12"],
    "group_duration{group:::login}": ["max<5000"],
    "http_reqs{testid:sub-metrics,staticAsset:yes}": ["count==6"],
    "checks{testid:sub-metrics,myTag:y}": ["rate<0.5"],
  },
};

export default function () {
  http.get(__ENV.BASE_URL + "/delay?ms=2", { tags: { name: "home" } });
  http.get(__ENV.BASE_URL + "/delay?ms=1&size=10", { tags: { staticAsset: "yes" } });
  http.get(__ENV.BASE_URL + "/api?status=503", { tags: { name: "broken" } });
  group("login", () => {
    const res = http.get(__ENV.BASE_URL + "/delay?ms=2");
    check(res, { "login answered": (r) => r.status === 200 }, { myTag: "x" });
    check(res, { "never": () => false }, { myTag: "y" });
  });
  assetSize.add(3, { staticAsset: "yes" });
  assetSize.add(10);
  assets.add(2, { kind: "css" });
  assets.add(1, { kind: "js" });
}

export function handleSummary(data) {
  return { [__ENV.HANDED_PATH]: JSON.stringify(data.metrics), stdout: "handed\\n" };
}
`;

/** Point 6: groups, checks, a Rate's add() and a unitless Trend; HANDED_PATH set: handleSummary writes k6's data. */
const DETAILS = (handleSummary: boolean) => `
import http from "k6/http";
import { check, group, sleep } from "k6";
import { Rate, Trend } from "k6/metrics";

const added = new Rate("added");
const size = new Trend("size");

export const options = { vus: 2, duration: "2s" };

export default function () {
  group("outer", () => {
    const res = http.get(__ENV.BASE_URL + "/delay?ms=2");
    check(res, { "outer ok": (r) => r.status === 200 });
    group("inner", () => {
      check(res, { "inner never": () => false });
    });
  });
  check(null, { "add returns true": () => added.add(1) === true });
  size.add(6.5);
  sleep(0.5);
}
${handleSummary ? "export function handleSummary(data) { return { [__ENV.HANDED_PATH]: JSON.stringify(data) }; }" : ""}
`;

describeWithK6("thresholds on tags: k6 sub-metrics beside real k6", (k6) => {
  const fixture = useLocalStack("edgeload-sub-metrics-");
  let dir: string;
  let script: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "edgeload-sub-metrics-"));
    script = join(dir, "sub-metrics.js");
    await writeFile(script, SCRIPT);
  });

  const envFlags = (tool: string) =>
    Object.entries({ BASE_URL: fixture.stack.targetUrl, HANDED_PATH: join(dir, `${tool}-handed.json`) }).flatMap(([k, v]) => ["-e", `${k}=${v}`]);

  async function outcome(tool: string, code: number, output: string): Promise<Outcome> {
    const exported = JSON.parse(await readFile(join(dir, `${tool}-export.json`), "utf8")).metrics;
    const handed = JSON.parse(await readFile(join(dir, `${tool}-handed.json`), "utf8"));
    return { code, exported, handed, output };
  }

  async function underK6(): Promise<Outcome> {
    const args = ["run", "--quiet", "--summary-export", join(dir, "k6-export.json"), ...envFlags("k6"), script];
    try {
      const { stdout } = await promisify(execFile)(k6, args, { maxBuffer: 16 << 20, env: { ...process.env, K6_NO_USAGE_REPORT: "true" } });
      return outcome("k6", 0, stdout);
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return outcome("k6", e.code ?? -1, `${e.stdout ?? ""}${e.stderr ?? ""}`);
    }
  }

  async function underEdgeload(): Promise<Outcome> {
    const r = await runCli(["run", script, "--summary-export", join(dir, "edge-export.json"), ...envFlags("edge")], {
      EDGELOAD_URL: fixture.stack.apiUrl,
      EDGELOAD_TOKEN: fixture.stack.token,
    });
    expect(r.code, r.stdout + r.stderr).not.toBe(104);
    return outcome("edge", r.code, r.stdout + r.stderr);
  }

  /** Every threshold's verdict by metric key and expression: true when it failed (summary-export's form). */
  const verdicts = (o: Outcome) =>
    Object.fromEntries(
      Object.entries(o.exported).flatMap(([key, m]) => Object.entries(m.thresholds ?? {}).map(([expr, failed]) => [`${key} ${expr}`, failed])),
    );

  /** The figures that are exact in both tools: counts, passes and fails, the unitless trend's values. */
  const counts = (o: Outcome) => ({
    staticAssets: o.exported["http_reqs{staticAsset:yes}"]?.count,
    status503: o.exported["http_reqs{status:503}"]?.count,
    brokenFailed: [o.exported["http_req_failed{name:broken}"]?.passes, o.exported["http_req_failed{name:broken}"]?.fails],
    checksX: [o.exported["checks{myTag:x}"]?.passes, o.exported["checks{myTag:x}"]?.fails],
    checksY: [o.exported["checks{myTag:y}"]?.passes, o.exported["checks{myTag:y}"]?.fails],
    assetSize: [o.exported["asset_size{staticAsset:yes}"]?.avg, o.exported["asset_size{staticAsset:yes}"]?.max],
    cssAssets: o.exported["assets{kind:css}"]?.count,
    allAssets: o.exported.assets?.count,
  });

  it("gives k6's exit code, threshold verdicts and sub-metric counts, printed and handed to handleSummary as k6 does", async () => {
    const k6Run = await underK6();
    const edge = await underEdgeload();

    expect(k6Run.code).toBe(99);
    expect(edge.code, edge.output).toBe(99);
    expect(verdicts(edge)).toEqual(verdicts(k6Run));
    expect(verdicts(k6Run)).toMatchObject({
      "http_req_failed{name:broken} rate<0.5": true,
      "checks{myTag:y} rate>0.5": true,
      "checks{myTag:x} rate==1": false,
    });

    const expected = {
      staticAssets: 6,
      status503: 6,
      brokenFailed: [6, 0],
      checksX: [6, 0],
      checksY: [0, 6],
      assetSize: [3, 3],
      cssAssets: 12,
      allAssets: 18,
    };
    expect(counts(k6Run)).toEqual(expected);
    expect(counts(edge)).toEqual(expected);
    // Timed sub-metrics: one sample per iteration each; their latencies are the target's, within the generous bound.
    for (const o of [k6Run, edge]) {
      expect(o.exported["http_req_duration{name:home}"]?.max).toBeLessThan(5000);
      expect(o.exported["http_req_duration{group:::login}"]?.max).toBeLessThan(5000);
    }

    // handleSummary's data: each sub-metric with its parent's type and unit, and its thresholds.
    const shape = (o: Outcome, key: string) => ({ type: o.handed[key]?.type, contains: o.handed[key]?.contains, thresholds: o.handed[key]?.thresholds });
    for (const key of ["http_req_duration{name:home}", "http_reqs{staticAsset:yes}", "checks{myTag:y}", "asset_size{staticAsset:yes}", "assets{kind:css}"]) {
      expect(shape(edge, key), key).toEqual(shape(k6Run, key));
    }
    expect(edge.handed["checks{myTag:x}"]?.values).toEqual(k6Run.handed["checks{myTag:x}"]?.values);
    // The sub-metric k6 keeps for every script, with no threshold naming it (the 503s are not in it).
    const expectedResponses = "http_req_duration{expected_response:true}";
    expect(shape(edge, expectedResponses)).toEqual(shape(k6Run, expectedResponses));
    expect(edge.exported[expectedResponses]?.max).toBeLessThan(5000);
  });

  type Handed = { root_group: HandedGroup; metrics: Record<string, HandedMetric> };
  type HandedGroup = {
    name: string;
    path: string;
    id: string;
    groups: HandedGroup[];
    checks: Array<{ name: string; path: string; id: string; passes: number; fails: number }>;
  };

  /** The group tree without counts (names, paths, ids), and each check's counts by path. */
  const tree = (g: HandedGroup): unknown => ({
    name: g.name,
    path: g.path,
    id: g.id,
    checks: g.checks.map((c) => [c.name, c.path, c.id]),
    groups: g.groups.map(tree),
  });
  const checkCounts = (g: HandedGroup): Record<string, [number, number]> =>
    Object.assign(Object.fromEntries(g.checks.map((c) => [c.path, [c.passes, c.fails]])), ...g.groups.map(checkCounts));

  it("hands handleSummary k6's root_group, iteration_duration, vus and vus_max; Rate.add() is true; a Trend without isTime has no unit", async () => {
    const withHook = join(dir, "details-hook.js");
    const plain = join(dir, "details.js");
    await writeFile(withHook, DETAILS(true));
    await writeFile(plain, DETAILS(false));
    const hs = (tool: string) => ["-e", `BASE_URL=${fixture.stack.targetUrl}`, "-e", `HANDED_PATH=${join(dir, `${tool}-details.json`)}`];
    const k6Env = { ...process.env, K6_NO_USAGE_REPORT: "true" };
    await promisify(execFile)(k6, ["run", "--quiet", ...hs("k6"), withHook], { env: k6Env });
    const stack = { EDGELOAD_URL: fixture.stack.apiUrl, EDGELOAD_TOKEN: fixture.stack.token };
    const edgeRun = await runCli(["run", withHook, ...hs("edge")], stack);
    expect(edgeRun.code, edgeRun.stdout + edgeRun.stderr).toBe(0);
    const k6Data = JSON.parse(await readFile(join(dir, "k6-details.json"), "utf8")) as Handed;
    const edgeData = JSON.parse(await readFile(join(dir, "edge-details.json"), "utf8")) as Handed;

    expect(tree(edgeData.root_group)).toEqual(tree(k6Data.root_group));
    for (const data of [k6Data, edgeData]) {
      const iterations = data.metrics.iterations!.values.count!;
      // Every check ran once per iteration (the iteration count itself depends on timing).
      expect(checkCounts(data.root_group)).toEqual({
        "::outer::outer ok": [iterations, 0],
        "::outer::inner::inner never": [0, iterations],
        "::add returns true": [iterations, 0],
      });
      expect(data.metrics.added!.values).toMatchObject({ rate: 1, fails: 0 });
    }
    const k6Iterations = k6Data.metrics.iterations!.values.count!;
    expect(Math.abs(edgeData.metrics.iterations!.values.count! - k6Iterations)).toBeLessThanOrEqual(Math.max(2, k6Iterations * 0.5));
    for (const name of ["vus", "vus_max", "iteration_duration", "size"]) {
      const { type, contains } = edgeData.metrics[name] ?? {};
      expect({ name, type, contains }).toEqual({ name, type: k6Data.metrics[name]?.type, contains: k6Data.metrics[name]?.contains });
    }
    expect(edgeData.metrics.vus!.values).toEqual(k6Data.metrics.vus!.values);
    expect(edgeData.metrics.vus_max!.values).toEqual(k6Data.metrics.vus_max!.values);
    // Each iteration sleeps 0.5 s: iteration_duration says so in both, in ms.
    for (const data of [k6Data, edgeData]) expect(data.metrics.iteration_duration!.values.min).toBeGreaterThanOrEqual(500);

    // Without handleSummary, the printed summary shows the unitless Trend as k6 prints it: no "ms".
    const printed = await runCli(["run", plain, "-e", `BASE_URL=${fixture.stack.targetUrl}`], stack);
    const k6Printed = await promisify(execFile)(k6, ["run", "-e", `BASE_URL=${fixture.stack.targetUrl}`, plain], { env: k6Env });
    const unitless = /size\.+: avg=6\.5 +min=6\.5 +med=6\.5 +max=6\.5/;
    expect(k6Printed.stdout).toMatch(unitless);
    expect(printed.stdout).toMatch(unitless);
    // …and, as k6, the time of the expected responses under http_req_duration.
    const expectedLine = / {4}\{ expected_response:true \}\.+: avg=/;
    expect(k6Printed.stdout).toMatch(expectedLine);
    expect(printed.stdout).toMatch(expectedLine);
  });
});
