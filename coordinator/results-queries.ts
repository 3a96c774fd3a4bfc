/**
 * The analytics reads of the results database: a run's rows for core/query.ts. Written
 * against the small slice of D1's API it uses (SqlReader), so the CLI runs the very same
 * statements on the local state's SQLite file when no stack is running
 * (scripts/cli/local-results.ts). The writes live in results-store.ts.
 */
import { QUERY_TRENDS, type HistogramRow, type QueryInput, type QueryTrend, type ShardRow, type WindowRow } from "../core/query.ts";

interface SqlStatement {
  bind(...params: unknown[]): SqlStatement;
}

/** What D1Database offers and the local adapter implements. */
export interface SqlReader {
  prepare(sql: string): SqlStatement;
  batch(statements: SqlStatement[]): Promise<Array<{ results: Record<string, unknown>[] }>>;
}

/**
 * A run's rows for core/query.ts: its windows, the histograms of one trend and its shards,
 * with the run's duration. Null when the run is unknown.
 */
export async function loadQueryInput(db: SqlReader, runId: string, trend: QueryTrend): Promise<QueryInput | null> {
  const [runs, windows, histograms, shards] = await db.batch([
    db.prepare("SELECT t0, ended_at, duration_ms FROM runs WHERE id = ?").bind(runId),
    db.prepare(
      `SELECT window_s, region, step, requests, iterations, failed, dropped, timeouts, connection_errors, status_4xx, status_5xx, statuses_json
       FROM windows WHERE run_id = ?`,
    ).bind(runId),
    db.prepare("SELECT window_s, region, step, metric, count, sum_us, min_us, max_us, buckets FROM histograms WHERE run_id = ? AND metric = ?").bind(runId, QUERY_TRENDS[trend]),
    // SELECT *: a local state made before migration 0003 has no histograms_json yet.
    db.prepare("SELECT * FROM shards WHERE run_id = ?").bind(runId),
  ]);
  const run = runs!.results[0] as { t0: number | null; ended_at: number | null; duration_ms: number } | undefined;
  if (!run) return null;
  const durationS = run.t0 !== null && run.ended_at !== null ? (run.ended_at - run.t0) / 1000 : run.duration_ms / 1000;
  return {
    windows: windows!.results as unknown as WindowRow[],
    histograms: histograms!.results as unknown as HistogramRow[],
    shards: shards!.results.map((r) => ({ ...r, histograms_json: r.histograms_json ?? null })) as unknown as ShardRow[],
    durationS,
  };
}

