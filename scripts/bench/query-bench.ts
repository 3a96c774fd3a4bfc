/**
 * 3. queries: a synthetic 1-hour, 64-shard run in the local D1, each analytics query over
 *    the API (scripts/bench/query-timing.ts, its own process: it builds D1 statements with
 *    the coordinator's code, so it type-checks against both Node and Workers types).
 *
 * Why: a run's results are asked for over the API (`edgeload query`, SQL over the run's D1
 * rows), and each query must stay under 2 s on a run of that size (QUERIES.md, "How fast").
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../cli/local-stack.ts";

export async function queryBench(): Promise<void> {
  console.log("\n## Queries: a synthetic 1-hour run (4 regions, 64 shards, 1000/s) in the local D1, asked over the API three times each\n");
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [join(PROJECT_ROOT, "scripts/bench/query-timing.ts")], { stdio: "inherit" });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`query-timing exited ${code}`))));
  });
}
