/**
 * Starts the scale bench (scale-bench.ts) in its own process: it runs the coordinator's code,
 * so it type-checks against Node and Workers types at once (tsconfig.mixed.json) and cannot
 * be imported here, and a 1,000,000/s run wants a larger heap than the default.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../cli/local-stack.ts";

/** True when the bench ran to the end. */
export function runScaleBench(rates: readonly number[]): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--max-old-space-size=8192", join(PROJECT_ROOT, "scripts/bench/scale-bench.ts"), "--rates", rates.join(",")], {
      stdio: "inherit",
    });
    child.on("error", reject);
    child.on("close", (code) => resolve(code === 0));
  });
}
