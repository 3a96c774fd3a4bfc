/**
 * Runs `edgeload <argv>` in the test's own process (main(), not a child), capturing what it
 * prints: each call starts with empty output. Registers its own spies and their restore.
 */
import { afterEach, beforeEach, vi } from "vitest";
import { main } from "../../cli/main.ts";

export function edgeloadInProcess(): (...argv: string[]) => Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  beforeEach(() => {
    vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void out.push(a.join(" ")));
    vi.spyOn(console, "error").mockImplementation((...a: unknown[]) => void err.push(a.join(" ")));
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => (out.push(String(chunk)), true));
  });
  afterEach(() => vi.restoreAllMocks());
  return async (...argv) => {
    out.length = 0;
    err.length = 0;
    const code = await main(argv);
    return { code, stdout: out.join("\n"), stderr: err.join("\n") };
  };
}
