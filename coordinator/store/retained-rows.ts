/**
 * The other D1 rows that grow with every run, kept RESULTS_RETENTION_DAYS like its per-second
 * windows (issue 49; SCHEMA.md, "Nothing left behind"), then made small or deleted by the cron
 * tick's sweep, a bounded slice at a time:
 *
 * - `series` (a scrape step's samples, one a scrape a series): thinned to one sample a minute
 *   per series and shard — the minute's last, so a counter still reads its whole minute and a
 *   gauge its value at the minute — in the same batch as the run's windows of that minute are
 *   rolled up (results-retention.ts rollUp), so a minute is wholly per second or per minute;
 * - `shards.histograms_json` (each shard's whole-run histograms, several KB a shard: ~200 MB
 *   for a ten-minute 1,000,000/s run): dropped when the run is rolled up; its counters stay,
 *   and a query by shard or colo then answers counts without percentiles, as for a run made
 *   before migration 0003;
 * - `webhook_attempts` (a row per delivery attempt of a scheduled turn's alert): deleted once
 *   older than the retention; the alerts' own rows follow their own rule (pruneSettledAlerts).
 *
 * A run's own row, its `schedule_turns` row, its imports and baselines are one row each and
 * stay: the history of a schedule (its streaks and baselines) is read from them.
 *
 * And the runs whose R2 objects the sweep deletes as old (coordinator/schedule/artifact-sweep.ts;
 * `runs.artifacts_swept_at`, migration 0013), and whether a script bundle is still wanted.
 */
import { FINAL_STATUSES } from "../../core/run/protocol.ts";
import { minute, type SqlWriter } from "./sql-writer.ts";

type Statement = ReturnType<SqlWriter["prepare"]>;

/**
 * Deletes every sample of run ?1 in [?2, ?3) (whole minutes) but the last of its minute, per
 * series (name and labels) and shard: a later one of the same minute exists.
 */
const THIN_SERIES = `DELETE FROM series WHERE rowid IN (
  SELECT s.rowid FROM series s
  WHERE s.run_id = ?1 AND s.window_s >= ?2 AND s.window_s < ?3
    AND EXISTS (SELECT 1 FROM series l
      WHERE l.run_id = s.run_id AND l.name = s.name AND l.labels = s.labels AND l.shard = s.shard
        AND l.window_s >= ${minute("s.window_s")} AND l.window_s < ${minute("s.window_s")} + 60
        AND (l.t_ms > s.t_ms OR (l.t_ms = s.t_ms AND l.rowid > s.rowid))))`;

/** The statement that thins run `runId`'s series samples in [fromS, toS), whole minutes (see the header). */
export function thinSeries(db: SqlWriter, runId: string, fromS: number, toS: number): Statement {
  return db.prepare(THIN_SERIES).bind(runId, fromS, toS);
}

/** Seconds far enough either side of t0 to cover every sample of a run. */
const ALL_OF_A_RUN = [-(2 ** 31), 2 ** 31] as const;

/**
 * The statements that finish a run's rows once no per-second row is left: any series sample a
 * rollup batch did not reach is thinned, and its shards' histograms are dropped.
 */
export function rolledUpRows(db: SqlWriter, runId: string): Statement[] {
  return [
    thinSeries(db, runId, ...ALL_OF_A_RUN),
    db.prepare("UPDATE shards SET histograms_json = NULL WHERE run_id = ? AND histograms_json IS NOT NULL").bind(runId),
  ];
}

/** Deletes at most `limit` delivery attempts made before `beforeMs`, oldest first. */
export async function pruneOldAttempts(db: SqlWriter, beforeMs: number, limit: number): Promise<void> {
  await db.batch([
    db
      .prepare("DELETE FROM webhook_attempts WHERE rowid IN (SELECT rowid FROM webhook_attempts WHERE at_ms < ?1 ORDER BY at_ms LIMIT ?2)")
      .bind(beforeMs, limit),
  ]);
}

/** A run past the retention whose R2 objects are not yet deleted: its id and its spec as stored (it names its bundles). */
export interface RunToSweep {
  readonly id: string;
  readonly specJson: string;
}

/** At most `limit` final runs ended before `endedBeforeMs` whose R2 objects are kept still, oldest first. */
export async function runsToSweep(db: D1Database, endedBeforeMs: number, limit: number): Promise<RunToSweep[]> {
  const statuses = FINAL_STATUSES.map(() => "?").join(",");
  const { results } = await db
    .prepare(`SELECT id, spec_json FROM runs WHERE artifacts_swept_at IS NULL AND ended_at < ? AND status IN (${statuses}) ORDER BY ended_at LIMIT ?`)
    .bind(endedBeforeMs, ...FINAL_STATUSES, limit)
    .all<{ id: string; spec_json: string }>();
  return results.map((r) => ({ id: r.id, specJson: r.spec_json }));
}

/** The run's R2 objects are gone. */
export async function markSwept(db: D1Database, runId: string, nowMs: number): Promise<void> {
  await db.prepare("UPDATE runs SET artifacts_swept_at = ? WHERE id = ?").bind(nowMs, runId).run();
}

/**
 * Whether script bundle `bundle` (its SHA-256, named in the specs that use it) is still wanted:
 * a run created from `sinceMs` on names it, or a schedule does (its next turn uploads nothing).
 */
export async function bundleInUse(db: D1Database, bundle: string, sinceMs: number): Promise<boolean> {
  const row = await db
    .prepare(
      `SELECT EXISTS (SELECT 1 FROM runs WHERE created_at >= ?2 AND instr(spec_json, ?1) > 0)
           OR EXISTS (SELECT 1 FROM schedules WHERE instr(spec_json, ?1) > 0) AS used`,
    )
    .bind(bundle, sinceMs)
    .first<{ used: number }>();
  return row?.used === 1;
}
