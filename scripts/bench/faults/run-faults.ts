/**
 * `npm run bench -- faults`: the fault table. Two halves, one table:
 *
 *  - inside workerd (./vitest.config.ts, ./in-workerd/): faults injected into the run's own
 *    objects and storage, with and without an API abort;
 *  - on the local stack (./target-faults.ts): faults of the target, with and without an API
 *    abort and Ctrl-C in a real `edgeload run`.
 *
 * Prints the table (Markdown, as in the README) and exits 1 when a row is not ok.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../../cli/local-stack.ts";
import { accountFault, faultTable, type FaultObservation } from "./fault-table.ts";
import { targetFaultRows } from "./target-faults.ts";

interface VitestReport {
  readonly testResults: ReadonlyArray<{
    readonly assertionResults: ReadonlyArray<{
      readonly title: string;
      readonly status: string;
      readonly failureMessages: readonly string[];
      readonly meta?: { fault?: FaultObservation };
    }>;
  }>;
}

async function inWorkerdRows(log: (line: string) => void): Promise<FaultObservation[]> {
  const report = join(PROJECT_ROOT, ".cache", "faults-in-workerd.json");
  await rm(report, { force: true });
  const vitest = join(PROJECT_ROOT, "node_modules", "vitest", "vitest.mjs");
  const child = spawn(process.execPath, [vitest, "run", "--config", "scripts/bench/faults/vitest.config.ts", "--reporter=json", `--outputFile=${report}`], {
    cwd: PROJECT_ROOT,
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" },
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
  await once(child, "exit");
  const parsed = JSON.parse(
    await readFile(report, "utf8").catch(() => {
      throw new Error(`the in-workerd fault rows did not report:\n${stderr}`);
    }),
  ) as VitestReport;
  const rows: FaultObservation[] = [];
  for (const result of parsed.testResults.flatMap((f) => f.assertionResults)) {
    if (result.meta?.fault) {
      rows.push(result.meta.fault);
      log(`  ${result.meta.fault.fault}: ${result.meta.fault.outcome}`);
    } else if (result.status === "failed") {
      throw new Error(`fault row "${result.title}" could not be observed:\n${result.failureMessages.join("\n").slice(0, 2000)}`);
    }
  }
  return rows;
}

export async function faultsBench(): Promise<boolean> {
  console.log("\n## Faults: nothing lost, nothing double counted (one run per row, against the local target)\n");
  const log = (line: string) => console.error(line);
  console.error("inside workerd: the run's objects and storage…");
  const observations = await inWorkerdRows(log);
  console.error("on the local stack: the target…");
  observations.push(...(await targetFaultRows(log)));
  const rows = observations.map(accountFault);
  console.log(faultTable(rows));
  const bad = rows.filter((r) => !r.ok);
  console.log(bad.length ? `\n${bad.length} row(s) NOT OK` : `\nall ${rows.length} rows ok`);
  return bad.length === 0;
}
