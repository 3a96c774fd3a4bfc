/**
 * How an iteration (or setup/teardown) of a k6 script ended, as the shard is told: the
 * uncaught error as k6 prints it (`TypeError: …`), the script's file and line it was thrown
 * at, and whether the script called `exec.test.abort()`.
 *
 * The script runs bundled and rewritten (k6-compat/bundle.ts), so a stack names lines of
 * the isolate's `script.js`. The bundle carries a table from those lines back to the
 * script's own files (ScriptLines, built from esbuild's source map when bundling); the
 * rewrite inserts `await` and `async` without adding lines, so lines map, columns do not.
 */
import type { IterationOutcome } from "./wire.ts";

/**
 * From lines of the isolate's `script.js` to the script's files: `runs` is flat triples
 * (module line, source index, source line), each in force until the next, lines counting
 * on one for one within a run.
 */
export interface ScriptLines {
  readonly sources: readonly string[];
  readonly runs: readonly number[];
}

/** The name the bundle's module has in the isolate, as stacks show it. */
const FRAME = /\bscript\.js:(\d+):\d+/;

/** `file.js:line` of the first frame of the script in `stack`, or null. */
export function scriptLocation(stack: string | undefined, lines: ScriptLines | undefined): string | null {
  const match = stack ? FRAME.exec(stack) : null;
  if (!match || !lines || lines.runs.length < 3) return null;
  const line = Number(match[1]);
  // The last run starting at or before `line` (binary search over the triples).
  let lo = 0;
  let hi = lines.runs.length / 3 - 1;
  if (line < lines.runs[0]!) return null;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (lines.runs[mid * 3]! <= line) lo = mid;
    else hi = mid - 1;
  }
  const [start, source, sourceLine] = [lines.runs[lo * 3]!, lines.runs[lo * 3 + 1]!, lines.runs[lo * 3 + 2]!];
  const file = lines.sources[source];
  return file === undefined ? null : `${file}:${sourceLine + (line - start)}`;
}

/** What the VU's iteration left to report: its error (null when it returned) and any abort. */
export function scriptFailure(
  error: unknown,
  threw: boolean,
  aborted: string | null | undefined,
  lines: ScriptLines | undefined,
): Pick<IterationOutcome, "error" | "at" | "aborted"> {
  const abort = aborted === undefined || aborted === null ? {} : { aborted };
  if (!threw) return { error: null, ...abort };
  // An abort is reported as such, not as an error too (k6 prints one "test aborted" line).
  if (abort.aborted !== undefined) return { error: null, ...abort };
  const message = String(error);
  // Not `instanceof Error`: an error of another realm (a module's, a test's) has its stack too.
  const stack = (error as { stack?: unknown } | null)?.stack;
  return { error: message, at: scriptLocation(typeof stack === "string" ? stack : undefined, lines), ...abort };
}
