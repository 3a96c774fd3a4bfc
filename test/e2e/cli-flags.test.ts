/**
 * End to end: `edgeload run`'s command-line flags over a spec's and a k6 script's own
 * options, as a k6 user types them, against the local stack. Each run is 2–3 s at a few
 * VUs or requests per second against the loopback target: what is checked is that the
 * flag took effect (length, executor, VUs, iterations, thresholds), read back from the
 * summary the run exported. Flags that cannot apply are refused before any load.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./cli-process.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

const fixture = useLocalStack("edgeload-cli-flags-");
let dir: string;
let target: string;
let exports = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "edgeload-cli-flags-"));
  target = fixture.stack.targetUrl;
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Exported {
  readonly metrics: Record<string, { count?: number }>;
  readonly edgeload: {
    executor: string;
    durationS: number;
    vus: { peak: number; iterations?: { count: number } } | null;
    targetRatePerS: number | null;
    thresholds: unknown[];
    name: string;
    tags?: unknown;
  };
}

/** `edgeload run <args> --summary-export FILE` against this file's stack: its exit, output and exported summary. */
async function run(...args: string[]) {
  const file = join(dir, `summary-${++exports}.json`);
  const result = await runCli(["run", ...args, "--quiet", "--summary-export", file], {
    EDGELOAD_URL: fixture.stack.apiUrl,
    EDGELOAD_TOKEN: fixture.stack.token,
  });
  const summary = result.code === 0 || result.code === 99 ? (JSON.parse(await readFile(file, "utf8")) as Exported) : null;
  return { ...result, summary };
}

async function specFile(name: string, spec: Record<string, unknown>): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, JSON.stringify(spec));
  return file;
}

