/**
 * `edgeload schedule add|list|show|pause|resume|rm`: scheduled runs over the API
 * (coordinator/http/schedules-api.ts; docs/schedules.md). The decisions (cron, turns,
 * verdicts) are the coordinator's; this module builds the request and prints the answer.
 */
import { BASELINE_WINDOW_RUNS } from "../core/watch/baseline-rule.ts";
import { table } from "../core/run/text-format.ts";
import { CliError, connect, EXIT, readJsonFile } from "./connection.ts";
import { listFormat } from "./list-format.ts";
import { parseCommand } from "./option-table.ts";
import { namedValues } from "./spec-overrides.ts";
import { withPublicEnv } from "./public-env.ts";
import { SCHEDULE_COMMAND } from "./tables/schedule-table.ts";

interface ScheduleView {
  readonly id: string;
  readonly name: string;
  readonly cron: string;
  readonly paused: boolean;
  readonly nextDueAt: string | null;
  readonly baseline: "rolling" | { readonly runId: string };
  readonly lastRunId: string | null;
  readonly webhooks: readonly { readonly url: string; readonly format: string; readonly on: readonly string[] }[];
  readonly estimate?: { readonly usdPerRun: number; readonly turnsPer30Days: number; readonly usdPer30Days: number };
  readonly webhookSecrets?: readonly { readonly webhook: number; readonly secret: string }[];
  readonly turns?: readonly {
    readonly dueAt: string;
    readonly outcome: string;
    readonly missed: number;
    readonly detail: string | null;
    readonly runId: string | null;
    readonly verdict: string | null;
    readonly reasons?: readonly string[];
  }[];
  readonly webhookAttempts?: readonly {
    /** null: the alert of a turn that started no run (refused, skipped, missed). */
    readonly runId: string | null;
    readonly deliveryId?: string | null;
    readonly kind?: string | null;
    readonly webhook: number;
    readonly attempt: number;
    readonly at?: string;
    readonly status: number | null;
    readonly error: string | null;
  }[];
}

const ACTIONS = ["add", "list", "show", "pause", "resume", "rm"] as const;
const json = (value: unknown) => console.log(JSON.stringify(value, null, 2));

export async function scheduleCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(SCHEDULE_COMMAND, args);
  const [action, target, ...extra] = positionals;
  if (!ACTIONS.includes(action as (typeof ACTIONS)[number]))
    throw new CliError(`schedule ${action ?? ""}: say one of ${ACTIONS.join(", ")} (edgeload schedule --help)`.replace("  ", " "), EXIT.invalidConfig);
  if (extra.length || (action === "list" ? target !== undefined : target === undefined))
    throw new CliError(
      `schedule ${action} takes ${action === "list" ? "nothing" : action === "add" ? "one name" : "one schedule id"} (edgeload schedule --help)`,
      EXIT.invalidConfig,
    );
  const format = listFormat(values.format, process.stdout.isTTY === true);
  if (action === "add" && typeof values.cron !== "string")
    throw new CliError("schedule add needs --cron '<minute> <hour> <day> <month> <weekday>' (UTC)", EXIT.invalidConfig);
  const client = await connect(values);
  if (action === "add") {
    const body = await addBody(target!, values, async (path) => {
      // A k6 script is bundled and stored, as `edgeload run script.js` does; the spec names the bundle.
      const script = await import("./script-command.ts");
      if (!script.isScriptPath(path)) {
        if (values["public-env"]?.length)
          throw new CliError("--public-env applies to a k6 script; a spec file names them in script.publicEnv", EXIT.invalidConfig);
        return readJsonFile(path, "run spec");
      }
      const built = await script.scriptRun(path, namedValues("env", values.env), values.target ?? null);
      const spec = withPublicEnv(built.spec, values["public-env"]);
      await client.uploadScript(built.id, built.modules);
      return spec;
    });
    const created = await client.schedules<ScheduleView>("POST", "", "", body);
    if (format === "json") json(created);
    else console.log(renderAdded(created));
    return EXIT.ok;
  }
  if (action === "list") {
    const { schedules } = await client.schedules<{ schedules: ScheduleView[] }>("GET");
    if (format === "json") json({ schedules });
    else console.log(renderList(schedules));
    return EXIT.ok;
  }
  if (action === "rm") {
    await client.schedules("DELETE", target);
    console.log(`schedule ${target} deleted (its runs stay)`);
    return EXIT.ok;
  }
  const view = await client.schedules<ScheduleView>(action === "show" ? "GET" : "POST", target, action === "show" ? "" : action);
  if (format === "json") json(view);
  else console.log(action === "show" ? renderShow(view) : `schedule ${view.id}: ${view.paused ? "paused" : `next turn ${view.nextDueAt ?? "never"}`}`);
  return EXIT.ok;
}

