/**
 * What a schedule's webhook sends, how it is signed, and when an undelivered alert is tried
 * again. Pure but for WebCrypto (crypto.subtle, in Workers and Node alike).
 *
 * Signature (in the manner of Stripe's and Slack's request signing): the headers
 * `x-edgeload-timestamp: <unix seconds>` and
 * `x-edgeload-signature: v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`. A receiver
 * recomputes it over the raw body and refuses a timestamp more than five minutes old; that
 * bounds a replay to five minutes. Within them, and across edgeload's own retries, the
 * delivery id drops it: each alert has one (`x-edgeload-delivery`, and `deliveryId` inside
 * the signed JSON body, beside `sentAt`), the same on every attempt, so a receiver that
 * remembers the ids it has processed handles each alert once (docs/schedules.md).
 *
 * Retries run across cron ticks from a durable outbox (coordinator/schedule/notify.ts):
 * 1 min, 2, 4, … capped at 1 h between attempts, for up to 24 h (deliveryStep).
 */
import { hmacSha256Hex } from "../data/web-crypto.ts";
import type { AlertKind } from "./alert-rule.ts";
import { describeRegression, type ScheduledVerdict } from "./scheduled-verdict.ts";
import type { WebhookFormat } from "./schedule-input.ts";

export const SIGNATURE_HEADER = "x-edgeload-signature";
export const TIMESTAMP_HEADER = "x-edgeload-timestamp";
export const DELIVERY_HEADER = "x-edgeload-delivery";

/** What a turn's alert is about; the same for every webhook and kind of that turn. */
export interface AlertEvent {
  readonly schedule: { readonly id: string; readonly name: string };
  readonly dueAt: string;
  readonly turn: { readonly outcome: "started" | "skipped" | "missed" | "refused"; readonly missed: number; readonly detail: string | null };
  /** null for a turn that started no run (refused, skipped, missed). */
  readonly run: { readonly id: string; readonly status: string; readonly url: string } | null;
  /** The run's verdict; null for a turn without one. */
  readonly verdict: ScheduledVerdict | null;
  /** A passing turn after a streak of turns that did not: how many, since when. */
  readonly streak?: { readonly turns: number; readonly since: string };
}

/** One delivery of an alert: its id (the same on every attempt) and when this attempt was sent. */
export interface Delivery {
  readonly id: string;
  readonly sentAtMs: number;
}

/** Why the turn alerts as `kind`, in words: the verdict's reasons, or the turn's own detail. */
export function alertReasons(kind: AlertKind, e: AlertEvent): string[] {
  const runReasons = [...(e.verdict?.reasons ?? [])];
  if (kind === "recovered" && e.streak) return [`passed after ${e.streak.turns} turn(s) that did not, since ${e.streak.since}`, ...runReasons];
  if (kind === "missed") {
    // A missed turn counts itself; a started one that came after an outage counts the turns before it.
    if (e.turn.outcome !== "missed") return [`${e.turn.missed} turn(s) before this one went by without a run`];
    return [`${e.turn.missed} turn(s) went by without a run${e.turn.detail ? `: ${e.turn.detail}` : ""}`];
  }
  if (kind === "refused" || kind === "skipped") return [e.turn.detail ?? `the turn was ${kind}`];
  return runReasons;
}

/** The body of one alert in a webhook's format. */
export function webhookBody(format: WebhookFormat, kind: AlertKind, event: AlertEvent, delivery: Delivery): string {
  if (format === "slack") return JSON.stringify({ text: slackText(kind, event) });
  return JSON.stringify({
    type: "edgeload.scheduled-run.verdict",
    deliveryId: delivery.id,
    sentAt: new Date(delivery.sentAtMs).toISOString(),
    schedule: event.schedule,
    dueAt: event.dueAt,
    verdict: kind,
    turn: event.turn,
    run: event.run,
    reasons: alertReasons(kind, event),
    baselineRunId: event.verdict?.baselineRunId ?? null,
    regressions: kind === "regressed" ? (event.verdict?.regressions ?? []) : [],
  });
}

