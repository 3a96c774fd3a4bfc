/**
 * The schedules' watchdog: a scheduled run still going well past its planned end is ended
 * by the cron tick, so the schedule's later turns are not skipped for ever behind it (a
 * coordinator whose alarms stopped, a shard that never reports). Its deadline is counted
 * from the turn that started it, in the cron's own clock: the planned duration, a k6
 * script's setup and teardown timeouts when it has those phases, and a grace. Pure: the
 * tick passes its time in.
 */

/** How long past its planned end a run may still be finishing (start lead, the last flushes, a slow D1). */
export const WATCHDOG_GRACE_MS = 10 * 60_000;

/** Why the watchdog ended a run: the run's abort reason and the first reason of its verdict. */
export const WATCHDOG_REASON = "watchdog: run did not end by its deadline";

export interface RunPlan {
  /** When the turn that started it was taken (epoch ms, the tick's time). */
  readonly startedAtMs: number;
  /** The run's planned duration (runs.duration_ms). */
  readonly plannedDurationMs: number;
  /** A k6 script's setup and teardown timeouts, when it runs those phases; 0 otherwise. */
  readonly phaseTimeoutsMs: number;
}

/** The time by which a run should have ended, grace included. */
export function runDeadlineMs(run: RunPlan, graceMs = WATCHDOG_GRACE_MS): number {
  return run.startedAtMs + run.plannedDurationMs + run.phaseTimeoutsMs + graceMs;
}

/**
 * Whether a run that has not ended is past its deadline at `nowMs`.
 *
 * @example
 * isOverdue({ startedAtMs: 0, plannedDurationMs: 60_000, phaseTimeoutsMs: 0 }, 11 * 60_000 + 1) // true
 */
export function isOverdue(run: RunPlan, nowMs: number, graceMs = WATCHDOG_GRACE_MS): boolean {
  return nowMs > runDeadlineMs(run, graceMs);
}

/** The verdict reason the watchdog gives, with the deadline it enforced. */
export function watchdogReason(run: RunPlan, graceMs = WATCHDOG_GRACE_MS): string {
  const minutes = Math.round(graceMs / 60_000);
  return `${WATCHDOG_REASON} (${new Date(runDeadlineMs(run, graceMs)).toISOString()}: its planned end + ${minutes} min)`;
}
