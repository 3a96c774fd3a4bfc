/**
 * A turn's alerts, built for the batch that records the turn or its verdict: what the alert
 * says (core/watch/webhook.ts AlertEvent), which webhooks hear it (core/watch/alert-rule.ts,
 * from the `on` lists D1 keeps, so no vault read stands between a verdict and its alert) and a
 * random delivery id each. Delivering them is notify.ts's, at this tick or a later one.
 */
import { heardInStreak, turnAlerts, type AlertKind, type WebhookOnKind } from "../../core/watch/alert-rule.ts";
import type { ScheduledVerdict } from "../../core/watch/scheduled-verdict.ts";
import type { AlertEvent } from "../../core/watch/webhook.ts";
import type { Env } from "../../workers/env.ts";
import { streakBefore, type AlertBatch } from "../store/alert-outbox.ts";
import { recordVerdict, type ScheduleRow, type TurnRow } from "../store/schedules.ts";

type TurnFacts = Pick<TurnRow, "due_ms" | "outcome" | "missed" | "detail">;

/** The `on` lists of a schedule's webhooks, by index (D1 keeps them beside the redacted URLs). */
function listenersOf(schedule: ScheduleRow): { on: readonly WebhookOnKind[] }[] {
  return (JSON.parse(schedule.webhooks_json) as { on: WebhookOnKind[] }[]).map((w) => ({ on: w.on }));
}

/** A run as an alert links it; links point at EDGELOAD_PUBLIC_URL (a cron tick has no request origin). */
export function runLink(env: Pick<Env, "EDGELOAD_PUBLIC_URL">, id: string, status: string): NonNullable<AlertEvent["run"]> {
  return { id, status, url: `${env.EDGELOAD_PUBLIC_URL ?? ""}/v1/runs/${id}` };
}

export function eventOf(schedule: ScheduleRow, turn: TurnFacts, run: AlertEvent["run"], verdict: ScheduledVerdict | null): AlertEvent {
  return {
    schedule: { id: schedule.id, name: schedule.name },
    dueAt: new Date(turn.due_ms).toISOString(),
    turn: { outcome: turn.outcome, missed: turn.missed, detail: turn.detail },
    run,
    verdict,
  };
}

/** The batch of alerts of `kind` for one turn of `schedule`; null when no webhook hears it. */
export function alertBatch(schedule: ScheduleRow, kind: AlertKind, event: AlertEvent, nowMs: number, heardStreak: readonly number[] = []): AlertBatch | null {
  const alerts = turnAlerts(kind, listenersOf(schedule), heardStreak).map((a) => ({ ...a, deliveryId: crypto.randomUUID() }));
  if (alerts.length === 0) return null;
  return { scheduleId: schedule.id, dueMs: Date.parse(event.dueAt), runId: event.run?.id ?? null, eventJson: JSON.stringify(event), nowMs, alerts };
}

/**
 * Records a started turn's verdict with its alerts in one batch; a passing turn after a streak
 * of turns that did not is a recovery for the webhooks that heard the streak. `also`: more
 * statements of that batch. False when another tick recorded the verdict first.
 */
export async function recordJudged(
  env: Env,
  schedule: ScheduleRow,
  turn: TurnFacts & { readonly run_id: string },
  runStatus: string,
  verdict: ScheduledVerdict,
  nowMs: number,
  also: readonly D1PreparedStatement[] = [],
): Promise<boolean> {
  let event = eventOf(schedule, turn, runLink(env, turn.run_id, runStatus), verdict);
  let heard: number[] = [];
  if (verdict.kind === "passed") {
    const streak = await streakBefore(env.DB, schedule.id, turn.due_ms);
    heard = heardInStreak(streak.alerts);
    // The turns missed just before this one did not pass either.
    const turns = streak.turns + turn.missed;
    if (heard.length) event = { ...event, streak: { turns, since: new Date(streak.sinceMs ?? turn.due_ms).toISOString() } };
  }
  return recordVerdict(env.DB, schedule.id, turn.due_ms, verdict, alertBatch(schedule, verdict.kind, event, nowMs, heard), also);
}
