/**
 * One script run under real k6 and under `edgeload run` against the same local stack, each
 * writing its `--summary-export`, read back with the exit code: what the tests that compare
 * edgeload with k6 on a script of their own share.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
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
