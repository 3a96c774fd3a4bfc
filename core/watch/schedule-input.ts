/**
 * The body of `POST /v1/schedules`, parsed once at the edge into a typed schedule, every
 * problem reported at once. The run spec inside it is validated by the same admission as
 * `POST /v1/runs` (the coordinator's), not here.
 *
 *   {
 *     "name": "nightly login",
 *     "cron": "0 3 * * *",                      // five fields, UTC (cron.ts)
 *     "spec": { …a run spec… },
 *     "baseline": "rolling" | {"runId": "r-…"},   // default "rolling" (core/watch/baseline-rule.ts)
 *     "webhooks": [{"url": "https://hooks.example.com/x", "format": "json" | "slack",
 *                   "secret": "…",               // HMAC key; generated (and shown once) when absent
 *                   "on": ["regressed", "failed", "inconclusive"]}]   // default: every turn that does not pass (alert-rule.ts)
 *   }
 *
 * Webhook hosts must be allowed like run targets (ALLOWED_WEBHOOKS; loopback under wrangler
 * dev): an alert must not become a way to make the Worker call anywhere (SSRF).
 */
import type { Problem } from "../spec/input-problem.ts";
import { isListed, isLoopback } from "../spec/target-policy.ts";
import type { Mode } from "../run/protocol.ts";
import { parseCron, type Cron } from "./cron.ts";
import { WEBHOOK_ON_KINDS, type WebhookOnKind } from "./alert-rule.ts";

export const WEBHOOK_FORMATS = ["json", "slack"] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

export interface Webhook {
  readonly url: string;
  readonly format: WebhookFormat;
  /** HMAC-SHA256 key of the signature header; never shown after creation. */
  readonly secret: string;
  readonly on: readonly WebhookOnKind[];
}

/** A pinned run, or the schedule's last run whose verdict was passed. */
/** "rolling": the oldest of the last passed runs (core/watch/baseline-rule.ts); "last-passed" is its former name. */
export type BaselineRule = { readonly kind: "rolling" } | { readonly kind: "pinned"; readonly runId: string };

export interface ScheduleInput {
  readonly name: string;
  readonly cron: Cron;
  /** The run spec as sent; validated by the run admission. */
  readonly spec: unknown;
  readonly baseline: BaselineRule;
  readonly webhooks: readonly Webhook[];
  /** Whether a webhook's secret was generated here (the creation answer shows it, once). */
  readonly generatedSecrets: readonly number[];
}

export type ScheduleParse = { readonly ok: true; readonly schedule: ScheduleInput } | { readonly ok: false; readonly problems: readonly Problem[] };

/** Every turn that does not pass: refused, skipped and missed are heard through failed and inconclusive (alert-rule.ts). */
const DEFAULT_ON: readonly WebhookOnKind[] = ["regressed", "failed", "inconclusive"];
const MAX_WEBHOOKS = 5;
const MIN_SECRET_CHARS = 16;

/** How a deployment allows webhook hosts: a secret, like ALLOWED_TARGETS. */
export const WEBHOOK_ALLOW_HINT =
  "allow webhook hosts with `npx wrangler secret put ALLOWED_WEBHOOKS` (comma-separated origins, hosts or *.wildcards, e.g. https://hooks.slack.com)";

/**
 * @param newSecret makes a webhook's key when none is given (the caller's random source).
 */
export function parseScheduleInput(body: unknown, allowWebhooks: string | undefined, mode: Mode, newSecret: () => string): ScheduleParse {
  const problems: Problem[] = [];
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { ok: false, problems: [{ field: "(body)", detail: "a JSON object" }] };
  const b = body as Record<string, unknown>;
  const name = typeof b.name === "string" && b.name.trim() && b.name.length <= 100 ? b.name.trim() : null;
  if (!name) problems.push({ field: "name", detail: "a name of 1–100 characters" });
  const cron =
    typeof b.cron === "string"
      ? parseCron(b.cron)
      : ({ ok: false, problems: [{ field: "cron", detail: 'a five-field cron expression such as "0 3 * * *" (UTC)' }] } as const);
  if (!cron.ok) problems.push(...cron.problems);
  if (typeof b.spec !== "object" || b.spec === null || Array.isArray(b.spec)) problems.push({ field: "spec", detail: "a run spec, as POST /v1/runs takes" });
  const baseline = parseBaseline(b.baseline, problems);
  const generatedSecrets: number[] = [];
  const webhooks: Webhook[] = [];
  const list = b.webhooks ?? [];
  if (!Array.isArray(list) || list.length > MAX_WEBHOOKS) problems.push({ field: "webhooks", detail: `a list of at most ${MAX_WEBHOOKS} webhooks` });
  else
    list.forEach((w, i) => {
      const hook = parseWebhook(w, `webhooks[${i}]`, allowWebhooks, mode, problems);
      if (!hook) return;
      if (hook.secret === "") generatedSecrets.push(i);
      webhooks.push(hook.secret === "" ? { ...hook, secret: newSecret() } : hook);
    });
  if (problems.length || !cron.ok) return { ok: false, problems };
  return { ok: true, schedule: { name: name!, cron: cron.cron, spec: b.spec, baseline, webhooks, generatedSecrets } };
}

