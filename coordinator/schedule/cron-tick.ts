/**
 * One cron tick (the Worker's `scheduled` handler, `triggers.crons` in wrangler.toml):
 *
 *  1. Judge: every scheduled run that has ended since the last tick gets its verdict —
 *     its thresholds, then `compare` against its baseline (core/watch/scheduled-verdict.ts)
 *     — and each webhook that asked for that verdict is notified (notify.ts).
 *  2. Turn: every schedule that is due takes its turn (core/watch/schedule-turn.ts): one
 *     run through the same admission as `POST /v1/runs` (caps, allow-list, cost, active
 *     runs), or a skipped turn when its previous run is still going, or missed turns
 *     reported after an outage — never piled up.
 *
 * Each turn is recorded before its run is admitted, under the turn's primary key, so two
 * overlapping ticks never start the same turn twice. The tick's time is the controller's
 * `scheduledTime`, passed in.
 */
import { BASELINE_WINDOW_RUNS, rollingBaseline } from "../../core/watch/baseline-rule.ts";
import { outbound } from "../../workers/outbound/outbound-fetch.ts";
import { webhookPolicy } from "../../workers/outbound/policies.ts";
import { vaultOf } from "./schedule-vault.ts";
import { compareRuns } from "../../core/results/compare.ts";
import { parseCron } from "../../core/watch/cron.ts";
import { decideTurn } from "../../core/watch/schedule-turn.ts";
import { scheduledVerdict } from "../../core/watch/scheduled-verdict.ts";
import type { Env } from "../../workers/env.ts";
import { loadQueryInput } from "../store/results-queries.ts";
import {
  dueSchedules,
  getSchedule,
  lastPassedRuns,
  recordVerdict,
  runOutcome,
  setNextDue,
  settleTurn,
  takeTurn,
  unjudgedTurns,
  type TurnRow,
} from "../store/schedules.ts";
import { notifyVerdict } from "./notify.ts";

/** What a turn needs from the routes' room: admitting a run as `POST /v1/runs` does. */
export interface TickDeps {
  /** Admits and creates a run from a spec (parsed JSON), or throws why not (an error with `detail`). */
  readonly admit: (spec: unknown) => Promise<{ readonly id: string }>;
  /** Keeps the webhook deliveries going after the tick returns. */
  readonly waitUntil: (promise: Promise<unknown>) => void;
}

export interface TickReport {
  readonly judged: number;
  readonly turns: readonly { readonly scheduleId: string; readonly outcome: string; readonly runId?: string; readonly detail?: string }[];
}

export async function cronTick(env: Env, nowMs: number, deps: TickDeps): Promise<TickReport> {
  const judged = await judgeEnded(env, deps);
  const turns: TickReport["turns"][number][] = [];
  for (const s of await dueSchedules(env.DB, nowMs)) {
    const cron = parseCron(s.cron);
    if (!cron.ok) continue;
    const d = decideTurn({ cron: cron.cron, nextDueMs: s.next_due_ms, nowMs, paused: s.paused === 1, previousRunActive: s.last_run_active === 1 });
    if (d.kind === "idle") {
      await setNextDue(env.DB, s.id, d.nextDueMs);
      continue;
    }
    const turn = {
      schedule_id: s.id,
      due_ms: d.dueMs,
      taken_at: nowMs,
      outcome: d.kind === "start" ? "started" : d.kind === "skip" ? "skipped" : "missed",
      missed: d.missed,
      detail: d.reason ?? null,
      run_id: null,
    } as const;
    if (!(await takeTurn(env.DB, turn, d.nextDueMs))) continue; // another tick took it
    if (d.kind !== "start") {
      turns.push({ scheduleId: s.id, outcome: turn.outcome, detail: d.reason! });
      continue;
    }
    try {
      const secrets = await vaultOf(env, s.id).get();
      if (!secrets) throw new Error("its vault has no spec (create the schedule again)");
      const run = await deps.admit(JSON.parse(secrets.specJson));
      await settleTurn(env.DB, s.id, d.dueMs, "started", run.id, d.missed ? `${d.missed} earlier turn(s) missed` : null);
      turns.push({ scheduleId: s.id, outcome: "started", runId: run.id });
    } catch (error) {
      const detail = refusalDetail(error);
      await settleTurn(env.DB, s.id, d.dueMs, "refused", null, detail);
      turns.push({ scheduleId: s.id, outcome: "refused", detail });
    }
  }
  if (turns.length || judged) console.log(JSON.stringify({ event: "cron-tick", at: new Date(nowMs).toISOString(), judged, turns }));
  return { judged, turns };
}

/** Verdicts for the scheduled runs that have ended; returns how many were recorded. */
async function judgeEnded(env: Env, deps: TickDeps): Promise<number> {
  let n = 0;
  for (const turn of await unjudgedTurns(env.DB)) {
    const schedule = await getSchedule(env.DB, turn.schedule_id);
    if (!schedule) continue;
    const verdict = await verdictOf(env, turn, schedule.baseline_run_id);
    if (!(await recordVerdict(env.DB, turn.schedule_id, turn.due_ms, verdict))) continue;
    n++;
    const event = {
      schedule: { id: schedule.id, name: schedule.name },
      run: { id: turn.run_id!, status: turn.run_status, url: `${env.EDGELOAD_PUBLIC_URL ?? ""}/v1/runs/${turn.run_id}` },
      dueAt: new Date(turn.due_ms).toISOString(),
      verdict,
    };
    const webhooks = (await vaultOf(env, schedule.id).get())?.webhooks ?? [];
    deps.waitUntil(notifyVerdict(env.DB, outbound(webhookPolicy(env)), webhooks, event));
  }
  return n;
}

async function verdictOf(env: Env, turn: TurnRow, pinned: string | null) {
  const runId = turn.run_id!;
  const outcome = await runOutcome(env.DB, runId);
  const baselineRunId = pinned ?? rollingBaseline(await lastPassedRuns(env.DB, turn.schedule_id, turn.due_ms, BASELINE_WINDOW_RUNS));
  let comparison = null;
  if (outcome?.status === "passed" && baselineRunId) {
    const [a, b] = await Promise.all([loadQueryInput(env.DB, baselineRunId, "duration"), loadQueryInput(env.DB, runId, "duration")]);
    comparison = a && b ? compareRuns(a, b) : null;
  }
  return scheduledVerdict({ runStatus: outcome?.status ?? "error", runReasons: outcome?.reasons ?? [], baselineRunId, comparison });
}

/** The refusal's own words (an ApiError's detail and problems), never a stack. */
function refusalDetail(error: unknown): string {
  const e = error as { detail?: unknown; problems?: readonly { field: string; detail: string }[] };
  if (typeof e?.detail !== "string") return "the run could not be started (see the Worker logs)";
  const problems = (e.problems ?? []).map((p) => `${p.field}: ${p.detail}`);
  return problems.length ? `${e.detail} (${problems.join("; ")})` : e.detail;
}
