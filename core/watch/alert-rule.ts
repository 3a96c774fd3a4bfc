/**
 * Which turns of a schedule alert, as what, and which webhooks hear it. A turn that does not
 * pass always alerts (DESIGN, unattended operation: every non-pass is said where users look):
 *
 *   passed, regressed, failed, inconclusive   a started turn's run, judged (scheduled-verdict.ts)
 *   refused    the admission said no (a cap, the allow-list, MAX_CONCURRENT_RUNS, …)
 *   skipped    the schedule's previous run was still going
 *   missed     turns went by without a run (an outage); counted, not piled up
 *   recovered  the first passing turn after a streak of turns that did not pass
 *
 * A webhook's `on` names the kinds it hears. The three turn kinds are also heard through the
 * kind that already meant them, in the manner of Grafana's "Error → Alerting, NoData → NoData"
 * state mapping: `failed` hears `refused` (the check could not run, and will not until someone
 * changes the deployment or the spec: the same action as a failure), `inconclusive` hears
 * `skipped` and `missed` (no result for that turn). So lists written before these kinds existed,
 * and the default, still hear of every turn that did not pass.
 *
 * `recovered` is not chosen in `on`: it goes to exactly the webhooks that were alerted during
 * the streak, as Grafana sends "resolved" to the contact point that was told "firing". A
 * webhook that heard nothing of the streak gets the turn as `passed`, if it listens for that.
 */
import { SCHEDULED_VERDICTS } from "./scheduled-verdict.ts";

/** What a webhook's `on` may name. */
export const WEBHOOK_ON_KINDS = [...SCHEDULED_VERDICTS, "refused", "skipped", "missed"] as const;
export type WebhookOnKind = (typeof WEBHOOK_ON_KINDS)[number];

/** Every kind of alert a turn can send. */
export const ALERT_KINDS = [...WEBHOOK_ON_KINDS, "recovered"] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

/** The kind that already meant a turn kind, for `on` lists that do not name it. */
const HEARD_THROUGH: Partial<Record<AlertKind, WebhookOnKind>> = { refused: "failed", skipped: "inconclusive", missed: "inconclusive" };

/** Whether a webhook listening for `on` hears an alert of `kind` (never `recovered`: see recoveredAlerts). */
export function selects(on: readonly WebhookOnKind[], kind: AlertKind): boolean {
  if (kind === "recovered") return false;
  const through = HEARD_THROUGH[kind];
  return on.includes(kind) || (through !== undefined && on.includes(through));
}

/** One alert to enqueue: webhook `hook` (its index in the schedule's list) hears `kind`. */
export interface HookAlert {
  readonly hook: number;
  readonly kind: AlertKind;
}

/**
 * The alerts of one turn of `kind` for a schedule's webhooks.
 *
 * @param heardStreak the webhooks alerted since the schedule's last passing turn (heardInStreak):
 *   when `kind` is passed and this is not empty, the turn ends a streak.
 * @example
 * turnAlerts("passed", [{ on: ["failed"] }, { on: ["passed"] }], [0])
 * // [{ hook: 0, kind: "recovered" }, { hook: 1, kind: "passed" }]
 */
export function turnAlerts(kind: AlertKind, hooks: readonly { readonly on: readonly WebhookOnKind[] }[], heardStreak: readonly number[]): HookAlert[] {
  const alerts: HookAlert[] = [];
  hooks.forEach((hook, index) => {
    if (kind === "passed" && heardStreak.includes(index)) alerts.push({ hook: index, kind: "recovered" });
    else if (selects(hook.on, kind)) alerts.push({ hook: index, kind });
  });
  return alerts;
}

/** Whether an alert says something went wrong (everything but passed and recovered). */
export function isNonPass(kind: AlertKind): boolean {
  return kind !== "passed" && kind !== "recovered";
}

/**
 * The webhooks that heard a non-pass alert among a schedule's alerts since its last passing
 * turn, in order: those get `recovered` when the next turn passes. Empty after a recovery,
 * since the recovering turn is the new last pass: a streak is recovered from once.
 */
export function heardInStreak(alertsSinceLastPass: readonly HookAlert[]): number[] {
  const hooks = new Set(alertsSinceLastPass.filter((a) => isNonPass(a.kind)).map((a) => a.hook));
  return [...hooks].sort((a, b) => a - b);
}
