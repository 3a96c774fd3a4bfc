/**
 * The scheduled turns' alerts in D1 (`alert_outbox`, `webhook_attempts`; migration 0010,
 * SCHEMA.md): an alert is enqueued by a statement that joins the batch recording its turn
 * or verdict, so neither is stored without the other; each cron tick then claims what is
 * due and records every attempt (coordinator/schedule/notify.ts).
 */
import type { AlertKind, HookAlert } from "../../core/watch/alert-rule.ts";
import type { DeliveryStep } from "../../core/watch/webhook.ts";

/** An alert to enqueue: its delivery id (random, kept across retries), webhook and kind. */
export interface NewAlert extends HookAlert {
  readonly deliveryId: string;
}

/** What the alerts of one turn share. */
export interface AlertBatch {
  readonly scheduleId: string;
  readonly dueMs: number;
  readonly runId: string | null;
  readonly eventJson: string;
  readonly nowMs: number;
  readonly alerts: readonly NewAlert[];
}

export interface OutboxRow {
  readonly delivery_id: string;
  readonly schedule_id: string;
  readonly due_ms: number;
  readonly kind: AlertKind;
  readonly hook: number;
  readonly run_id: string | null;
  readonly event_json: string;
  readonly created_at: number;
  readonly next_attempt_at: number | null;
  readonly attempts: number;
}

/**
 * The statement that enqueues a turn's alerts, due at once, to be put in a batch right after
 * the statement recording the turn or its verdict: it inserts only if that one changed a row
 * (`changes()`), so a tick that lost the race to record it enqueues nothing. The unique
 * (schedule, turn, kind, webhook) keeps an alert single whichever tick enqueued it.
 * null when there is nothing to enqueue.
 */
export function enqueueAlerts(db: D1Database, batch: AlertBatch): D1PreparedStatement | null {
  if (batch.alerts.length === 0) return null;
  const list = JSON.stringify(batch.alerts.map((a) => ({ id: a.deliveryId, hook: a.hook, kind: a.kind })));
  return db
    .prepare(
      `INSERT OR IGNORE INTO alert_outbox (delivery_id, schedule_id, due_ms, kind, hook, run_id, event_json, created_at, next_attempt_at)
       SELECT json_extract(a.value, '$.id'), ?1, ?2, json_extract(a.value, '$.kind'), json_extract(a.value, '$.hook'), ?3, ?4, ?5, ?5
       FROM json_each(?6) a WHERE changes() > 0`,
    )
    .bind(batch.scheduleId, batch.dueMs, batch.runId, batch.eventJson, batch.nowMs, list);
}

/** What came before a schedule's turn since its last passing one: the turns that did not pass and the alerts sent for them. */
export interface Streak {
  /** Turns that did not pass, missed ones counted one by one. */
  readonly turns: number;
  /** The earliest of them (epoch ms); null when there were none. */
  readonly sinceMs: number | null;
  /** Alerts enqueued for them (and for the turn itself before its verdict: a missed count). */
  readonly alerts: HookAlert[];
}

/** The streak before turn `dueMs` of a schedule. */
export async function streakBefore(db: D1Database, scheduleId: string, dueMs: number): Promise<Streak> {
  const lastPass = `COALESCE((SELECT MAX(due_ms) FROM schedule_turns WHERE schedule_id = ?1 AND due_ms < ?2 AND verdict = 'passed'), -1)`;
  const [turns, alerts] = await db.batch([
    db
      .prepare(
        `SELECT COALESCE(SUM(CASE WHEN outcome = 'missed' THEN missed ELSE 1 + missed END), 0) AS turns, MIN(due_ms) AS since_ms
         FROM schedule_turns WHERE schedule_id = ?1 AND due_ms < ?2 AND due_ms > ${lastPass}`,
      )
      .bind(scheduleId, dueMs),
    db.prepare(`SELECT hook, kind FROM alert_outbox WHERE schedule_id = ?1 AND due_ms <= ?2 AND due_ms > ${lastPass}`).bind(scheduleId, dueMs),
  ]);
  const head = (turns!.results[0] ?? { turns: 0, since_ms: null }) as { turns: number; since_ms: number | null };
  return { turns: head.turns, sinceMs: head.since_ms, alerts: alerts!.results as HookAlert[] };
}

/**
 * Alerts due at `nowMs`, at most `limit`: of each webhook's undelivered alerts only the
 * oldest, so one webhook hears a schedule's alerts in the order they were raised (a newer
 * one waits behind an older one's retries).
 */
export async function dueAlerts(db: D1Database, nowMs: number, limit: number): Promise<OutboxRow[]> {
  const { results } = await db
    .prepare(
      `SELECT o.* FROM alert_outbox o
       WHERE o.next_attempt_at <= ?1 AND NOT EXISTS (
         SELECT 1 FROM alert_outbox p WHERE p.schedule_id = o.schedule_id AND p.hook = o.hook AND p.next_attempt_at IS NOT NULL
           AND (p.created_at < o.created_at OR (p.created_at = o.created_at AND p.rowid < o.rowid)))
       ORDER BY o.next_attempt_at, o.created_at LIMIT ?2`,
    )
    .bind(nowMs, limit)
    .all<OutboxRow>();
  return results;
}

/**
 * Claims an alert for one attempt: counts it and holds it until `leaseUntilMs` (should the
 * tick die mid-attempt, a later one tries again). False when another tick claimed it first.
 */
export async function claimAlert(db: D1Database, row: OutboxRow, leaseUntilMs: number): Promise<boolean> {
  const r = await db
    .prepare("UPDATE alert_outbox SET attempts = attempts + 1, next_attempt_at = ? WHERE delivery_id = ? AND attempts = ? AND next_attempt_at IS NOT NULL")
    .bind(leaseUntilMs, row.delivery_id, row.attempts)
    .run();
  return r.meta.changes > 0;
}

/** One attempt's result, as logged. */
export interface AttemptOutcome {
  readonly attempt: number;
  readonly atMs: number;
  readonly status: number | null;
  readonly error: string | null;
}

/** Records an attempt and what becomes of the alert (deliveryStep), in one batch. */
export async function settleAttempt(db: D1Database, row: OutboxRow, outcome: AttemptOutcome, step: DeliveryStep): Promise<void> {
  const abandoned = step.kind === "abandoned" ? `abandoned: ${step.reason}` : null;
  const error = [outcome.error, abandoned].filter(Boolean).join("; ") || null;
  await db.batch([
    db
      .prepare(`UPDATE alert_outbox SET next_attempt_at = ?, delivered_at = ?, abandoned_at = ?, last_status = ?, last_error = ? WHERE delivery_id = ?`)
      .bind(
        step.kind === "retry" ? step.atMs : null,
        step.kind === "delivered" ? outcome.atMs : null,
        step.kind === "abandoned" ? outcome.atMs : null,
        outcome.status,
        error,
        row.delivery_id,
      ),
    db
      .prepare(
        "INSERT OR IGNORE INTO webhook_attempts (schedule_id, run_id, hook, attempt, at_ms, status, error, delivery_id, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      )
      .bind(row.schedule_id, row.run_id, row.hook, outcome.attempt, outcome.atMs, outcome.status, error, row.delivery_id, row.kind),
  ]);
}
