/**
 * One cron tick (the Worker's `scheduled` handler, `triggers.crons` in wrangler.toml):
 *
 *  1. Watchdog: a scheduled run still going past its deadline is stopped and judged
 *     (run-watchdog.ts), so later turns are not skipped behind it for ever.
 *  2. Judge: every scheduled run that has ended since the last tick gets its verdict —
 *     its thresholds, then `compare` against its baseline (core/watch/scheduled-verdict.ts).
 *  3. Turn: every schedule that is due takes its turn (core/watch/schedule-turn.ts): one
 *     run through the same admission as `POST /v1/runs` (caps, allow-list, cost, active
 *     runs), or a skipped turn when its previous run is still going, or missed turns
 *     reported after an outage — never piled up.
 *  4. Alerts: whatever is due in the outbox is delivered (notify.ts), after the tick's own
 *     work, so a slow receiver holds back no turn.
 *  5. Storage: a bounded slice of clean-ups, rollups and outbox pruning (storage-sweep.ts),
 *     after the tick's own work too.
 *
 * Every turn that does not pass alerts (core/watch/alert-rule.ts), and every alert is written
 * to the outbox in the same D1 batch as the turn or verdict it is about. Each turn is
 * recorded before its run is admitted, under the turn's primary key, so two overlapping ticks
 * never start the same turn twice. The tick's time is the controller's `scheduledTime`,
 * passed in.
 */
import { BASELINE_WINDOW_RUNS, rollingBaseline } from "../../core/watch/baseline-rule.ts";
import { compareRuns } from "../../core/results/compare.ts";
import { parseCron } from "../../core/watch/cron.ts";
import { decideTurn, type TurnDecision } from "../../core/watch/schedule-turn.ts";
import { scheduledVerdict } from "../../core/watch/scheduled-verdict.ts";
import { loadQueryInput } from "../store/results-queries.ts";
import {
  dueSchedules,
  getSchedule,
  lastPassedRuns,
  runOutcome,
  setNextDue,
  settleTurn,
  takeTurn,
  unjudgedTurns,
  type ScheduleRow,
  type TurnRow,
} from "../store/schedules.ts";
import { deliverDueAlerts } from "./notify.ts";
import { sweepStorage } from "./storage-sweep.ts";
import { endOverdueRuns, type WatchdogEnv } from "./run-watchdog.ts";
import { vaultOf } from "./schedule-vault.ts";
import { alertBatch, eventOf, recordJudged, runLink } from "./turn-alerts.ts";

/** What a turn needs from the routes' room: admitting a run as `POST /v1/runs` does. */
export interface TickDeps {
  /** Admits and creates a run from a spec (parsed JSON), or throws why not (an error with `detail`). */
  readonly admit: (spec: unknown) => Promise<{ readonly id: string }>;
  /** Keeps the alerts' delivery going after the tick returns. */
  readonly waitUntil: (promise: Promise<unknown>) => void;
}

type TurnReport = { readonly scheduleId: string; readonly outcome: string; readonly runId?: string; readonly detail?: string };

export interface TickReport {
  /** Runs the watchdog ended. */
  readonly ended: number;
  readonly judged: number;
  readonly turns: readonly TurnReport[];
}

export async function cronTick(env: WatchdogEnv, nowMs: number, deps: TickDeps): Promise<TickReport> {
  const ended = await endOverdueRuns(env, nowMs);
  const judged = await judgeEnded(env, nowMs);
  const turns: TurnReport[] = [];
  for (const s of await dueSchedules(env.DB, nowMs)) {
    const cron = parseCron(s.cron);
    if (!cron.ok) continue;
    const d = decideTurn({
      cron: cron.cron,
      nextDueMs: s.next_due_ms,
      nowMs,
      paused: s.paused === 1,
      previousRunActive: s.last_run_active === 1,
      previousRunId: s.last_run_id,
    });
    if (d.kind === "idle") await setNextDue(env.DB, s.id, d.nextDueMs);
    else {
      const report = await takeDueTurn(env, s, d, nowMs, deps);
      if (report) turns.push(report);
    }
  }
  deps.waitUntil(
    deliverDueAlerts(env, nowMs).catch((error: unknown) => {
      // The alerts stay in the outbox; the next tick tries them again.
      console.error(`cron tick: alert delivery stopped: ${String(error)}`);
    }),
  );
  // Each part catches its own failures; what is left is the next tick's.
  deps.waitUntil(sweepStorage(env, nowMs).catch((error: unknown) => console.error(`cron tick: storage sweep stopped: ${String(error)}`)));
  if (turns.length || judged || ended) console.log(JSON.stringify({ event: "cron-tick", at: new Date(nowMs).toISOString(), ended, judged, turns }));
  return { ended, judged, turns };
}

/** Takes one due turn; null when another tick took it first. */
async function takeDueTurn(
  env: WatchdogEnv,
  s: ScheduleRow,
  d: Exclude<TurnDecision, { kind: "idle" }>,
  nowMs: number,
  deps: TickDeps,
): Promise<TurnReport | null> {
  const outcome = d.kind === "start" ? "started" : d.kind === "skip" ? "skipped" : "missed";
  const turn = { schedule_id: s.id, due_ms: d.dueMs, taken_at: nowMs, outcome, missed: d.missed, detail: d.reason ?? null, run_id: null } as const;
  // A skipped or missed turn alerts in the batch that records it.
  const alerts = outcome === "started" ? null : alertBatch(s, outcome, eventOf(s, turn, null, null), nowMs);
  if (!(await takeTurn(env.DB, turn, d.nextDueMs, alerts))) return null;
  if (d.kind !== "start") return { scheduleId: s.id, outcome, detail: d.reason! };
  let run: { readonly id: string };
  try {
    const secrets = await vaultOf(env, s.id).get();
    if (!secrets) throw new Error("its vault has no spec (create the schedule again)");
    run = await deps.admit(JSON.parse(secrets.specJson));
  } catch (error) {
    const detail = refusalDetail(error);
    const refused = { ...turn, outcome: "refused" as const, detail };
    await settleTurn(env.DB, s.id, d.dueMs, { outcome: "refused", runId: null, detail }, alertBatch(s, "refused", eventOf(s, refused, null, null), nowMs));
    return { scheduleId: s.id, outcome: "refused", detail };
  }
  const detail = d.missed ? `${d.missed} earlier turn(s) missed` : null;
  // Turns missed before this one alert too, in the batch that settles it.
  const started = { ...turn, detail };
  const missed = d.missed ? alertBatch(s, "missed", eventOf(s, started, runLink(env, run.id, "pending"), null), nowMs) : null;
  await settleTurn(env.DB, s.id, d.dueMs, { outcome: "started", runId: run.id, detail }, missed);
  return { scheduleId: s.id, outcome: "started", runId: run.id };
}

/** Verdicts for the scheduled runs that have ended, each with its alerts; returns how many were recorded. */
async function judgeEnded(env: WatchdogEnv, nowMs: number): Promise<number> {
  let n = 0;
  for (const turn of await unjudgedTurns(env.DB)) {
    const schedule = await getSchedule(env.DB, turn.schedule_id);
    if (!schedule) continue;
    const verdict = await verdictOf(env, turn, schedule.baseline_run_id);
    if (await recordJudged(env, schedule, { ...turn, run_id: turn.run_id! }, turn.run_status, verdict, nowMs)) n++;
  }
  return n;
}

async function verdictOf(env: WatchdogEnv, turn: TurnRow, pinned: string | null) {
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
