/**
 * Scheduled runs in D1 (`schedules`, `schedule_turns`, `webhook_attempts`; migrations 0008 and
 * 0010, SCHEMA.md): every statement the schedules API and the cron tick run. A turn's or a
 * verdict's alerts are enqueued in the batch that records it (alert-outbox.ts).
 */
import type { RunStatus } from "../../core/run/protocol.ts";
import type { ScheduledVerdict } from "../../core/watch/scheduled-verdict.ts";
import type { Webhook } from "../../core/watch/schedule-input.ts";
import { enqueueAlerts, type AlertBatch } from "./alert-outbox.ts";
import { ACTIVE_STATUSES, ACTIVE_STATUS_PARAMS } from "./results-store.ts";

export interface ScheduleRow {
  readonly id: string;
  readonly name: string;
  readonly cron: string;
  readonly spec_json: string;
  readonly baseline_run_id: string | null;
  readonly webhooks_json: string;
  readonly paused: number;
  readonly created_at: number;
  readonly next_due_ms: number | null;
  readonly last_run_id: string | null;
}

export interface TurnRow {
  readonly schedule_id: string;
  readonly due_ms: number;
  readonly taken_at: number;
  readonly outcome: "started" | "skipped" | "missed" | "refused";
  readonly missed: number;
  readonly detail: string | null;
  readonly run_id: string | null;
  readonly verdict: string | null;
  readonly verdict_json: string | null;
  readonly baseline_run_id: string | null;
}

