/**
 * Delivers the schedules' alerts from the outbox (store/alert-outbox.ts), a bounded number
 * each cron tick: signed, with their delivery id (core/watch/webhook.ts), every attempt
 * logged in `webhook_attempts`. An alert that does not get through is tried again at a later
 * tick (deliveryStep: 1 min, 2, 4, … capped at 1 h, for 24 h), so it outlives the tick, the
 * isolate and an outage of the receiver. A vault that cannot be read counts as a failed
 * attempt: the alert stays in the outbox.
 *
 * The host was allowed when the schedule was created and is checked again here
 * (workers/outbound/policies.ts webhookPolicy), in case the allow-list shrank since; an alert
 * to a host no longer allowed is abandoned. Redirects are not followed: a webhook must not
 * lead the Worker somewhere else.
 */
import type { Outbound } from "../../core/outbound/outbound-request.ts";
import { deliveryHeaders, deliveryStep, webhookBody, type AlertEvent, type DeliveryStep } from "../../core/watch/webhook.ts";
import type { Env } from "../../workers/env.ts";
import { outbound } from "../../workers/outbound/outbound-fetch.ts";
import { webhookPolicy } from "../../workers/outbound/policies.ts";
import { claimAlert, dueAlerts, settleAttempt, type OutboxRow } from "../store/alert-outbox.ts";
import { vaultOf, type ScheduleSecrets } from "./schedule-vault.ts";

/** How long one delivery may take before it counts as failed. */
const ATTEMPT_TIMEOUT_MS = 10_000;
/** Alerts one tick tries at most (the rest wait for the next tick, a minute later). */
export const MAX_DELIVERIES_PER_TICK = 20;
/** How long a claimed alert is held: should the tick die mid-attempt, a later one retries it. */
const CLAIM_LEASE_MS = 2 * 60_000;

/** What one attempt came to. `abandon`: no attempt can ever succeed (the webhook is gone, its host no longer allowed). */
interface Attempted {
  readonly status: number | null;
  readonly error: string | null;
  readonly abandon?: string;
}

/** Tries every alert due at `nowMs` (the tick's time), at most MAX_DELIVERIES_PER_TICK; returns how many got through. */
export async function deliverDueAlerts(env: Env, nowMs: number): Promise<number> {
  const due = await dueAlerts(env.DB, nowMs, MAX_DELIVERIES_PER_TICK);
  if (due.length === 0) return 0;
  const toHooks = outbound(webhookPolicy(env));
  // One vault read per schedule and tick; a read that throws fails that schedule's attempts only.
  const vaults = new Map<string, Promise<ScheduleSecrets | null>>();
  const secretsOf = (id: string) => vaults.get(id) ?? vaults.set(id, vaultOf(env, id).get()).get(id)!;
  const steps = await Promise.all(due.map((row) => deliverOne(env.DB, toHooks, row, secretsOf, nowMs)));
  return steps.filter((s) => s?.kind === "delivered").length;
}

async function deliverOne(
  db: D1Database,
  toHooks: Outbound,
  row: OutboxRow,
  secretsOf: (id: string) => Promise<ScheduleSecrets | null>,
  nowMs: number,
): Promise<DeliveryStep | null> {
  if (!(await claimAlert(db, row, nowMs + CLAIM_LEASE_MS))) return null; // another tick has it
  const attempts = row.attempts + 1;
  const result = await attempt(toHooks, row, secretsOf);
  const step: DeliveryStep = result.abandon
    ? { kind: "abandoned", reason: result.abandon }
    : deliveryStep({ attempts, createdAtMs: row.created_at, nowMs, status: result.status });
  await settleAttempt(db, row, { attempt: attempts, atMs: nowMs, status: result.status, error: result.error }, step);
  return step;
}

async function attempt(toHooks: Outbound, row: OutboxRow, secretsOf: (id: string) => Promise<ScheduleSecrets | null>): Promise<Attempted> {
  let secrets: ScheduleSecrets | null;
  try {
    secrets = await secretsOf(row.schedule_id);
  } catch (e) {
    return { status: null, error: `the schedule's vault could not be read (${(e instanceof Error ? e.message : String(e)).slice(0, 200)})` };
  }
  const hook = secrets?.webhooks[row.hook];
  if (!hook) return { status: null, error: null, abandon: "the schedule or its webhook no longer exists" };
  if (toHooks.policy(new URL(hook.url))) return { status: null, error: null, abandon: "host no longer allowed" };
  // sentAt is the real time of this attempt (the receiver holds it to its own clock), not the tick's.
  const delivery = { id: row.delivery_id, sentAtMs: Date.now() };
  const body = webhookBody(hook.format, row.kind, JSON.parse(row.event_json) as AlertEvent, delivery);
  try {
    const response = await toHooks.fetch(hook.url, {
      method: "POST",
      redirect: "manual",
      headers: await deliveryHeaders(hook.secret, body, delivery),
      body,
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    await response.body?.cancel();
    return { status: response.status, error: null };
  } catch (e) {
    return { status: null, error: e instanceof Error ? e.name : "fetch failed" };
  }
}