const ICONS: Record<AlertKind, string> = {
  passed: ":white_check_mark:",
  recovered: ":large_green_circle:",
  regressed: ":chart_with_upwards_trend:",
  failed: ":x:",
  inconclusive: ":grey_question:",
  refused: ":no_entry:",
  skipped: ":fast_forward:",
  missed: ":hourglass:",
};

/** Slack's incoming-webhook body is `{"text": …}` with mrkdwn links `<url|label>`; it has no room for the delivery id, which the header carries. */
function slackText(kind: AlertKind, e: AlertEvent): string {
  const what = e.run ? `run <${e.run.url}|${e.run.id}>` : `turn of ${e.dueAt}`;
  const head = `${ICONS[kind]} edgeload schedule *${e.schedule.name}*: ${what} *${kind}*`;
  const against = kind === "regressed" && e.verdict?.baselineRunId ? ` (baseline ${e.verdict.baselineRunId})` : "";
  const regressions = kind === "regressed" ? (e.verdict?.regressions ?? []) : [];
  const lines = regressions.length ? regressions.map((r) => `• ${describeRegression(r)}`) : alertReasons(kind, e).map((r) => `• ${r}`);
  return [head + against, ...lines].join("\n");
}

/** The two signature headers for `body` sent at `nowMs`. */
export async function signatureHeaders(secret: string, body: string, nowMs: number): Promise<Record<string, string>> {
  const timestamp = String(Math.floor(nowMs / 1000));
  return { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: `v1=${await hmacSha256Hex(secret, `${timestamp}.${body}`)}` };
}

/** Every header of one delivery: the content type, the delivery id and the signature. */
export async function deliveryHeaders(secret: string, body: string, delivery: Delivery): Promise<Record<string, string>> {
  return {
    "content-type": "application/json",
    "user-agent": "edgeload-webhook/2",
    [DELIVERY_HEADER]: delivery.id,
    ...(await signatureHeaders(secret, body, delivery.sentAtMs)),
  };
}

/** The wait after the first failed attempt; it doubles with each one. */
export const FIRST_RETRY_MS = 60_000;
/** The longest wait between two attempts. */
export const MAX_RETRY_MS = 60 * 60_000;
/** How long after it was enqueued an alert is still tried. */
export const GIVE_UP_AFTER_MS = 24 * 60 * 60_000;

export type DeliveryStep =
  | { readonly kind: "delivered" }
  | { readonly kind: "retry"; readonly atMs: number }
  | { readonly kind: "abandoned"; readonly reason: string };

export interface AttemptResult {
  /** Attempts made so far, this one included. */
  readonly attempts: number;
  readonly createdAtMs: number;
  readonly nowMs: number;
  /** The receiver's HTTP status; null when there was no answer (or no attempt could be made). */
  readonly status: number | null;
}

/**
 * What becomes of an alert after an attempt: delivered (2xx); abandoned when the receiver
 * refused it (a 4xx other than 408 and 429: the same bytes will be refused again) or when
 * the next attempt would come more than GIVE_UP_AFTER_MS after it was enqueued; otherwise
 * tried again after 1 min, 2, 4, … capped at 1 h.
 *
 * @example
 * deliveryStep({ attempts: 3, createdAtMs: 0, nowMs: 420_000, status: 503 }) // { kind: "retry", atMs: 660_000 }
 */
export function deliveryStep(r: AttemptResult): DeliveryStep {
  if (r.status !== null && r.status >= 200 && r.status < 300) return { kind: "delivered" };
  if (r.status !== null && r.status >= 400 && r.status < 500 && r.status !== 408 && r.status !== 429)
    return { kind: "abandoned", reason: `the receiver refused it (HTTP ${r.status})` };
  const waitMs = Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, r.attempts - 1), MAX_RETRY_MS);
  const atMs = r.nowMs + waitMs;
  if (atMs - r.createdAtMs > GIVE_UP_AFTER_MS) return { kind: "abandoned", reason: `not delivered within 24 h (${r.attempts} attempts)` };
  return { kind: "retry", atMs };
}
