/**
 * How long a deployment keeps what, decided with the time passed in (issue 49): a run's
 * per-second rows are kept RESULTS_RETENTION_DAYS after it ended, then rolled up into
 * per-minute rows (coordinator/store/results-retention.ts), so D1 keeps every run at a
 * bounded cost; a run's Durable Objects' storage is swept if its clean-up did not finish
 * within CLEAN_UP_SWEEP_AFTER_MS of its end (coordinator/schedule/storage-sweep.ts).
 */

/** Days a run's per-second rows are kept after it ended unless RESULTS_RETENTION_DAYS says otherwise. */
export const DEFAULT_RETENTION_DAYS = 90;

const DAY_MS = 86_400_000;

/**
 * A final run whose objects still hold storage this long after its end had its clean-up
 * interrupted: its coordinator cleans up CLEAN_UP_AFTER_MS (5 min) after the end, and the
 * cron tick asks again from here on.
 */
export const CLEAN_UP_SWEEP_AFTER_MS = 10 * 60_000;

/** Minutes of one run rolled up per D1 batch: each batch reads one minute's rows per group, so it stays small. */
export const ROLLUP_MINUTES_PER_BATCH = 5;

export type RetentionDays = { readonly ok: true; readonly days: number } | { readonly ok: false; readonly error: string };

/**
 * RESULTS_RETENTION_DAYS as set (a var or secret): unset or empty, the default; else a whole
 * number of days, at least 1. Anything else is an error naming the var and the value, and
 * nothing is rolled up while it stands (rolling up deletes the per-second rows).
 */
export function retentionDaysOf(raw: string | undefined): RetentionDays {
  if (raw === undefined || raw.trim() === "") return { ok: true, days: DEFAULT_RETENTION_DAYS };
  const days = Number(raw);
  if (!Number.isInteger(days) || days < 1) return { ok: false, error: `var RESULTS_RETENTION_DAYS must be a whole number of days, at least 1; got "${raw}"` };
  return { ok: true, days };
}

/** Runs that ended before this (epoch ms) have their per-second rows rolled up at `nowMs`. */
export function rollupCutoffMs(nowMs: number, days: number): number {
  return nowMs - days * DAY_MS;
}

/**
 * The per-second windows [fromS, toS) of the next rollup batch of a run whose earliest
 * per-second row left is `firstWindowS`: whole minutes (a minute is never split between two
 * batches, so each minute row holds all of it), ROLLUP_MINUTES_PER_BATCH of them.
 * @example rollupRange(125) → { fromS: 120, toS: 420 }
 */
export function rollupRange(firstWindowS: number): { readonly fromS: number; readonly toS: number } {
  const fromS = minuteOf(firstWindowS);
  return { fromS, toS: fromS + ROLLUP_MINUTES_PER_BATCH * 60 };
}

/** The first second of the minute `windowS` falls in (seconds since t0; window -1, before t0, is in minute -60). */
export function minuteOf(windowS: number): number {
  return Math.floor(windowS / 60) * 60;
}
