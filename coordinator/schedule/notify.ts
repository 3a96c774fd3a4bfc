/**
 * Delivers a scheduled run's verdict to the schedule's webhooks that asked for it: signed
 * (core/watch/webhook.ts), retried with backoff, every attempt logged in D1
 * (`webhook_attempts`). The host was allowed when the schedule was created and is checked
 * again here (workers/outbound/policies.ts webhookPolicy), in case the allow-list shrank
 * since. Redirects are not followed: a webhook must not lead the Worker somewhere else.
 */
import type { Outbound } from "../../core/outbound/outbound-request.ts";
import type { Webhook } from "../../core/watch/schedule-input.ts";
import { retryDelayMs, signatureHeaders, webhookBody, type VerdictEvent } from "../../core/watch/webhook.ts";
import { logAttempt } from "../store/schedules.ts";

/** How long one delivery may take before it counts as failed. */
const ATTEMPT_TIMEOUT_MS = 10_000;

/** `toHooks`: the way out to the deployment's ALLOWED_WEBHOOKS (webhookPolicy). */
export async function notifyVerdict(db: D1Database, toHooks: Outbound, webhooks: readonly Webhook[], event: VerdictEvent): Promise<void> {
  await Promise.all(
    webhooks.map(async (hook, index) => {
      if (!hook.on.includes(event.verdict.kind)) return;
      const refused = toHooks.policy(new URL(hook.url));
      if (refused) {
        await logAttempt(db, {
          schedule_id: event.schedule.id,
          run_id: event.run.id,
          hook: index,
          attempt: 1,
          at_ms: Date.now(),
          status: null,
          error: "host no longer allowed",
        });
        return;
      }
      await deliver(db, toHooks, hook, index, event);
    }),
  );
}

async function deliver(db: D1Database, toHooks: Outbound, hook: Webhook, index: number, event: VerdictEvent): Promise<void> {
  const body = webhookBody(hook.format, event);
  let lastStatus: number | null = null;
  for (let attempt = 1; ; attempt++) {
    const waitMs = retryDelayMs(attempt, lastStatus);
    if (waitMs === null) return;
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    const atMs = Date.now();
    let error: string | null = null;
    try {
      const response = await toHooks.fetch(hook.url, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/json", "user-agent": "edgeload-webhook/1", ...(await signatureHeaders(hook.secret, body, Date.now())) },
        body,
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
      await response.body?.cancel();
      lastStatus = response.status;
    } catch (e) {
      lastStatus = null;
      error = e instanceof Error ? e.name : "fetch failed";
    }
    await logAttempt(db, { schedule_id: event.schedule.id, run_id: event.run.id, hook: index, attempt, at_ms: atMs, status: lastStatus, error });
    if (lastStatus !== null && lastStatus >= 200 && lastStatus < 300) return;
  }
}
