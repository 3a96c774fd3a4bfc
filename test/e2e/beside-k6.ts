/**
 * One script run under real k6 and under `edgeload run` against the same local stack, each
 * writing its `--summary-export`, read back with the exit code: what the tests that compare
 * edgeload with k6 on a script of their own share.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll } from "vitest";
import { runCli } from "./cli-process.ts";
import type { StackFixture } from "./local-stack-fixture.ts";

export interface SideRun<Summary> {
  readonly code: number;
  readonly summary: Summary;
  /** What the run printed (stdout and stderr), for a failure's message. */
  readonly output: string;
}

/** `k6 run --quiet --summary-export out … script`: a failing exit (99, 107, …) is a result, not an error. */
export async function runUnderK6<Summary>(k6: string, script: string, args: readonly string[], out: string): Promise<SideRun<Summary>> {
  const ran = await promisify(execFile)(k6, ["run", "--quiet", "--summary-export", out, ...args, script], {
    maxBuffer: 16 << 20,
    env: { ...process.env, K6_NO_USAGE_REPORT: "true" },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code?: unknown; stdout?: string; stderr?: string }) => {
      if (typeof error.code !== "number") throw error;
      return { code: error.code, output: (error.stdout ?? "") + (error.stderr ?? "") };
    },
  );
  return { ...ran, summary: JSON.parse(await readFile(out, "utf8")) as Summary };
}

/** `edgeload run script --quiet --summary-export out …` against the fixture's stack. */
export async function runUnderEdgeload<Summary>(fixture: StackFixture, script: string, args: readonly string[], out: string): Promise<SideRun<Summary>> {
  const r = await runCli(["run", script, "--quiet", "--summary-export", out, ...args], {
    EDGELOAD_URL: fixture.stack.apiUrl,
    EDGELOAD_TOKEN: fixture.stack.token,
  });
  const output = r.stdout + r.stderr;
  const summary = await readFile(out, "utf8").then(
    (text) => JSON.parse(text) as Summary,
    () => {
      throw new Error(`edgeload run exited ${r.code} without a summary:\n${output}`);
    },
  );
  return { code: r.code, summary, output };
}

/** A k6 summary export's metrics, as far as these tests read them. */
export type ExportedMetrics = { metrics: Record<string, { count?: number; avg?: number; thresholds?: Record<string, boolean> }> };

/** A metric's count in a summary export (0 when the run has none of it). */
export const countOf = (run: SideRun<ExportedMetrics>, metric: string): number => run.summary.metrics[metric]?.count ?? 0;

/**
 * Scripts of a test's own, written to a temporary folder before its tests, and `both(name)`:
 * that script under k6 and under edgeload at once, each given `BASE_URL` (the stack's target)
 * and `extra` arguments. Call inside a describeWithK6 block.
 */
export function scriptsBesideK6(
  k6: string,
  fixture: StackFixture,
  scripts: Readonly<Record<string, string>>,
): { both(name: string, extra?: readonly string[]): Promise<[SideRun<ExportedMetrics>, SideRun<ExportedMetrics>]> } {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "edgeload-beside-k6-"));
    await Promise.all(Object.entries(scripts).map(([name, text]) => writeFile(join(dir, name), text)));
  });
  return {
    both(name, extra = []) {
      const args = ["-e", `BASE_URL=${fixture.stack.targetUrl}`, ...extra];
      return Promise.all([
        runUnderK6<ExportedMetrics>(k6, join(dir, name), args, join(dir, `${name}.k6.json`)),
        runUnderEdgeload<ExportedMetrics>(fixture, join(dir, name), args, join(dir, `${name}.edge.json`)),
      ]);
    },
  };
}
