/**
 * The results database's writes and the run listings the API reads (D1 `runs`, `shards`,
 * `windows`, `histograms`, `series`). Every D1 statement of the coordinator lives under
 * coordinator/store/: the reads shared with the CLI in results-queries.ts, baselines and
 * k6 imports in their own files, the schema and its migrations in schema.ts. The schema is documented in
 * migrations/SCHEMA.md.
 *
 * Write bound: for each second of a run the coordinator writes at most
 * regions × steps × (1 window row + 5 histogram rows + the scenario's custom trends),
 * whatever the request rate and the shard count, because shards are merged per region
 * before anything reaches D1. Rows go out in batched multi-row INSERTs that respect D1's
 * 100-bound-parameter limit.
 */
import type { Histogram } from "../../core/metrics/histogram.ts";
import { ACTIVE_STATUSES, type RunStatus, type ShardTelemetry } from "../../core/run/protocol.ts";
import { groupSummary } from "../../core/run/summary-figures.ts";
import type { SeriesRow, WindowCell } from "../../core/run/window-cell.ts";
import { runQuery, type QueryRow } from "../../core/results/query.ts";
import { loadQueryInput } from "./results-queries.ts";
import { type MetricStats, TRENDS, type TrendName } from "../../core/metrics/metric-stats.ts";

/** Histogram metric names in D1, by trend. */
export const HISTOGRAM_METRICS: Record<TrendName, string> = {
  duration: "http_req_duration",
  ttfb: "http_req_waiting",
  corrected: "http_req_corrected",
  lag: "schedule_lag",
  slotWait: "slot_wait",
  clientDelay: "client_delay",
};

/** D1 allows 100 bound parameters per statement. */
const MAX_PARAMS = 100;

const WINDOW_COLUMNS = [
  "run_id",
  "window_s",
  "region",
  "step",
  "sent",
  "requests",
  "failed",
  "dropped",
  "timeouts",
  "connection_errors",
  "status_4xx",
  "status_5xx",
  "checks_passed",
  "checks_failed",
  "bytes_received",
  "statuses_json",
  "custom_json",
  "iterations",
] as const;
const HISTOGRAM_COLUMNS = ["run_id", "window_s", "region", "step", "metric", "count", "sum_us", "min_us", "max_us", "buckets"] as const;

const SERIES_COLUMNS = ["run_id", "name", "labels", "t_ms", "window_s", "value", "shard"] as const;

/** Statements writing scraped series samples (D1 `series`). */
export function seriesStatements(db: D1Database, runId: string, rows: readonly SeriesRow[]): D1PreparedStatement[] {
  return multiRowInserts(
    db,
    "series",
    SERIES_COLUMNS,
    rows.map((r) => [runId, r.name, canonicalLabels(r.labels), r.tMs, r.windowS, storedValue(r.value), r.shard]),
  );
}

/** Labels as JSON with sorted keys, so one series always has one spelling. */
export function canonicalLabels(labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

/** SQLite has no NaN or infinities: NULL and ±1e308 instead. */
function storedValue(value: number): number | null {
  if (Number.isNaN(value)) return null;
  if (value === Infinity) return 1e308;
  if (value === -Infinity) return -1e308;
  return value;
}

/** Statements writing these cells; run them in one `db.batch` (a transaction). */
export function windowStatements(db: D1Database, runId: string, cells: readonly WindowCell[]): D1PreparedStatement[] {
  const windowRows: unknown[][] = [];
  const histogramRows: unknown[][] = [];
  for (const { windowS, region, step, stats } of cells) {
    const c = stats.counters;
    windowRows.push([
      runId,
      windowS,
      region,
      step,
      c.sent,
      c.completed,
      c.failed,
      c.dropped,
      c.timeouts,
      c.connectionErrors,
      c.status4xx,
      c.status5xx,
      c.checksPassed,
      c.checksFailed,
      c.bytesReceived,
      JSON.stringify(stats.statuses),
      customJson(stats),
      c.iterations,
    ]);
    const histograms: Array<readonly [string, Histogram]> = TRENDS.map((t) => [HISTOGRAM_METRICS[t], stats.trends[t]] as const);
    if (stats.hasCustom) histograms.push(...stats.custom.trends);
    for (const [metric, h] of histograms) {
      if (h.count === 0) continue;
      histogramRows.push([runId, windowS, region, step, metric, h.count, Math.round(h.sum), h.min, h.max, JSON.stringify(h.buckets())]);
    }
  }
  return [...multiRowInserts(db, "windows", WINDOW_COLUMNS, windowRows), ...multiRowInserts(db, "histograms", HISTOGRAM_COLUMNS, histogramRows)];
}

/** Custom counters and rates of a window row (custom trends go to `histograms`). */
function customJson(stats: MetricStats): string | null {
  if (!stats.hasCustom) return null;
  const { c, r } = stats.custom.toWire();
  return c || r ? JSON.stringify({ ...(c ? { c } : {}), ...(r ? { r } : {}) }) : null;
}

function multiRowInserts(db: D1Database, table: string, columns: readonly string[], rows: unknown[][]): D1PreparedStatement[] {
  const perStatement = Math.max(1, Math.floor(MAX_PARAMS / columns.length));
  const out: D1PreparedStatement[] = [];
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    const placeholders = chunk.map(() => `(${columns.map(() => "?").join(",")})`).join(",");
    out.push(db.prepare(`INSERT INTO ${table} (${columns.join(",")}) VALUES ${placeholders}`).bind(...chunk.flat()));
  }
  return out;
}

