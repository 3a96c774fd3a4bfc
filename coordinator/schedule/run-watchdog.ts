/**
 * The cron tick's watchdog (core/watch/watchdog.ts decides): a scheduled run still going past
 * its deadline is stopped and judged, so the schedule's later turns are not skipped for ever
 * behind it.
 *
 * The run's RunCoordinator is asked to stop it (its `abort`, with the watchdog's reason: the
 * shards stop sending, and the run ends `aborted` once they have flushed). When the
 * coordinator cannot be reached, or has no such run, the run's row is ended `error` in D1
 * directly, so it no longer counts against MAX_CONCURRENT_RUNS. Either way the turn's verdict
 * is recorded now, as a run that ended in error (`failed`, the watchdog's reason first),
 * with its alerts in the same batch; a judged turn no longer holds the schedule's turns back
 * (store/schedules.ts dueSchedules), even while the coordinator is still stopping the run.
 *
 * A turn whose tick died between taking it and admitting its run is settled here too, as
 * refused, once the same grace has passed.
 */
import { isOverdue, WATCHDOG_GRACE_MS, watchdogReason } from "../../core/watch/watchdog.ts";
import { scheduledVerdict } from "../../core/watch/scheduled-verdict.ts";
import type { Env, ObjectNamespaces } from "../../workers/env.ts";
import type { RunCoordinator } from "../run/run-coordinator.ts";
import { endRunInError, getSchedule, goingRuns, settleTurn, unsettledTurns, type GoingRun } from "../store/schedules.ts";
import { alertBatch, eventOf, recordJudged } from "./turn-alerts.ts";

/** The bindings the watchdog reads: the coordinators' namespace, typed by what it calls. */
export type WatchdogEnv = Env & Pick<ObjectNamespaces<RunCoordinator>, "RUN_COORDINATOR">;

/** How long the coordinator has to take the stop before the run is ended in D1 instead. */
const STOP_TIMEOUT_MS = 10_000;

const UNSETTLED_DETAIL = "the tick that took this turn stopped before its run was admitted";

/** Ends and judges the overdue scheduled runs, settles abandoned turns; returns the runs ended. */
export async function endOverdueRuns(env: WatchdogEnv, nowMs: number): Promise<number> {
  let ended = 0;
  for (const run of await goingRuns(env.DB)) {
    const plan = { startedAtMs: run.taken_at, plannedDurationMs: run.duration_ms, phaseTimeoutsMs: run.phase_timeouts_ms };
    if (!isOverdue(plan, nowMs)) continue;
    if (await endOverdue(env, run, watchdogReason(plan), nowMs)) ended++;
  }
  await settleAbandonedTurns(env, nowMs);
  return ended;
}

async function endOverdue(env: WatchdogEnv, run: GoingRun, reason: string, nowMs: number): Promise<boolean> {
  const schedule = await getSchedule(env.DB, run.schedule_id);
  if (!schedule) return false;
  const stopping = await askToStop(env, run.run_id, reason);
  const how = stopping ? "its coordinator is stopping it: the run ends aborted" : "its coordinator did not take the stop: the run is ended in error";
  // Judged as a run that ended in error (failed), the watchdog's reason first.
  const verdict = { ...scheduledVerdict({ runStatus: "error", runReasons: [], baselineRunId: null, comparison: null }), reasons: [reason, how] };
  const also = stopping ? [] : [endRunInError(env.DB, run.run_id, reason, nowMs)];
  const recorded = await recordJudged(env, schedule, run, stopping ? "finishing" : "error", verdict, nowMs, also);
  if (recorded) console.log(JSON.stringify({ event: "schedule-watchdog", schedule: schedule.id, run: run.run_id, stopping, reason }));
  return recorded;
}

/** Whether the run's coordinator took the stop (within STOP_TIMEOUT_MS). */
async function askToStop(env: WatchdogEnv, runId: string, reason: string): Promise<boolean> {
  const stub = env.RUN_COORDINATOR.get(env.RUN_COORDINATOR.idFromName(runId));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), STOP_TIMEOUT_MS);
  });
  try {
    const view = await Promise.race([stub.abort(reason), timeout]);
    return view !== null;
  } catch (error) {
    console.error(`schedule watchdog: run ${runId}'s coordinator did not take the stop: ${String(error)}`);
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** Turns left `started` without a run by a tick that died mid-turn: refused, with an alert. */
async function settleAbandonedTurns(env: WatchdogEnv, nowMs: number): Promise<void> {
  for (const turn of await unsettledTurns(env.DB, nowMs - WATCHDOG_GRACE_MS)) {
    const schedule = await getSchedule(env.DB, turn.schedule_id);
    if (!schedule) continue;
    const refused = { ...turn, outcome: "refused" as const, detail: UNSETTLED_DETAIL };
    const alerts = alertBatch(schedule, "refused", eventOf(schedule, refused, null, null), nowMs);
    await settleTurn(env.DB, turn.schedule_id, turn.due_ms, { outcome: "refused", runId: null, detail: UNSETTLED_DETAIL }, alerts);
  }
}
