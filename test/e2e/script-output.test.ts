/**
 * What a k6 script says while it runs, as `edgeload run` shows it beside real k6 on the
 * same scripts and the same local target: every uncaught iteration error printed (with
 * the script's file and line) and counted in the summary, console lines printed with
 * their level and VU, exec.test.abort() ending the run with k6's exit code 108, an
 * exception in the init context, setup() or teardown() with 107, setup() and teardown()
 * past their timeouts with 100 and 101, a handleSummary() that throws logged with the default
 * summary printed and every export written, and requests tagged with a step no
 * threshold names kept apart from the function's own. Before, the errors and console
 * lines reached the `edgeload dev` terminal only, and a script whose iterations all threw
 * passed in silence.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, expect, it } from "vitest";
import type { Summary } from "../../core/run/summary.ts";
import { runCli } from "./cli-process.ts";
import { describeWithK6 } from "./k6.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

interface Outcome {
  readonly code: number;
  /** stdout and stderr together, as a terminal shows them. */
  readonly output: string;
  /** --summary-export, when the run got that far. */
  readonly summary: Summary | null;
}

describeWithK6("a k6 script's errors, console and abort beside k6", (k6) => {
  const fixture = useLocalStack("edgeload-script-output-");
  let dir: string;
  let runs = 0;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "edgeload-script-output-"));
  });

  async function write(name: string, lines: readonly string[]): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, `${lines.join("\n")}\n`);
    return path;
  }

  async function readSummary(path: string): Promise<Summary | null> {
    return readFile(path, "utf8").then(
      (text) => JSON.parse(text) as Summary,
      () => null,
    );
  }

  async function underK6(script: string): Promise<Outcome> {
    const out = join(dir, `k6-${++runs}.json`);
    const args = ["run", "--quiet", "--summary-export", out, "-e", `BASE_URL=${fixture.stack.targetUrl}`, script];
    try {
      const { stdout, stderr } = await promisify(execFile)(k6, args, { maxBuffer: 16 << 20, env: { ...process.env, K6_NO_USAGE_REPORT: "true" } });
      return { code: 0, output: stdout + stderr, summary: await readSummary(out) };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? -1, output: `${e.stdout ?? ""}${e.stderr ?? ""}`, summary: await readSummary(out) };
    }
  }

  async function underEdgeload(script: string): Promise<Outcome> {
    const out = join(dir, `edge-${++runs}.json`);
    const r = await runCli(["run", script, "--quiet", "--summary-export", out, "-e", `BASE_URL=${fixture.stack.targetUrl}`], {
      EDGELOAD_URL: fixture.stack.apiUrl,
      EDGELOAD_TOKEN: fixture.stack.token,
    });
    return { code: r.code, output: r.stdout + r.stderr, summary: await readSummary(out) };
  }

  const iterations = (s: Summary | null) => (s?.metrics as Record<string, { count: number }> | undefined)?.iterations?.count ?? 0;

  it("prints and counts every iteration's uncaught error with its line, and exits as k6 does", async () => {
    const script = await write("throws.js", [
      'import http from "k6/http";',
      'export const options = { vus: 2, duration: "2s" };',
      "export default function () {",
      '  http.get(__ENV.BASE_URL + "/delay?ms=5");',
      '  throw new Error("iteration failed on purpose");',
      "}",
    ]);
    const k6Run = await underK6(script);
    const edge = await underEdgeload(script);
    // k6 prints each error and counts the iteration; the test passes (no threshold failed).
    expect(k6Run.output).toMatch(/iteration failed on purpose.*throws\.js:5/);
    expect(edge.code, edge.output).toBe(k6Run.code);
    // As the run goes: the error, where it was thrown, and how many times that second.
    expect(edge.output).toMatch(/ERRO\[\d{4}\] Error: iteration failed on purpose {2}at=throws\.js:5 source=stacktrace ×\d+/);
    // In the summary: every one, each an iteration that still counted.
    const errors = edge.summary!.edgeload.scriptErrors!;
    expect(errors.total).toBeGreaterThan(10);
    expect(errors.total).toBe(iterations(edge.summary));
    expect(errors.messages).toEqual([{ message: "Error: iteration failed on purpose", at: "throws.js:5", count: errors.total }]);
    expect(edge.output).toMatch(new RegExp(`SCRIPT ERRORS \\(${errors.total} uncaught`));
  });

  it("prints the script's console lines with their level and VU, as k6 does", async () => {
    const script = await write("console.js", [
      'import http from "k6/http";',
      "export const options = { vus: 1, iterations: 3 };",
      "export default function () {",
      '  http.get(__ENV.BASE_URL + "/delay?ms=1");',
      '  console.log("hello from VU", __VU, { iteration: __ITER });',
      '  console.warn("careful");',
      "}",
    ]);
    const k6Run = await underK6(script);
    const edge = await underEdgeload(script);
    expect(edge.code, edge.output).toBe(k6Run.code);
    expect(k6Run.output).toMatch(/level=warning msg=careful source=console/);
    expect(edge.output).toMatch(/INFO\[\d{4}\] hello from VU 1 \{"iteration":0\} {2}source=console vu=1/);
    expect(edge.output).toMatch(/WARN\[\d{4}\] careful {2}source=console vu=1/);
  });

  it("ends the whole run at exec.test.abort() with k6's exit code 108 and the script's message", async () => {
    const script = await write("abort.js", [
      'import http from "k6/http";',
      'import exec from "k6/execution";',
      'export const options = { vus: 2, duration: "60s" };',
      "export default function () {",
      '  http.get(__ENV.BASE_URL + "/delay?ms=5");',
      '  if (__ITER >= 3) exec.test.abort("enough for today");',
      "}",
    ]);
    const k6Run = await underK6(script);
    expect(k6Run.code).toBe(108);
    const startedMs = Date.now();
    const edge = await underEdgeload(script);
    expect(edge.code, edge.output).toBe(108);
    // Well before the 60 s the options ask for.
    expect(Date.now() - startedMs).toBeLessThan(30_000);
    expect(edge.output).toContain("test aborted: enough for today");
    expect(edge.summary!.edgeload).toMatchObject({ status: "aborted", abortReason: "script aborted: enough for today", endedByScript: true, exitCode: 108 });
    // The HTTP API gives a CI job the same code.
    const runId = /^run (\S+):/m.exec(edge.output)![1]!;
    const response = await fetch(`${fixture.stack.apiUrl}/v1/runs/${runId}`, { headers: { authorization: `Bearer ${fixture.stack.token}` } });
    expect(await response.json()).toMatchObject({ status: "aborted", exitCode: 108, endedByScript: true });
  });

  it.each([
    ["its init context", ['throw new Error("bad init");', "export default function () {}"]],
    ["setup()", ['export function setup() { throw new Error("bad setup"); }', "export default function () {}"]],
  ])("exits 107 as k6 does when the script throws in %s", async (_where, lines) => {
    const script = await write(`throws-in-${++runs}.js`, [...lines]);
    const k6Run = await underK6(script);
    expect(k6Run.code).toBe(107);
    const edge = await underEdgeload(script);
    expect(edge.code, edge.output).toBe(107);
    expect(edge.output).toMatch(/bad (init|setup)/);
  });

  it.each([
    ["teardown() throws", 107, ["export default function () {}", 'export function teardown() { throw new Error("bad teardown"); }'], /bad teardown/],
    [
      "teardown() calls exec.test.abort()",
      108,
      ['import exec from "k6/execution";', "export default function () {}", 'export function teardown() { exec.test.abort("stop in teardown"); }'],
      /stop in teardown/,
    ],
    [
      "setup() runs past its setupTimeout",
      100,
      [
        'import { sleep } from "k6";',
        'export const options = { setupTimeout: "2s" };',
        "export function setup() { sleep(6); }",
        "export default function () {}",
      ],
      /setup\(\) did not finish within 2 s \(setupTimeout\)/,
    ],
    [
      "teardown() runs past its teardownTimeout",
      101,
      [
        'import { sleep } from "k6";',
        'export const options = { teardownTimeout: "2s" };',
        "export default function () {}",
        "export function teardown() { sleep(6); }",
      ],
      /teardown\(\) did not finish within 2 s \(teardownTimeout\)/,
    ],
  ] as const)("ends as k6 does when %s (exit %i)", async (_what, code, lines, said) => {
    const script = await write(`phase-end-${++runs}.js`, [...lines]);
    const k6Run = await underK6(script);
    expect(k6Run.code).toBe(code);
    const edge = await underEdgeload(script);
    expect(edge.code, edge.output).toBe(code);
    expect(edge.output).toMatch(said);
    expect(edge.summary?.edgeload.exitCode).toBe(code);
  });

  it("logs a handleSummary() that throws, prints the default summary, writes the export and keeps the thresholds' exit code, as k6", async () => {
    const script = await write("summary-throws.js", [
      'export const options = { thresholds: { iterations: ["count<1"] } };',
      "export default function () {}",
      'export function handleSummary() { throw new Error("bad summary"); }',
    ]);
    const k6Run = await underK6(script);
    expect(k6Run.code).toBe(99);
    expect(k6Run.summary).not.toBeNull();
    const edge = await underEdgeload(script);
    expect(edge.code, edge.output).toBe(99);
    expect(edge.output).toContain("ERRO handleSummary() failed: bad summary");
    expect(edge.output).toContain("  THRESHOLDS");
    expect(edge.summary?.edgeload.exitCode).toBe(99);
  });

  it("keeps requests tagged with a step no threshold names apart from the function's own", async () => {
    const script = await write("tagged.js", [
      'import http from "k6/http";',
      'export const options = { vus: 1, iterations: 4, thresholds: { "http_req_duration{step:known}": ["p(95)<5000"] } };',
      "export default function () {",
      '  http.get(__ENV.BASE_URL + "/delay?ms=1");',
      '  http.get(__ENV.BASE_URL + "/delay?ms=1", { tags: { name: "known" } });',
      '  http.get(__ENV.BASE_URL + "/delay?ms=1", { tags: { name: "checkout" } });',
      "}",
    ]);
    const edge = await underEdgeload(script);
    expect(edge.code, edge.output).toBe(0);
    const requests = Object.fromEntries(Object.entries(edge.summary!.edgeload.steps).map(([step, s]) => [step, s.requests]));
    // Before, the "checkout" requests were counted as the default function's (8 there).
    expect(requests).toEqual({ default: 4, known: 4, "_other-tags": 4 });
  });
});