describe("load flags over a spec", () => {
  it("runs a 10-minute ramping-vus spec for -d 3s at the VUs its ramp starts from (k6's stages shortcut), as the summary shows", async () => {
    const file = await specFile("ramp.json", {
      name: "ten minute ramp",
      target,
      steps: [{ path: "/delay?ms=5" }],
      regions: ["wnam"],
      executor: "ramping-vus",
      startVUs: 3,
      stages: [
        { target: 50, duration: "5m" },
        { target: 0, duration: "5m" },
      ],
      thresholds: { http_req_duration: ["p(95)<1"] },
    });
    const r = await run(file, "-d", "3s", "--no-thresholds", "--name", "held for 3s");
    expect(r.stderr).toBe("");
    // p(95)<1 would fail: --no-thresholds left it out, so the run passes.
    expect(r.code).toBe(0);
    expect(r.summary!.edgeload).toMatchObject({ executor: "constant-vus", vus: { peak: 3 }, thresholds: [], name: "held for 3s" });
    expect(r.summary!.edgeload.durationS).toBeGreaterThanOrEqual(3);
    expect(r.summary!.edgeload.durationS).toBeLessThan(4);
    // The end of a run says where its report and dashboard are, and breaks down the statuses.
    expect(r.stdout).toMatch(/^ {2}STATUS CODES\n.*\n {2}200 +\d+ +100\.00%$/m);
    expect(r.stdout).toMatch(/^report: +edgeload report r-\S+ /m);
    expect(r.stdout).toMatch(/^dashboard: http/m);
  });

  it("replaces an arrival-rate spec's ramp with --stage (targets as rates) and caps it with --rps", async () => {
    const file = await specFile("rate.json", {
      name: "rate",
      target,
      steps: [{ path: "/delay?ms=1" }],
      regions: ["wnam"],
      executor: "constant-arrival-rate",
      rate: 500,
      duration: "10m",
    });
    const r = await run(file, "--stage", "1s:20,1s:20", "--rps", "10", "--threshold", "http_req_failed=rate==0");
    expect(r.code).toBe(0);
    expect(r.summary!.edgeload).toMatchObject({ executor: "ramping-arrival-rate", targetRatePerS: expect.closeTo(7.5, 1) });
    expect(r.summary!.edgeload.thresholds).toHaveLength(1);
    expect(r.summary!.metrics.http_reqs!.count).toBeLessThanOrEqual(20);
  });

  it("refuses flags that cannot apply, naming each, before any load", async () => {
    const file = await specFile("vu.json", { target, steps: [{ path: "/" }], executor: "constant-vus", vus: 2, duration: "1m" });
    const r = await run(file, "--header", "A: b");
    expect(r.code).toBe(104);
    expect(r.stderr).toContain("--header does not apply to a spec.json run (it applies to: --target form)");
    const model = await run(file, "--rate", "5", "--max-vus", "3");
    expect(model.code).toBe(104);
    expect(model.stderr).toMatch(/--rate: a constant-vus run's rate follows from its VUs[\s\S]*--max-vus: caps iterations in flight in an arrival-rate run/);
    // A run of named scenarios has no push outputs in its spec: refused by flag, not as a spec field.
    const named = await specFile("named.json", { target, scenarios: { a: { steps: [{ path: "/" }], executor: "constant-vus", vus: 1, duration: "1s" } } });
    const out = await run(named, "-o", "opentelemetry=http://127.0.0.1:1/v1/metrics");
    expect(out.code).toBe(104);
    expect(out.stderr).toContain("--out opentelemetry: a run of named scenarios cannot push outputs yet");
  });
});

describe("k6's flags on the --target form", () => {
  it("makes VUs of it without --rate: --vus 2 -i 10 is 10 iterations shared by 2 VUs", async () => {
    const r = await run("--target", `${target}/delay?ms=2`, "--vus", "2", "-i", "10", "--regions", "wnam");
    expect(r.code).toBe(0);
    expect(r.summary!.edgeload).toMatchObject({ executor: "shared-iterations", vus: { peak: 2, iterations: { count: 10 } } });
    expect(r.summary!.metrics.http_reqs!.count).toBe(10);
  });
});

describe("k6's flags on a k6 script", () => {
  it("replaces the script's stages with -d, at k6's 1 VU, and refuses a spec's --secret", async () => {
    const script = join(dir, "ramp.js");
    await writeFile(
      script,
      [
        'import http from "k6/http";',
        'export const options = { stages: [{ duration: "10m", target: 50 }], thresholds: { http_req_failed: ["rate==0"] } };',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the k6 script's own template literal, written out as text
        "export default function () { http.get(`${__ENV.BASE_URL}/delay?ms=2`); }",
      ].join("\n"),
    );
    const r = await run(script, "-d", "2s", "-e", `BASE_URL=${target}`, "--regions", "wnam", "--tag", "build=42");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.summary!.edgeload).toMatchObject({ executor: "constant-vus", vus: { peak: 1 } });
    expect(r.summary!.edgeload.durationS).toBeLessThan(3);
    const refused = await run(script, "--secret", "a=b", "-e", `BASE_URL=${target}`);
    expect(refused.code).toBe(104);
    expect(refused.stderr).toContain("--secret does not apply to a script.js run");
  });

  it("says a missing script is not found, exit 104", async () => {
    const r = await run(join(dir, "missing.js"));
    expect(r.code).toBe(104);
    expect(r.stderr).toContain(`file not found: ${join(dir, "missing.js")}`);
  });
});

describe("the list commands and help, as processes", () => {
  it("print JSON when piped, a table with --format table, and help with exit 0", async () => {
    const env = { EDGELOAD_URL: fixture.stack.apiUrl, EDGELOAD_TOKEN: fixture.stack.token };
    const piped = await runCli(["runs"], env);
    expect(piped.code).toBe(0);
    expect((JSON.parse(piped.stdout) as { runs: unknown[] }).runs.length).toBeGreaterThan(0);
    const table = await runCli(["runs", "--format", "table", "--limit", "2"], env);
    expect(table.stdout).toMatch(/^ {2}id +status +thresholds +started/);
    expect(table.stdout.trim().split("\n")).toHaveLength(3);
    const help = await runCli(["run", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("-d, --duration D");
    expect((await runCli(["--version"])).code).toBe(0);
  });
});
