/**
 * Runs the `edgeload` CLI as a real process (`node cli/edgeload.mjs …`), as a user
 * does, for end-to-end tests that check its exit code and output.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { PROJECT_ROOT } from "../../cli/local-stack.ts";

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `edgeload <args>` with `env` added to this process's environment. */
export async function runCli(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(PROJECT_ROOT, "cli/edgeload.mjs"), ...args], {
      env: { ...process.env, ...env },
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== "number") throw error;
    return { code: failed.code, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}
