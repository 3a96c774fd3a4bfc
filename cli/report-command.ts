/**
 * `edgeload report`: a run's report as files.
 *
 *   edgeload report <run> [--out reports/<run>] [--url URL --token TOKEN] [--local]
 *
 * Writes `<out>/report.md` with its SVG charts beside it and `<out>/report.html` (the same
 * report as one page), then adds or replaces the report's row in `INDEX.md` next to the
 * report folder. The report's data comes from the API that is named (GET
 * /v1/runs/:id/report?format=json), and nothing is written when it cannot be had; with
 * --local, or no API named at all, from the local state's results database, so runs made
 * by `npm run demo` can be reported afterwards with nothing running.
 *
 * Against the local stack's own target, the report sets what the run sent against what the
 * target counted. When that target's ledger cannot be read the report is written all the
 * same, saying so in its Delivery section, and the command exits 1: the rest of the report
 * stands, but a script must not take it for a complete one (named-api.test.ts).
 */
import type { Reconciliation } from "../cloudflare/analytics/reconciliation.ts";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import type { DatabaseSync } from "node:sqlite";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { finalSummary, loadQueryInput } from "../coordinator/store/results-queries.ts";
import { reportInput, type ReportInput } from "../reports/report-input.ts";
import { indexEntry, updateIndex } from "../reports/report-index.ts";
import { renderReport } from "../reports/report.ts";
import { CliError, connectUnlessLocal, EXIT, readJsonFile } from "./connection.ts";
import { parseCommand } from "./option-table.ts";
import { REPORT_COMMAND } from "./tables/results-tables.ts";
import { asSqlReader, localResultsOrFail, readLocalRun } from "./local-results.ts";
import type { EdgeloadClient } from "./client.ts";
import type { DeliveryOutcome } from "../reports/delivery-section.ts";
import { checkDelivery, ledgerFor } from "./delivery-check.ts";
import { readDevFile, type DevFile } from "./dev-file.ts";

/** A report folder's name: it becomes a link in the index, so plain characters only. */
const REPORT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export async function reportCommand(args: string[]): Promise<number> {
  const { values: v, positionals } = parseCommand(REPORT_COMMAND, args);
  const runId = positionals[0];
  if (!runId) throw new CliError("a run id is required (see `edgeload runs`)", EXIT.invalidConfig);
  const out = resolve(v.out ?? join("reports", runId));
  const name = basename(out);
  if (!REPORT_NAME.test(name)) throw new CliError(`--out: the folder name "${name}" must be letters, digits, ".", "_" or "-"`, EXIT.invalidConfig);

  const client = await connectUnlessLocal(v);
  const input = client ? await client.reportInput(runId) : await localReportInput(runId, localResultsOrFail());
  const cloudflare = v["cf-analytics"] ? await readReconciliation(v["cf-analytics"], runId) : undefined;
  const delivery = client ? await deliveryOf(client, runId, input.summary.edgeload.target, await readDevFile()) : undefined;
  const report = await renderReport({ ...input, ...(cloudflare ? { cloudflare } : {}), ...(delivery ? { delivery } : {}) });

  await mkdir(out, { recursive: true });
  await writeFile(join(out, "report.md"), report.markdown);
  await writeFile(join(out, "report.html"), report.html);
  for (const [file, svg] of Object.entries(report.charts)) await writeFile(join(out, file), svg);
  const index = join(dirname(out), "INDEX.md");
  const existing = await readFile(index, "utf8").catch(() => null);
  await writeFile(index, updateIndex(existing, indexEntry(name, input)));

  const shown = (path: string) => (path.startsWith(process.cwd() + sep) ? relative(process.cwd(), path) : path);
  console.log(`report for ${runId} (${input.summary.edgeload.status}) in ${shown(out)}/: report.md, report.html, ${Object.keys(report.charts).join(", ")}`);
  console.log(`index: ${shown(index)}`);
  if (delivery && "notReconciled" in delivery) {
    console.error(`edgeload: the report's delivery is not reconciled: ${delivery.notReconciled}`);
    return EXIT.failure;
  }
  return EXIT.ok;
}

/**
 * Against the running local stack's target, which counts what it receives: the run's
 * delivery, or why its ledger could not be read. Undefined for any other target (it does
 * not count), which the report says as "not checked".
 */
async function deliveryOf(client: EdgeloadClient, runId: string, target: string, dev: DevFile | null): Promise<DeliveryOutcome | undefined> {
  const ledger = dev ? ledgerFor(target, [dev.targetUrl, ...(dev.targetProxyUrl ? [dev.targetProxyUrl] : [])], dev.targetAdminSecret) : null;
  if (!ledger) return undefined;
  try {
    return await checkDelivery(client, runId, ledger);
  } catch (error) {
    return { notReconciled: (error as Error).message };
  }
}

/** The report's data from the local state (`db`, closed after), as the coordinator would build it. */
export async function localReportInput(runId: string, db: DatabaseSync): Promise<ReportInput> {
  try {
    const reader = asSqlReader(db);
    const run = await readLocalRun(runId, () => finalSummary(reader, runId));
    if (!run) throw new CliError(`no run ${runId} in the local results`, EXIT.invalidConfig);
    if (!run.summary) throw new CliError(`run ${runId} has no stored summary yet (it has not ended): start \`edgeload dev\` to report it live`);
    const rows = await readLocalRun(runId, () => loadQueryInput(reader, runId, "duration"));
    if (!rows) throw new CliError(`no run ${runId} in the local results`, EXIT.invalidConfig);
    return reportInput(run.summary, rows);
  } finally {
    db.close();
  }
}

/** The JSON of `edgeload cf-analytics <run> --format json`, checked to be about this run. */
async function readReconciliation(path: string, runId: string): Promise<Reconciliation> {
  const doc = (await readJsonFile(path, "--cf-analytics file")) as Partial<Reconciliation>;
  if (!Array.isArray(doc.minutes) || !doc.totals || !doc.latency || !Array.isArray(doc.findings)) {
    throw new CliError(`--cf-analytics: ${path} is not the output of \`edgeload cf-analytics <run> --format json\``, EXIT.invalidConfig);
  }
  if (doc.runId !== runId) throw new CliError(`--cf-analytics: ${path} is about run ${doc.runId}, not ${runId}`, EXIT.invalidConfig);
  return doc as Reconciliation;
}