/** The POST body of `schedule add`, refusing a missing --cron or --spec before any call. */
async function addBody(name: string, values: Record<string, unknown>, specOf: (path: string) => Promise<unknown>): Promise<Record<string, unknown>> {
  if (typeof values.spec !== "string")
    throw new CliError("schedule add needs --spec FILE, a run spec or k6 script as `edgeload run` takes it", EXIT.invalidConfig);
  const on = String(values.on)
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean);
  const hook = (url: string, format: "json" | "slack") => ({ url, format, on, ...(typeof values.secret === "string" ? { secret: values.secret } : {}) });
  return {
    name,
    cron: values.cron,
    spec: await specOf(values.spec),
    ...(typeof values.baseline === "string" ? { baseline: { runId: values.baseline } } : {}),
    webhooks: [
      ...((values.webhook as string[] | undefined) ?? []).map((u) => hook(u, "json")),
      ...((values.slack as string[] | undefined) ?? []).map((u) => hook(u, "slack")),
    ],
  };
}

function renderAdded(s: ScheduleView): string {
  const lines = [`schedule ${s.id} (${s.name}): ${s.cron} UTC, first turn ${s.nextDueAt ?? "never"}`];
  if (s.estimate)
    lines.push(
      `  about $${s.estimate.usdPerRun.toFixed(4)} a run, ${s.estimate.turnsPer30Days} runs in 30 days: $${s.estimate.usdPer30Days.toFixed(2)} a month`,
    );
  for (const { webhook, secret } of s.webhookSecrets ?? [])
    lines.push(`  webhook ${webhook} (${s.webhooks[webhook]?.url}) signs with ${secret}: keep it now, it is not shown again`);
  return lines.join("\n");
}

function renderList(schedules: readonly ScheduleView[]): string {
  if (schedules.length === 0) return "no schedules yet (edgeload schedule --help)";
  return table(
    ["id", "name", "cron (UTC)", "state", "next turn", "last run"],
    schedules.map((s) => [s.id, s.name, s.cron, s.paused ? "paused" : "active", s.nextDueAt ?? "-", s.lastRunId ?? "-"]),
    true,
  ).join("\n");
}

function renderShow(s: ScheduleView): string {
  const baseline = s.baseline === "rolling" ? `the oldest of the schedule's last ${BASELINE_WINDOW_RUNS} passed runs` : s.baseline.runId;
  const head = [
    `schedule ${s.id} (${s.name})`,
    `  cron      ${s.cron} UTC, ${s.paused ? "paused" : `next turn ${s.nextDueAt ?? "never"}`}`,
    `  baseline  ${baseline}`,
    ...s.webhooks.map((w, i) => `  webhook ${i} ${w.url} (${w.format}) on ${w.on.join(", ")}`),
  ];
  const turns = s.turns ?? [];
  if (turns.length === 0) return [...head, "", "no turns yet"].join("\n");
  const rows = turns.map((t) => [
    t.dueAt,
    t.outcome + (t.missed ? ` (+${t.missed} missed)` : ""),
    t.runId ?? "-",
    t.verdict ?? (t.outcome === "started" ? "…" : "-"),
    (t.reasons ?? []).join("; ") || (t.detail ?? ""),
  ]);
  return [...head, "", ...table(["turn", "outcome", "run", "verdict", "why"], rows, true), ...renderAttempts(s.webhookAttempts ?? [])].join("\n");
}

/** The alerts' delivery attempts, newest first: an alert that never got through (abandoned after 24 h) shows here. */
function renderAttempts(attempts: NonNullable<ScheduleView["webhookAttempts"]>): string[] {
  if (attempts.length === 0) return [];
  const rows = attempts.map((a) => [
    a.at ?? "",
    a.kind ?? "-",
    `webhook ${a.webhook}`,
    String(a.attempt),
    a.status === null ? "no answer" : String(a.status),
    a.error ?? "",
    a.deliveryId ?? "-",
  ]);
  return ["", ...table(["alert attempt", "kind", "to", "try", "answer", "error", "delivery"], rows, true)];
}
