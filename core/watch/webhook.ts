/**
 * What a schedule's webhook sends, how it is signed, and when a failed delivery is tried
 * again. Pure but for WebCrypto (crypto.subtle, in Workers and Node alike).
 *
 * Signature (in the manner of Stripe's and Slack's request signing): the headers
 * `x-edgeload-timestamp: <unix seconds>` and
 * `x-edgeload-signature: v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`. A receiver
 * recomputes it over the raw body and refuses a timestamp more than five minutes old. That
 * bounds a replay to five minutes; it does not stop one within them (the payload carries no
 * delivery id a receiver could remember).
 */
import { hmacSha256Hex } from "../data/web-crypto.ts";
import { describeRegression, type ScheduledVerdict } from "./scheduled-verdict.ts";
import type { WebhookFormat } from "./schedule-input.ts";

export const SIGNATURE_HEADER = "x-edgeload-signature";
export const TIMESTAMP_HEADER = "x-edgeload-timestamp";

/** What a verdict notification is about. */
export interface VerdictEvent {
  readonly schedule: { readonly id: string; readonly name: string };
  readonly run: { readonly id: string; readonly status: string; readonly url: string };
  readonly dueAt: string;
  readonly verdict: ScheduledVerdict;
}

/** The body of one notification in a webhook's format. */
export function webhookBody(format: WebhookFormat, event: VerdictEvent): string {
  if (format === "slack") return JSON.stringify({ text: slackText(event) });
  return JSON.stringify({
    type: "edgeload.scheduled-run.verdict",
    schedule: event.schedule,
    run: event.run,
    dueAt: event.dueAt,
    verdict: event.verdict.kind,
    reasons: event.verdict.reasons,
    baselineRunId: event.verdict.baselineRunId,
    regressions: event.verdict.regressions,
  });
}

const ICONS = { passed: ":white_check_mark:", regressed: ":chart_with_upwards_trend:", failed: ":x:", inconclusive: ":grey_question:" } as const;

/** Slack's incoming-webhook body is `{"text": …}` with mrkdwn links `<url|label>`. */
function slackText(e: VerdictEvent): string {
  const head = `${ICONS[e.verdict.kind]} edgeload schedule *${e.schedule.name}*: run <${e.run.url}|${e.run.id}> *${e.verdict.kind}*`;
  const against = e.verdict.baselineRunId ? ` (baseline ${e.verdict.baselineRunId})` : "";
  const lines = e.verdict.regressions.length ? e.verdict.regressions.map((r) => `• ${describeRegression(r)}`) : e.verdict.reasons.map((r) => `• ${r}`);
  return [head + against, ...lines].join("\n");
}

/** The two signature headers for `body` sent at `nowMs`. */
export async function signatureHeaders(secret: string, body: string, nowMs: number): Promise<Record<string, string>> {
  const timestamp = String(Math.floor(nowMs / 1000));
  return { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: `v1=${await hmacSha256Hex(secret, `${timestamp}.${body}`)}` };
}

/** Deliveries of one notification, the first included. */
export const WEBHOOK_ATTEMPTS = 4;

/**
 * The wait before attempt `attempt` (1-based) after the previous failed: none before the
 * first, then 1 s, 4 s, 16 s; null once every attempt is spent, or when the answer says a
 * retry cannot help (a 4xx other than 408 and 429: the receiver refused this request).
 */
export function retryDelayMs(attempt: number, lastStatus: number | null, baseMs = 1000): number | null {
  if (attempt <= 1) return 0;
  if (attempt > WEBHOOK_ATTEMPTS) return null;
  if (lastStatus !== null && lastStatus >= 400 && lastStatus < 500 && lastStatus !== 408 && lastStatus !== 429) return null;
  return baseMs * 4 ** (attempt - 2);
}