export async function insertSchedule(db: D1Database, row: ScheduleRow): Promise<void> {
  await db
    .prepare(
      "INSERT INTO schedules (id, name, cron, spec_json, baseline_run_id, webhooks_json, paused, created_at, next_due_ms, last_run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(row.id, row.name, row.cron, row.spec_json, row.baseline_run_id, row.webhooks_json, row.paused, row.created_at, row.next_due_ms, row.last_run_id)
    .run();
}

export async function getSchedule(db: D1Database, id: string): Promise<ScheduleRow | null> {
  return db.prepare("SELECT * FROM schedules WHERE id = ?").bind(id).first<ScheduleRow>();
}

export async function listSchedules(db: D1Database): Promise<ScheduleRow[]> {
  return (await db.prepare("SELECT * FROM schedules ORDER BY created_at").all<ScheduleRow>()).results;
}

/** Pauses or resumes; when resuming, the next turn is counted from now (`nextDueMs`). */
export async function setPaused(db: D1Database, id: string, paused: boolean, nextDueMs: number | null): Promise<boolean> {
  const r = await db
    .prepare("UPDATE schedules SET paused = ?, next_due_ms = ? WHERE id = ?")
    .bind(paused ? 1 : 0, nextDueMs, id)
    .run();
  return r.meta.changes > 0;
}

/** Deletes a schedule and its turns, alerts and attempts; its runs stay. */
export async function deleteSchedule(db: D1Database, id: string): Promise<boolean> {
  const [r] = await db.batch([
    db.prepare("DELETE FROM schedules WHERE id = ?").bind(id),
    db.prepare("DELETE FROM schedule_turns WHERE schedule_id = ?").bind(id),
    db.prepare("DELETE FROM webhook_attempts WHERE schedule_id = ?").bind(id),
    db.prepare("DELETE FROM alert_outbox WHERE schedule_id = ?").bind(id),
  ]);
  return r!.meta.changes > 0;
}

/**
 * Schedules whose next turn is due at `nowMs`, with whether their last run is still going: not
 * ended, and not judged yet (a run the watchdog gave its verdict on no longer holds turns back,
 * even while its coordinator is still stopping it).
 */
export async function dueSchedules(db: D1Database, nowMs: number): Promise<(ScheduleRow & { last_run_active: number })[]> {
  const { results } = await db
    .prepare(
      `SELECT s.*, CASE WHEN r.status IN ${ACTIVE_STATUS_PARAMS} AND NOT EXISTS (
           SELECT 1 FROM schedule_turns t WHERE t.schedule_id = s.id AND t.run_id = s.last_run_id AND t.verdict IS NOT NULL)
         THEN 1 ELSE 0 END AS last_run_active
       FROM schedules s LEFT JOIN runs r ON r.id = s.last_run_id
       WHERE s.next_due_ms IS NOT NULL AND s.next_due_ms <= ? ORDER BY s.next_due_ms`,
    )
    .bind(...ACTIVE_STATUSES, nowMs)
    .all<ScheduleRow & { last_run_active: number }>();
  return results;
}

/**
 * Takes a turn: records it, moves the schedule on and enqueues its alerts (a skipped or
 * missed turn's), in one batch. Returns false when another tick took it first (the turn's
 * primary key), and then changes nothing.
 */
export async function takeTurn(
  db: D1Database,
  turn: Omit<TurnRow, "verdict" | "verdict_json" | "baseline_run_id">,
  nextDueMs: number | null,
  alerts: AlertBatch | null = null,
): Promise<boolean> {
  const enqueue = alerts ? enqueueAlerts(db, alerts) : null;
  const [inserted] = await db.batch([
    db
      .prepare("INSERT OR IGNORE INTO schedule_turns (schedule_id, due_ms, taken_at, outcome, missed, detail, run_id) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .bind(turn.schedule_id, turn.due_ms, turn.taken_at, turn.outcome, turn.missed, turn.detail, turn.run_id),
    // changes(): the statement before. The turn inserted moves the schedule; the schedule moved enqueues.
    db.prepare("UPDATE schedules SET next_due_ms = ? WHERE id = ? AND changes() > 0").bind(nextDueMs, turn.schedule_id),
    ...(enqueue ? [enqueue] : []),
  ]);
  return inserted!.meta.changes > 0;
}

/**
 * A taken turn's result once its run was admitted (started) or refused, with its alerts (a
 * refusal, or the turns missed before a started one) in the same batch. Only a turn still
 * waiting for its result is settled (`run_id IS NULL`), so two ticks never settle one twice.
 */
export async function settleTurn(
  db: D1Database,
  scheduleId: string,
  dueMs: number,
  settled: { readonly outcome: "started" | "refused"; readonly runId: string | null; readonly detail: string | null },
  alerts: AlertBatch | null = null,
): Promise<void> {
  const enqueue = alerts ? enqueueAlerts(db, alerts) : null;
  await db.batch([
    db
      .prepare("UPDATE schedule_turns SET outcome = ?, run_id = ?, detail = ? WHERE schedule_id = ? AND due_ms = ? AND outcome = 'started' AND run_id IS NULL")
      .bind(settled.outcome, settled.runId, settled.detail, scheduleId, dueMs),
    ...(enqueue ? [enqueue] : []),
    ...(settled.runId ? [db.prepare("UPDATE schedules SET last_run_id = ? WHERE id = ?").bind(settled.runId, scheduleId)] : []),
  ]);
}

/** Moves a schedule's next turn without taking one (not due, paused). */
export async function setNextDue(db: D1Database, id: string, nextDueMs: number | null): Promise<void> {
  await db.prepare("UPDATE schedules SET next_due_ms = ? WHERE id = ?").bind(nextDueMs, id).run();
}

/** Started turns whose run has ended but which have no verdict yet, with the run's status. */
export async function unjudgedTurns(db: D1Database): Promise<(TurnRow & { run_status: RunStatus })[]> {
  const { results } = await db
    .prepare(
      `SELECT t.*, r.status AS run_status FROM schedule_turns t JOIN runs r ON r.id = t.run_id
       WHERE t.outcome = 'started' AND t.verdict IS NULL AND r.status NOT IN ${ACTIVE_STATUS_PARAMS} ORDER BY t.due_ms`,
    )
    .bind(...ACTIVE_STATUSES)
    .all<TurnRow & { run_status: RunStatus }>();
  return results;
}

/** The schedule's latest `limit` runs whose verdict was passed, due before `beforeMs`, newest first. */
export async function lastPassedRuns(db: D1Database, scheduleId: string, beforeMs: number, limit: number): Promise<string[]> {
  const { results } = await db
    .prepare("SELECT run_id FROM schedule_turns WHERE schedule_id = ? AND due_ms < ? AND verdict = 'passed' ORDER BY due_ms DESC LIMIT ?")
    .bind(scheduleId, beforeMs, limit)
    .all<{ run_id: string }>();
  return results.map((r) => r.run_id);
}

/**
 * Records a verdict and enqueues its alerts, in one batch, once: false when another tick
 * recorded it first (then it alerts, not this one). `also`: statements of the same batch
 * (the watchdog's end of the run).
 */
export async function recordVerdict(
  db: D1Database,
  scheduleId: string,
  dueMs: number,
  verdict: ScheduledVerdict,
  alerts: AlertBatch | null = null,
  also: readonly D1PreparedStatement[] = [],
): Promise<boolean> {
  const enqueue = alerts ? enqueueAlerts(db, alerts) : null;
  const [r] = await db.batch([
    db
      .prepare("UPDATE schedule_turns SET verdict = ?, verdict_json = ?, baseline_run_id = ? WHERE schedule_id = ? AND due_ms = ? AND verdict IS NULL")
      .bind(verdict.kind, JSON.stringify(verdict), verdict.baselineRunId, scheduleId, dueMs),
    ...(enqueue ? [enqueue] : []),
    ...also,
  ]);
  return r!.meta.changes > 0;
}

export async function scheduleTurns(db: D1Database, scheduleId: string, limit: number): Promise<TurnRow[]> {
  return (await db.prepare("SELECT * FROM schedule_turns WHERE schedule_id = ? ORDER BY due_ms DESC LIMIT ?").bind(scheduleId, limit).all<TurnRow>()).results;
}

/** One delivery attempt (alert-outbox.ts settleAttempt writes them). */
export interface AttemptRow {
  readonly schedule_id: string;
  /** null: the alert of a turn that started no run. */
  readonly run_id: string | null;
  readonly hook: number;
  readonly attempt: number;
  readonly at_ms: number;
  readonly status: number | null;
  readonly error: string | null;
  /** null for attempts made before migration 0010. */
  readonly delivery_id: string | null;
  readonly kind: string | null;
}

export async function webhookAttempts(db: D1Database, scheduleId: string, limit: number): Promise<AttemptRow[]> {
  return (
    await db.prepare("SELECT * FROM webhook_attempts WHERE schedule_id = ? ORDER BY at_ms DESC, attempt DESC LIMIT ?").bind(scheduleId, limit).all<AttemptRow>()
  ).results;
}

/** The webhooks of a stored schedule, secrets included (for delivery only). */
export function webhooksOf(row: ScheduleRow): Webhook[] {
  return JSON.parse(row.webhooks_json) as Webhook[];
}

/**
 * How a run ended: its status and its verdict's reasons (from its stored summary), or, for a
 * run ended without one (given up, ended by the watchdog), the reason it was stopped.
 */
export async function runOutcome(db: D1Database, runId: string): Promise<{ status: RunStatus; reasons: string[] } | null> {
  const row = await db
    .prepare("SELECT status, abort_reason, json_extract(summary_json, '$.edgeload.verdict.reasons') AS reasons FROM runs WHERE id = ?")
    .bind(runId)
    .first<{ status: RunStatus; abort_reason: string | null; reasons: string | null }>();
  if (!row) return null;
  const reasons = row.reasons ? (JSON.parse(row.reasons) as string[]) : [];
  return { status: row.status, reasons: reasons.length === 0 && row.abort_reason ? [row.abort_reason] : reasons };
}

/** One started turn's run as the trend page shows it (figures from the run's summary; null before it ends). */
export interface TrendRow {
  readonly due_ms: number;
  readonly run_id: string;
  readonly status: RunStatus | null;
  readonly verdict: string | null;
  readonly baseline_run_id: string | null;
  readonly p50_ms: number | null;
  readonly p95_ms: number | null;
  readonly p99_ms: number | null;
  readonly error_rate: number | null;
  readonly rate_per_s: number | null;
}

/** A schedule's started runs, oldest first (the last `limit`), with their headline figures. */
export async function scheduleTrend(db: D1Database, scheduleId: string, limit: number): Promise<TrendRow[]> {
  const { results } = await db
    .prepare(
      `SELECT * FROM (
         SELECT t.due_ms, t.run_id, r.status, t.verdict, t.baseline_run_id,
           json_extract(r.summary_json, '$.metrics.http_req_duration.med') AS p50_ms,
           json_extract(r.summary_json, '$.metrics.http_req_duration."p(95)"') AS p95_ms,
           json_extract(r.summary_json, '$.metrics.http_req_duration."p(99)"') AS p99_ms,
           json_extract(r.summary_json, '$.metrics.http_req_failed.value') AS error_rate,
           json_extract(r.summary_json, '$.metrics.http_reqs.rate') AS rate_per_s
         FROM schedule_turns t LEFT JOIN runs r ON r.id = t.run_id
         WHERE t.schedule_id = ? AND t.run_id IS NOT NULL ORDER BY t.due_ms DESC LIMIT ?
       ) ORDER BY due_ms`,
    )
    .bind(scheduleId, limit)
    .all<TrendRow>();
  return results;
}

/** A scheduled run that has not ended and has no verdict yet, with what its deadline is counted from (core/watch/watchdog.ts). */
export interface GoingRun extends TurnRow {
  readonly run_id: string;
  readonly run_status: RunStatus;
  readonly duration_ms: number;
  /** A k6 script's setup and teardown timeouts, for the phases it runs. */
  readonly phase_timeouts_ms: number;
}

/** The scheduled runs still going, for the watchdog. */
export async function goingRuns(db: D1Database): Promise<GoingRun[]> {
  const phase = (name: string) =>
    `CASE WHEN json_extract(r.spec_json, '$.script.${name}') THEN COALESCE(json_extract(r.spec_json, '$.script.${name}Timeout'), 0) ELSE 0 END`;
  const { results } = await db
    .prepare(
      `SELECT t.*, r.status AS run_status, r.duration_ms, ${phase("setup")} + ${phase("teardown")} AS phase_timeouts_ms
       FROM schedule_turns t JOIN runs r ON r.id = t.run_id
       WHERE t.outcome = 'started' AND t.verdict IS NULL AND r.status IN ${ACTIVE_STATUS_PARAMS} ORDER BY t.due_ms`,
    )
    .bind(...ACTIVE_STATUSES)
    .all<GoingRun>();
  return results;
}

/** Turns taken before `takenBeforeMs` whose tick never recorded the run it admitted or the refusal. */
export async function unsettledTurns(db: D1Database, takenBeforeMs: number): Promise<TurnRow[]> {
  return (
    await db
      .prepare("SELECT * FROM schedule_turns WHERE outcome = 'started' AND run_id IS NULL AND taken_at < ? ORDER BY due_ms")
      .bind(takenBeforeMs)
      .all<TurnRow>()
  ).results;
}

/** Marks a run ended in error when its coordinator could not be asked to stop it (the watchdog's last resort). */
export function endRunInError(db: D1Database, runId: string, reason: string, endedAtMs: number): D1PreparedStatement {
  return db
    .prepare(`UPDATE runs SET status = 'error', abort_reason = ?, ended_at = ? WHERE id = ? AND status IN ${ACTIVE_STATUS_PARAMS}`)
    .bind(reason, endedAtMs, runId, ...ACTIVE_STATUSES);
}
