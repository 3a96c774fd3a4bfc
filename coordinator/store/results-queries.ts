/**
 * The analytics reads of the results database: a run's rows for core/results/query.ts. Written
 * against the small slice of D1's API it uses (SqlReader), so the CLI runs the very same
 * statements on the local state's SQLite file when no stack is running
 * (cli/local-results.ts). The writes live in results-store.ts.
 *
 * The run's final summary has one reader, finalSummary(): the API's /summary, the report,
 * crosscheck and the CLI's local report all read it here (the coordinator object only
 * answers for a run whose summary is not stored yet).
 */
import type { RunStatus } from "../../core/run/protocol.ts";
import type { Summary } from "../../core/run/summary.ts";
import { QUERY_TRENDS, type HistogramRow, type QueryInput, type QueryTrend, type ShardRow, type WindowRow } from "../../core/results/query.ts";

interface SqlStatement {
  bind(...params: unknown[]): SqlStatement;
}

/** What D1Database offers and the local adapter implements. */
export interface SqlReader {
  prepare(sql: string): SqlStatement;
  batch(statements: SqlStatement[]): Promise<Array<{ results: Record<string, unknown>[] }>>;
}

/** The first row of one statement, or null. */
async function firstRow<T>(db: SqlReader, statement: SqlStatement): Promise<T | null> {
  const [rows] = await db.batch([statement]);
  return (rows?.results[0] as T | undefined) ?? null;
}

/** Whether the results database knows the run: the one existence check of every route. */
export async function runExists(db: SqlReader, runId: string): Promise<boolean> {
  return (await firstRow(db, db.prepare("SELECT 1 AS yes FROM runs WHERE id = ?").bind(runId))) !== null;
}

/** A stored run's status and, once it ended and was written, its final summary. */
export interface StoredSummary {
  readonly status: RunStatus;
  /** Null while the run goes, or when it ended without its summary reaching D1 (`error`). */
  readonly summary: Summary | null;
}

/** The run's status and final summary as stored; null for an unknown run. */
export async function finalSummary(db: SqlReader, runId: string): Promise<StoredSummary | null> {
  const row = await firstRow<{ status: RunStatus; summary_json: string | null }>(
    db,
    db.prepare("SELECT status, summary_json FROM runs WHERE id = ?").bind(runId),
  );
  if (!row) return null;
  return { status: row.status, summary: row.summary_json ? (JSON.parse(row.summary_json) as Summary) : null };
}

/** The per-second tables, and the per-minute ones their rows are rolled up into after the retention (migration 0012). */
const BY_SECOND = { windows: "windows", histograms: "histograms", resolutionS: 1 } as const;
const BY_MINUTE = { windows: "windows_minute", histograms: "histograms_minute", resolutionS: 60 } as const;

/** A run's windows and histograms of one metric from one pair of tables. */
function windowStatements(db: SqlReader, tables: typeof BY_SECOND | typeof BY_MINUTE, runId: string, metric: string): SqlStatement[] {
  return [
    db
      .prepare(
        `SELECT window_s, region, step, requests, iterations, failed, dropped, timeouts, connection_errors, status_4xx, status_5xx, statuses_json
       FROM ${tables.windows} WHERE run_id = ?`,
      )
      .bind(runId),
    db
      .prepare(`SELECT window_s, region, step, metric, count, sum_us, min_us, max_us, buckets FROM ${tables.histograms} WHERE run_id = ? AND metric = ?`)
      .bind(runId, metric),
  ];
}

/**
 * A run's rows for core/results/query.ts: its windows, the histograms of one trend and its shards,
 * with the run's duration. Null when the run is unknown. A run older than the retention has its
 * rows per minute (`resolutionS` 60): read from the per-minute tables, as the same columns.
 */
export async function loadQueryInput(db: SqlReader, runId: string, trend: QueryTrend): Promise<QueryInput | null> {
  const [runs, secondWindows, secondHistograms, shards] = await db.batch([
    db.prepare("SELECT t0, ended_at, duration_ms, json_extract(summary_json, '$.edgeload.clock.resolutionMs') AS clock_ms FROM runs WHERE id = ?").bind(runId),
    ...windowStatements(db, BY_SECOND, runId, QUERY_TRENDS[trend]),
    // SELECT *: a local state made before migration 0003 has no histograms_json yet.
    db.prepare("SELECT * FROM shards WHERE run_id = ?").bind(runId),
  ]);
  const run = runs!.results[0] as { t0: number | null; ended_at: number | null; duration_ms: number; clock_ms: number | null } | undefined;
  if (!run) return null;
  const durationS = run.t0 !== null && run.ended_at !== null ? (run.ended_at - run.t0) / 1000 : run.duration_ms / 1000;
  let [windows, histograms, resolutionS] = [secondWindows!.results, secondHistograms!.results, 1];
  if (windows.length === 0) {
    // Rolled up, or a run that wrote nothing. A local state made before 0012 has no such tables: nothing rolled up.
    const minute = await db.batch(windowStatements(db, BY_MINUTE, runId, QUERY_TRENDS[trend])).catch(() => null);
    if (minute?.[0]?.results.length) [windows, histograms, resolutionS] = [minute[0].results, minute[1]!.results, BY_MINUTE.resolutionS];
  }
  return {
    windows: windows as unknown as WindowRow[],
    histograms: histograms as unknown as HistogramRow[],
    shards: shards!.results.map((r) => ({ ...r, histograms_json: r.histograms_json ?? null })) as unknown as ShardRow[],
    durationS,
    clockResolutionMs: run.clock_ms ?? null,
    ...(resolutionS === 1 ? {} : { resolutionS }),
  };
}

/**
 * A run's scraped series samples (D1 `series`), oldest first; `?2` narrows to one metric
 * name (NULL for all). One statement for the API route and the CLI alike.
 */
export const SERIES_SQL = `SELECT window_s, t_ms, name, labels, value FROM series
  WHERE run_id = ?1 AND (?2 IS NULL OR name = ?2) ORDER BY name, labels, t_ms`;

export interface SeriesSamples {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** [seconds since T0 (window), epoch ms of the scrape, value] */
  readonly points: ReadonlyArray<readonly [number, number, number | null]>;
}

/** Rows of SERIES_SQL grouped into one entry per series (name + labels). */
export function groupSeries(rows: ReadonlyArray<Record<string, unknown>>): SeriesSamples[] {
  const out = new Map<string, { name: string; labels: Record<string, string>; points: Array<readonly [number, number, number | null]> }>();
  for (const r of rows) {
    const key = `${String(r.name)}${String(r.labels)}`;
    let entry = out.get(key);
    if (!entry) out.set(key, (entry = { name: String(r.name), labels: JSON.parse(String(r.labels)) as Record<string, string>, points: [] }));
    entry.points.push([Number(r.window_s), Number(r.t_ms), r.value === null ? null : Number(r.value)]);
  }
  return [...out.values()];
}

export async function loadSeries(db: SqlReader, runId: string, name: string | null): Promise<SeriesSamples[]> {
  const [rows] = await db.batch([db.prepare(SERIES_SQL).bind(runId, name)]);
  return groupSeries(rows!.results);
}
