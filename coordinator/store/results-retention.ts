/**
 * D1's retention (issue 49; migration 0012, SCHEMA.md): a run's per-second `windows` and
 * `histograms` rows, kept RESULTS_RETENTION_DAYS after it ended, are rolled up into
 * `windows_minute` and `histograms_minute` — counts summed, statuses and custom counters
 * summed by name, histograms merged exactly bucket by bucket — and deleted, in the same
 * batch (one transaction: a minute is either still per second or wholly per minute). And
 * the alerts of scheduled turns, once settled and as old as that, are pruned from the outbox.
 *
 * Each statement works on a bounded slice (a few minutes of one run, a few hundred alerts),
 * so the cron tick (coordinator/schedule/storage-sweep.ts) sweeps a backlog a little at a time.
 */
import { FINAL_STATUSES } from "../../core/run/protocol.ts";
import { rolledUpRows, thinSeries } from "./retained-rows.ts";
import { minute, type SqlWriter } from "./sql-writer.ts";

/** `FROM from` the rows `x` of the same run, minute, region and step as the outer row `w`. */
const sameCell = (from: string, w: string) =>
  `FROM ${from} WHERE x.run_id = ${w}.run_id AND x.window_s >= ${minute(`${w}.window_s`)} AND x.window_s < ${minute(`${w}.window_s`)} + 60
   AND x.region = ${w}.region AND x.step = ${w}.step`;

const ROLL_UP_WINDOWS = `INSERT INTO windows_minute (run_id, window_s, region, step, seconds, sent, requests, failed, dropped, timeouts,
    connection_errors, status_4xx, status_5xx, checks_passed, checks_failed, bytes_received, statuses_json, custom_json, iterations)
  SELECT w.run_id, ${minute("w.window_s")}, w.region, w.step, COUNT(DISTINCT w.window_s), SUM(w.sent), SUM(w.requests), SUM(w.failed),
    SUM(w.dropped), SUM(w.timeouts), SUM(w.connection_errors), SUM(w.status_4xx), SUM(w.status_5xx), SUM(w.checks_passed),
    SUM(w.checks_failed), SUM(w.bytes_received),
    (SELECT json_group_object(k, n) FROM (SELECT s.key AS k, SUM(s.value) AS n ${sameCell("windows x, json_each(x.statuses_json) s", "w")} GROUP BY s.key)),
    CASE WHEN COUNT(w.custom_json) = 0 THEN NULL ELSE json_object(
      'c', (SELECT json(json_group_object(k, n)) FROM (SELECT c.key AS k, SUM(c.value) AS n ${sameCell("windows x, json_each(x.custom_json, '$.c') c", "w")} GROUP BY c.key)),
      'r', (SELECT json(json_group_object(k, json_array(p, t))) FROM (SELECT r.key AS k, SUM(json_extract(r.value, '$[0]')) AS p,
        SUM(json_extract(r.value, '$[1]')) AS t ${sameCell("windows x, json_each(x.custom_json, '$.r') r", "w")} GROUP BY r.key))
    ) END,
    SUM(w.iterations)
  FROM windows w WHERE w.run_id = ?1 AND w.window_s >= ?2 AND w.window_s < ?3
  GROUP BY ${minute("w.window_s")}, w.region, w.step`;

const ROLL_UP_HISTOGRAMS = `INSERT INTO histograms_minute (run_id, window_s, region, step, metric, count, sum_us, min_us, max_us, buckets)
  SELECT h.run_id, ${minute("h.window_s")}, h.region, h.step, h.metric, SUM(h.count), SUM(h.sum_us), MIN(h.min_us), MAX(h.max_us),
    (SELECT json_group_array(json_array(v, n)) FROM (SELECT json_extract(b.value, '$[0]') AS v, SUM(json_extract(b.value, '$[1]')) AS n
      ${sameCell("histograms x, json_each(x.buckets) b", "h")} AND x.metric = h.metric
      GROUP BY v ORDER BY v))
  FROM histograms h WHERE h.run_id = ?1 AND h.window_s >= ?2 AND h.window_s < ?3
  GROUP BY ${minute("h.window_s")}, h.region, h.step, h.metric`;

/** The oldest final run ended before `endedBeforeMs` not yet rolled up, with its earliest per-second window (null: none left). */
export async function runToRollUp(db: SqlWriter, endedBeforeMs: number): Promise<{ id: string; firstWindowS: number | null } | null> {
  const statuses = FINAL_STATUSES.map(() => "?").join(",");
  const [found] = (await db.batch([
    db
      .prepare(
        `SELECT r.id, (SELECT MIN(w.window_s) FROM windows w WHERE w.run_id = r.id) AS first_s,
           (SELECT MIN(h.window_s) FROM histograms h WHERE h.run_id = r.id) AS first_h
         FROM runs r WHERE r.rolled_up_at IS NULL AND r.ended_at < ? AND r.status IN (${statuses}) ORDER BY r.ended_at LIMIT 1`,
      )
      .bind(endedBeforeMs, ...FINAL_STATUSES),
  ])) as Array<{ results: Array<{ id: string; first_s: number | null; first_h: number | null }> }>;
  const row = found?.results[0];
  if (!row) return null;
  const firsts = [row.first_s, row.first_h].filter((s): s is number => s !== null);
  return { id: row.id, firstWindowS: firsts.length ? Math.min(...firsts) : null };
}

/** Rolls up one run's per-second rows in [fromS, toS) (whole minutes) and deletes them, in one batch. */
export async function rollUp(db: SqlWriter, runId: string, fromS: number, toS: number): Promise<void> {
  const range = [runId, fromS, toS];
  await db.batch([
    db.prepare(ROLL_UP_WINDOWS).bind(...range),
    db.prepare(ROLL_UP_HISTOGRAMS).bind(...range),
    db.prepare("DELETE FROM windows WHERE run_id = ?1 AND window_s >= ?2 AND window_s < ?3").bind(...range),
    db.prepare("DELETE FROM histograms WHERE run_id = ?1 AND window_s >= ?2 AND window_s < ?3").bind(...range),
    thinSeries(db, runId, fromS, toS),
  ]);
}

/** The run has no per-second rows left: its other rows are made small too (retained-rows.ts). */
export async function markRolledUp(db: SqlWriter, runId: string, nowMs: number): Promise<void> {
  await db.batch([...rolledUpRows(db, runId), db.prepare("UPDATE runs SET rolled_up_at = ? WHERE id = ?").bind(nowMs, runId)]);
}

/**
 * Deletes at most `limit` alerts created before `beforeMs` that are settled (delivered or
 * abandoned: no attempt is due) and that no streak still needs: a turn's alerts are read back
 * only until the schedule's next passing turn (store/alert-outbox.ts streakBefore, for the
 * `recovered` alert), so an alert of a streak that has not ended stays, however old.
 */
export async function pruneSettledAlerts(db: SqlWriter, beforeMs: number, limit: number): Promise<void> {
  await db.batch([
    db
      .prepare(
        `DELETE FROM alert_outbox WHERE rowid IN (SELECT o.rowid FROM alert_outbox o
           WHERE o.next_attempt_at IS NULL AND o.created_at < ?1
             AND o.due_ms <= (SELECT MAX(t.due_ms) FROM schedule_turns t WHERE t.schedule_id = o.schedule_id AND t.verdict = 'passed')
           LIMIT ?2)`,
      )
      .bind(beforeMs, limit),
  ]);
}
