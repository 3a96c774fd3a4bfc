/**
 * `edgeload query`: analytics over stored runs.
 *
 *   edgeload query <run> [--by region,step] [--every 1m] [--metrics rps,p50,p95,p99,error_rate]
 *                        [--trend duration|ttfb|corrected] [--format table|json|csv]
 *   edgeload query --sql "SELECT … ?1 …" [--param VALUE]... [--format …]
 *   edgeload query <run> --series [NAME] [--format …]     (the target's scraped series)
 *
 * Talks to the API that is named (--url/--token, EDGELOAD_URL, or a running `edgeload dev`)
 * and fails when it cannot; with --local, or no API named at all, reads the local state's
 * results database directly, so runs made by `npm run demo` can be queried afterwards with
 * nothing running (connection.ts connectUnlessLocal).
 */
import { seriesKey } from "../core/formats/prometheus-text-parser.ts";
import { msDecimals } from "../core/metrics/clock-resolution.ts";
import { LATENCY_METRICS, parseQuery, runQuery, toCsv, type QueryRow } from "../core/results/query.ts";
import { readOnlySqlProblem } from "../core/results/read-only-sql.ts";
import { table } from "../core/run/text-format.ts";
import { finalSummary, groupSeries, loadQueryInput, SERIES_SQL } from "../coordinator/store/results-queries.ts";
import type { EdgeloadClient } from "./client.ts";
import { CliError, connectUnlessLocal, EXIT } from "./connection.ts";
import { asSqlReader, localResultsOrFail, readLocalRun } from "./local-results.ts";
import { parseCommand } from "./option-table.ts";
import { QUERY_COMMAND } from "./tables/analysis-tables.ts";

export async function queryCommand(args: string[]): Promise<number> {
  const { values: v, positionals } = parseCommand(QUERY_COMMAND, args);
  if (!["table", "json", "csv"].includes(v.format)) throw new CliError(`--format: "${v.format}" must be table, json or csv`, EXIT.invalidConfig);
  const client = await connectUnlessLocal(v);
  const started = performance.now();
  let rows: QueryRow[];
  if (v.sql !== undefined) {
    const problem = readOnlySqlProblem(v.sql);
    if (problem) throw new CliError(`--sql: ${problem}`, EXIT.invalidConfig);
    const params = v.param ?? [];
    rows = client ? ((await client.sql(v.sql, params)).rows as QueryRow[]) : localSql(v.sql, params);
  } else if (v.series) {
    // The same statement the API's /series route runs, here as rows: one per sample.
    const runId = positionals[0];
    if (!runId) throw new CliError("a run id is required for --series (see `edgeload runs`)", EXIT.invalidConfig);
    const params = [runId, positionals[1] ?? null];
    const raw = client
      ? (await client.sql(SERIES_SQL, params)).rows
      : localDb()
          .prepare(SERIES_SQL)
          .all(...params);
    rows = groupSeries(raw as Record<string, unknown>[]).flatMap((s) =>
      s.points.map(([windowS, , value]) => ({
        second: windowS,
        series: seriesKey(s),
        value,
      })),
    );
  } else {
    const runId = positionals[0];
    if (!runId) throw new CliError("a run id is required (see `edgeload runs`), or --sql", EXIT.invalidConfig);
    const params = { by: v.by ?? "", every: v.every ?? "run", metrics: v.metrics ?? "requests,rps,error_rate,p50,p95,p99", trend: v.trend ?? "duration" };
    const q = parseQuery(params);
    if (!q.ok) throw new CliError(`bad query:\n${q.problems.map((p) => `  - ${p.field}: ${p.detail}`).join("\n")}`, EXIT.invalidConfig);
    rows = client ? (await client.query(runId, params)).rows : await localQuery(runId, q.query);
    // A table shows latencies to the step of the clock that measured them (clock-resolution.ts).
    if (v.format === "table") rows = toClockStep(rows, await clockOf(runId, client));
  }
  const tookMs = performance.now() - started;
  print(rows, v.format as "table" | "json" | "csv");
  if (v.format === "table") console.error(`${rows.length} row${rows.length === 1 ? "" : "s"} in ${tookMs.toFixed(0)} ms (${client ? "API" : "local state"})`);
  return EXIT.ok;
}

function localDb() {
  return localResultsOrFail();
}

function localSql(sql: string, params: readonly string[]): QueryRow[] {
  try {
    return localDb()
      .prepare(sql)
      .all(...params) as QueryRow[];
  } catch (error) {
    throw new CliError(`the query failed: ${(error as Error).message}`, EXIT.invalidConfig);
  }
}

async function localQuery(runId: string, q: Parameters<typeof runQuery>[1]): Promise<QueryRow[]> {
  const input = await readLocalRun(runId, () => loadQueryInput(asSqlReader(localDb()), runId, q.trend));
  if (!input) throw new CliError(`no run ${runId} in the local results`, EXIT.invalidConfig);
  return runQuery(input, q);
}

/**
 * The run's detected clock step in ms, from its summary; null when the summary has none (a
 * run stored before clocks were detected). A summary that cannot be had is an error: a
 * table rounded to no clock would pass for one measured finer than it was.
 */
async function clockOf(runId: string, client: EdgeloadClient | null): Promise<number | null> {
  if (client) return (await client.summary(runId)).edgeload.clock?.resolutionMs ?? null;
  const stored = await readLocalRun(runId, () => finalSummary(asSqlReader(localDb()), runId));
  return stored?.summary?.edgeload.clock?.resolutionMs ?? null;
}

/** Latency columns rounded to the clock's step: at 1 ms, 13.024 is 13. */
export function toClockStep(rows: readonly QueryRow[], resolutionMs: number | null): QueryRow[] {
  if (resolutionMs === null) return [...rows];
  const decimals = msDecimals(resolutionMs);
  const latency = new Set<string>(LATENCY_METRICS);
  return rows.map(
    (r) =>
      Object.fromEntries(
        Object.entries(r).map(([k, value]) => [k, latency.has(k) && typeof value === "number" ? Number(value.toFixed(decimals)) : value]),
      ) as QueryRow,
  );
}

function print(rows: readonly QueryRow[], format: "table" | "json" | "csv"): void {
  if (format === "json") {
    console.log(JSON.stringify(rows, null, 2));
    return;
  }
  if (format === "csv") {
    process.stdout.write(toCsv(rows));
    return;
  }
  if (rows.length === 0) {
    console.log("(no rows)");
    return;
  }
  const columns = Object.keys(rows[0]!);
  console.log(
    table(
      columns,
      rows.map((r) => columns.map((c) => (r[c] === null || r[c] === undefined ? "-" : String(r[c])))),
    ).join("\n"),
  );
}
