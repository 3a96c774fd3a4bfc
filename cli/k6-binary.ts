/**
 * Finds the k6 binary: on PATH first, else the project-local build in .cache/k6, else
 * builds the pinned version from the Go module proxy into that cache (about two minutes).
 * The CLI (crosscheck) needs it; the benches and the e2e tests import it from here.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "./local-stack.ts";

export const K6_VERSION = "v1.8.1";
const CACHE_BIN = join(PROJECT_ROOT, ".cache", "k6", "bin");

export function findK6(options: { build: boolean } = { build: true }): string {
  const onPath = spawnSync("sh", ["-c", "command -v k6"], { encoding: "utf8" }).stdout.trim();
  if (onPath) return onPath;
  const cached = join(CACHE_BIN, "k6");
  if (existsSync(cached)) return cached;
  if (!options.build) throw new Error("k6 is not on PATH and not built in .cache/k6");
  console.log(`building k6 ${K6_VERSION} from the Go module proxy into .cache/k6 (about two minutes)…`);
  try {
    execFileSync("go", ["install", `go.k6.io/k6@${K6_VERSION}`], { stdio: "inherit", env: { ...process.env, GOBIN: CACHE_BIN } });
  } catch (error) {
    throw new Error(`could not build k6 (is Go installed?): ${(error as Error).message}`);
  }
  return cached;
}
