/**
 * k6 for the end-to-end tests: found as the benchmark finds it (cli/k6-binary.ts:
 * on PATH, else .cache/k6), else built once into .cache/k6 from the Go module proxy (about
 * two minutes; test files that start together wait for one build under a lock file).
 *
 * When there is no k6 and it cannot be built, suites declared with `describeWithK6` are
 * skipped with the reason in their name — or, with EDGELOAD_REQUIRE_K6=1 (set by .ci/run),
 * fail with it, so CI never passes by skipping them.
 */
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { describeWithBinary } from "../support/required-binaries.ts";
import { findK6 } from "../../cli/k6-binary.ts";
import { PROJECT_ROOT } from "../../cli/paths.ts";

export interface K6Availability {
  /** The k6 binary, or null when there is none. */
  readonly path: string | null;
  /** Why there is none. */
  readonly reason: string;
}

const CACHE = join(PROJECT_ROOT, ".cache", "k6");
const LOCK = join(CACHE, ".build-lock");
/** A build lock older than this was left by a process that died. */
const STALE_LOCK_MS = 10 * 60_000;

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function usable(path: string): K6Availability {
  const version = spawnSync(path, ["version"], { encoding: "utf8", timeout: 30_000 });
  return version.status === 0
    ? { path, reason: "" }
    : { path: null, reason: `k6 at ${path} does not run: ${(version.stderr || String(version.error)).trim()}` };
}

/** Finds k6, building it at most once across test files running at the same time. */
function locateK6(): K6Availability {
  try {
    return usable(findK6({ build: false }));
  } catch {
    // Not on PATH, not built yet: build it, unless another test file is already doing so.
  }
  mkdirSync(CACHE, { recursive: true });
  if (existsSync(LOCK) && Date.now() - statSync(LOCK).mtimeMs > STALE_LOCK_MS) rmSync(LOCK, { force: true });
  let fd: number | null = null;
  try {
    fd = openSync(LOCK, "wx");
  } catch {
    while (existsSync(LOCK)) sleep(1000);
  }
  try {
    return usable(findK6({ build: fd !== null }));
  } catch (error) {
    return { path: null, reason: `no k6: ${(error as Error).message}` };
  } finally {
    if (fd !== null) {
      closeSync(fd);
      rmSync(LOCK, { force: true });
    }
  }
}

export const K6: K6Availability = locateK6();

/**
 * A suite that needs k6: `body` gets its path. Without k6 the suite is skipped (its name
 * says why), or fails with EDGELOAD_REQUIRE_K6=1. Declare the suite's fixtures (the local
 * stack) inside `body`, so a skipped suite starts nothing.
 */
export function describeWithK6(name: string, body: (k6: string) => void): void {
  const reason = `${K6.reason}. Put k6 on PATH, or install Go so the tests can build k6 into .cache/k6`;
  describeWithBinary("K6", name, K6.path ? { path: K6.path } : { path: null, reason }, body);
}
