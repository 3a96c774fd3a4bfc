/**
 * `edgeload report`: a run's report as files.
 *
 *   edgeload report <run> [--out reports/<run>] [--url URL --token TOKEN] [--local]
 *
 * Writes `<out>/report.md` with its SVG charts beside it and `<out>/report.html` (the same
 * report as one page), then adds or replaces the report's row in `INDEX.md` next to the
 * report folder. The report's data comes from the API (GET /v1/runs/:id/report?format=json);
 * with no API reachable, or with --local, from the local state's results database, so runs
 * made by `npm run demo` can be reported afterwards with nothing running.
 */
import type { Reconciliation } from "../../cloudflare/analytics/reconciliation.ts";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { finalSummary, loadQueryInput } from "../../coordinator/store/results-queries.ts";
import { reportInput, type ReportInput } from "../../reports/report-input.ts";
import { indexEntry, updateIndex } from "../../reports/report-index.ts";
import { renderReport } from "../../reports/report.ts";
import { CliError, connect, EXIT, readJsonFile } from "./connection.ts";
import { parseCommand } from "./option-table.ts";
import { REPORT_COMMAND } from "./tables/results-tables.ts";
import { asSqlReader, openLocalResults } from "./local-results.ts";
import type { EdgeloadClient } from "./client.ts";
import type { Delivery } from "../../core/run/delivery.ts";
import { checkDelivery, ledgerFor } from "./delivery-check.ts";
import { readDevFile } from "./dev-file.ts";

/** A report folder's name: it becomes a link in the index, so plain characters only. */
const REPORT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export async function reportCommand(args: string[]): Promise<number> {
  const { values: v, positionals } = parseCommand(REPORT_COMMAND, args);
  const runId = positionals[0];
  if (!runId) throw new CliError("a run id is required (see `edgeload runs`)", EXIT.invalidConfig);
  const out = resolve(v.out ?? join("reports", runId));
  const name = basename(out);
  if (!REPORT_NAME.test(name)) throw new CliError(`--out: the folder name "${name}" must be letters, digits, ".", "_" or "-"`, EXIT.invalidConfig);

  const client = v.local ? null : await connect(v).catch(() => null);
  const input = client ? await client.reportInput(runId) : await localReportInput(runId);
  const cloudflare = v["cf-analytics"] ? await readReconciliation(v["cf-analytics"], runId) : undefined;
  const delivery = client ? await deliveryOf(client, runId, input.summary.edgeload.target) : null;
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
  return EXIT.ok;
}

/** Against the running local stack's target, which counts what it receives: the run's delivery. */
async function deliveryOf(client: EdgeloadClient, runId: string, target: string): Promise<Delivery | null> {
  const dev = await readDevFile();
  const ledger = dev ? ledgerFor(target, [dev.targetUrl, ...(dev.targetProxyUrl ? [dev.targetProxyUrl] : [])], dev.targetAdminSecret) : null;
  return ledger ? checkDelivery(client, runId, ledger).catch(() => null) : null;
}

/** The report's data from the local state, as the coordinator would build it. */
async function localReportInput(runId: string): Promise<ReportInput> {
  const db = openLocalResults();
  if (!db)
    throw new CliError("no API to talk to and no local results in .edgeload/state: run `npm run demo` or `edgeload dev` first, or pass --url and --token");
  try {
    const reader = asSqlReader(db);
    const run = await finalSummary(reader, runId);
    if (!run) throw new CliError(`no run ${runId} in the local results`);
    if (!run.summary) throw new CliError(`run ${runId} has no stored summary yet (it has not ended): start \`edgeload dev\` to report it live`);
    const rows = await loadQueryInput(reader, runId, "duration");
    if (!rows) throw new CliError(`no run ${runId} in the local results`);
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
