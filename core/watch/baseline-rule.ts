/**
 * Which run a scheduled run is compared with, unless the schedule pins one: the rule that
 * decides how the baseline moves. "The latest passed run" let a slow drift through: a run
 * a little slower than the last, within noise, passed and became the next baseline, so a
 * schedule drifting by less than the noise each night never regressed. The baseline is
 * instead the oldest of the schedule's last BASELINE_WINDOW_RUNS passed runs: a run is held
 * against where the schedule stood that many passes ago, so a drift is caught once it adds
 * up beyond noise within the window (pinned by core/watch/watch.test.ts). A drift slower
 * than the noise threshold over the whole window still passes; a pinned baseline
 * (`{"runId": …}`) is the fixed reference for that.
 */

/** How many passed runs back the rolling baseline reaches. */
export const BASELINE_WINDOW_RUNS = 7;

/** The baseline among a schedule's latest passed runs, newest first: the oldest within the window; null when none passed yet. */
export function rollingBaseline(passedNewestFirst: readonly string[]): string | null {
  const window = passedNewestFirst.slice(0, BASELINE_WINDOW_RUNS);
  return window.at(-1) ?? null;
}
