/**
 * Thresholds on tags (issue 36, point 2): one script with k6 sub-metrics of every kind a
 * public script uses — `{name:…}`, a script's own tag (`{staticAsset:yes}`), a group
 * (`{group:::login}`), the response's `status`, tagged checks and a tagged custom Trend and
 * Counter — run under real k6 and under `edgeload run` against the local stack's target.
 * Both must give the same exit code (99: two thresholds fail), the same verdict for every
 * threshold, and the same sub-metric counts (shared iterations: every count is exact), with
 * each sub-metric printed under its metric and handed to handleSummary as k6 hands it.
 * Load goes only to the loopback target: 6 iterations of 4 requests.
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
  });
});