function parseBaseline(raw: unknown, problems: Problem[]): BaselineRule {
  // "last-passed" was the rule's name when it was the latest passed run; it now names the rolling rule too.
  if (raw === undefined || raw === "rolling" || raw === "last-passed") return { kind: "rolling" };
  const runId = typeof raw === "object" && raw !== null ? (raw as { runId?: unknown }).runId : undefined;
  if (typeof runId === "string" && /^r-[A-Za-z0-9_-]{1,64}$/.test(runId)) return { kind: "pinned", runId };
  problems.push({ field: "baseline", detail: '"rolling", or {"runId": "r-…"} to pin a run' });
  return { kind: "rolling" };
}

/** One webhook; its secret is "" when it is to be generated. */
function parseWebhook(raw: unknown, field: string, allowList: string | undefined, mode: Mode, problems: Problem[]): Webhook | null {
  if (typeof raw !== "object" || raw === null) {
    problems.push({ field, detail: 'an object {"url", "format", "secret", "on"}' });
    return null;
  }
  const w = raw as Record<string, unknown>;
  const before = problems.length;
  let url: URL | null = null;
  try {
    url = typeof w.url === "string" ? new URL(w.url) : null;
  } catch {}
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) problems.push({ field: `${field}.url`, detail: "an http(s) URL" });
  else {
    const problem = webhookHostProblem(url, allowList, mode);
    if (problem) problems.push({ field: `${field}.url`, detail: problem });
  }
  const format = w.format ?? "json";
  if (!WEBHOOK_FORMATS.includes(format as WebhookFormat)) problems.push({ field: `${field}.format`, detail: `one of ${WEBHOOK_FORMATS.join(", ")}` });
  const secret = w.secret ?? "";
  if (typeof secret !== "string" || (secret !== "" && secret.length < MIN_SECRET_CHARS))
    problems.push({ field: `${field}.secret`, detail: `at least ${MIN_SECRET_CHARS} characters, or leave it out to have one generated` });
  const on = w.on ?? DEFAULT_ON;
  if (!Array.isArray(on) || on.length === 0 || !on.every((v) => WEBHOOK_ON_KINDS.includes(v))) problems.push({ field: `${field}.on`, detail: onProblem(on) });
  if (problems.length > before) return null;
  return { url: url!.href, format: format as WebhookFormat, secret: secret as string, on: on as WebhookOnKind[] };
}

/** What is wrong with an `on` list; "recovered" is not chosen but follows the alerts a webhook heard. */
function onProblem(on: unknown): string {
  const list = `a non-empty list of ${WEBHOOK_ON_KINDS.join(", ")}`;
  if (Array.isArray(on) && on.includes("recovered"))
    return `${list} ("recovered" is not chosen here: it goes to every webhook that was alerted while the schedule did not pass)`;
  return list;
}

/** Why a webhook's host is refused, or null: listed in ALLOWED_WEBHOOKS, or loopback under wrangler dev. */
export function webhookHostProblem(url: URL, allowList: string | undefined, mode: Mode): string | null {
  if (isListed(url, allowList) || (isLoopback(url.hostname) && mode === "local")) return null;
  return `${url.origin} is not an allowed webhook host; ${WEBHOOK_ALLOW_HINT}`;
}

/**
 * A webhook as shown anywhere after creation: its origin only (a Slack webhook's path is
 * itself a credential) and never its secret.
 */
export function redactWebhook(w: Webhook): { url: string; format: WebhookFormat; secret: "(redacted)"; on: readonly WebhookOnKind[] } {
  return { url: `${new URL(w.url).origin}/…`, format: w.format, secret: "(redacted)", on: w.on };
}