export interface RunRow {
  readonly id: string;
  readonly name: string;
  readonly status: RunStatus;
  readonly target: string;
  readonly created_at: number;
  readonly t0: number | null;
  readonly ended_at: number | null;
  readonly duration_ms: number;
  readonly thresholds_ok: number | null;
  readonly abort_reason: string | null;
}

export function insertRun(
  db: D1Database,
  row: { id: string; name: string; target: string; createdAt: number; durationMs: number; specJson: string; planJson: string },
): D1PreparedStatement {
  return db
    .prepare("INSERT INTO runs (id, name, status, target, created_at, duration_ms, spec_json, plan_json) VALUES (?, ?, 'pending', ?, ?, ?, ?, ?)")
    .bind(row.id, row.name, row.target, row.createdAt, row.durationMs, row.specJson, row.planJson);
}

export function updateRunStatus(
  db: D1Database,
  id: string,
  status: RunStatus,
  fields: { t0?: number; endedAt?: number; summaryJson?: string; thresholdsOk?: boolean; abortReason?: string | null } = {},
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE runs SET status = ?, t0 = COALESCE(?, t0), ended_at = COALESCE(?, ended_at), summary_json = COALESCE(?, summary_json),
       thresholds_ok = COALESCE(?, thresholds_ok), abort_reason = COALESCE(?, abort_reason) WHERE id = ?`,
    )
    .bind(
      status,
      fields.t0 ?? null,
      fields.endedAt ?? null,
      fields.summaryJson ?? null,
      fields.thresholdsOk === undefined ? null : fields.thresholdsOk ? 1 : 0,
      fields.abortReason ?? null,
      id,
    );
}

export function insertShards(db: D1Database, runId: string, shards: ReadonlyArray<{ index: number; region: string; segment: string }>): D1PreparedStatement[] {
  const rows = shards.map((s) => [runId, s.index, s.region, s.segment]);
  return multiRowInserts(db, "shards", ["run_id", "shard", "region", "segment"], rows);
}

export function updateShard(
  db: D1Database,
  runId: string,
  s: { index: number; colo: string; stats: MetricStats; restarts: number; invocations: number; subrequests: number; peakInFlight: number; summaryJson: string },
): D1PreparedStatement {
  const c = s.stats.counters;
  return db
    .prepare(
      `UPDATE shards SET colo = ?, requests = ?, failed = ?, dropped = ?, restarts = ?, invocations = ?, subrequests = ?,
       peak_in_flight = ?, summary_json = ?, histograms_json = ? WHERE run_id = ? AND shard = ?`,
    )
    .bind(
      s.colo,
      c.completed,
      c.failed,
      c.dropped,
      s.restarts,
      s.invocations,
      s.subrequests,
      s.peakInFlight,
      s.summaryJson,
      shardHistogramsJson(s.stats),
      runId,
      s.index,
    );
}

/** A shard's whole-run latency histograms, in the row shape of `histograms` (see 0003). */
function shardHistogramsJson(stats: MetricStats): string {
  const out: Record<string, unknown> = {};
  for (const trend of ["duration", "ttfb", "corrected"] as const) {
    const h = stats.trends[trend];
    if (h.count)
      out[HISTOGRAM_METRICS[trend]] = { count: h.count, sum_us: Math.round(h.sum), min_us: h.min, max_us: h.max, buckets: JSON.stringify(h.buckets()) };
  }
  return JSON.stringify(out);
}

export { ACTIVE_STATUSES };

/** The active statuses as a statement's parameters, `(?,?,?)`: bind `...ACTIVE_STATUSES` where it stands. */
export const ACTIVE_STATUS_PARAMS = `(${ACTIVE_STATUSES.map(() => "?").join(",")})`;

export async function countActiveRuns(db: D1Database): Promise<number> {
  const row = await db
    .prepare(`SELECT COUNT(*) AS n FROM runs WHERE status IN ${ACTIVE_STATUS_PARAMS}`)
    .bind(...ACTIVE_STATUSES)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** Runs a /metrics scrape covers: every active run, and those ended at or after `endedSinceMs`. */
export async function runsToScrape(db: D1Database, endedSinceMs: number): Promise<string[]> {
  const { results } = await db
    .prepare(`SELECT id FROM runs WHERE status IN ${ACTIVE_STATUS_PARAMS} OR ended_at >= ? ORDER BY id`)
    .bind(...ACTIVE_STATUSES, endedSinceMs)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}

/**
 * A caller's own read-only SELECT (already checked and bounded by core/results/read-only-sql.ts),
 * for POST /v1/sql. Throws what D1 throws.
 */
export async function selectRows(db: D1Database, sql: string, params: readonly unknown[]): Promise<Record<string, unknown>[]> {
  return (
    await db
      .prepare(sql)
      .bind(...params)
      .all()
  ).results;
}

export async function listRuns(db: D1Database, options: { limit: number; status?: string }): Promise<RunRow[]> {
  const where = options.status ? "WHERE status = ?" : "";
  const binds = options.status ? [options.status, options.limit] : [options.limit];
  const { results } = await db
    .prepare(
      `SELECT id, name, status, target, created_at, t0, ended_at, duration_ms, thresholds_ok, abort_reason FROM runs ${where} ORDER BY created_at DESC LIMIT ?`,
    )
    .bind(...binds)
    .all<RunRow>();
  return results;
}

/**
 * Per-second series by region plus "all": request rate, failures, drops and
 * http_req_duration percentiles (ms), from histograms merged per second (core/results/query.ts);
 * per minute (`windowS` 60) for a run past its retention, whose seconds were rolled up.
 */
export async function timeseries(db: D1Database, runId: string): Promise<{ windowS: number; points: QueryRow[] }> {
  const input = await loadQueryInput(db, runId, "duration");
  if (!input) return { windowS: 1, points: [] };
  const everyS = input.resolutionS ?? 1;
  const metrics = ["requests", "failed", "dropped", "rps", "p50", "p95", "p99"] as const;
  const byRegion = runQuery(input, { by: ["region"], everyS, metrics, trend: "duration" });
  const all = runQuery(input, { by: [], everyS, metrics, trend: "duration" }).map((r) => ({ t: r.t!, region: "all", ...r }));
  const points = [...byRegion, ...all].sort((a, b) => (a.t as number) - (b.t as number) || String(a.region).localeCompare(String(b.region)));
  return { windowS: everyS, points };
}

/** The statement storing one shard's totals and telemetry at the end of its run (by its coordinator, or its aggregator). */
export function shardRowStatement(
  db: D1Database,
  runId: string,
  index: number,
  stats: MetricStats,
  t: ShardTelemetry | null,
  elapsedS: number,
): D1PreparedStatement {
  return updateShard(db, runId, {
    index,
    colo: t?.colo ?? "unknown",
    stats,
    restarts: t?.restarts ?? 0,
    invocations: t?.invocations ?? 0,
    subrequests: t?.subrequests ?? 0,
    peakInFlight: t?.peakInFlight ?? 0,
    summaryJson: JSON.stringify(groupSummary(stats, elapsedS)),
  });
}
