/**
 * A k6 script's isolate that could not run an iteration: it did not start (a loader error,
 * init code that throws only at the edge) or died under it. Each such iteration is counted as
 * a script error with a message starting COULD_NOT_RUN, and never as an iteration; a run in
 * which none could run and none did ends in error with the first message — not as a pass
 * with 0 requests and no threshold broken. Pure: the shard makes the message, the coordinator
 * reads the run's totals at its end.
 */
import type { MetricStats } from "../metrics/metric-stats.ts";

export const COULD_NOT_RUN = "the script's isolate could not run the iteration";

/** The script error an iteration that could not run is counted under. */
export function couldNotRunMessage(error: unknown): string {
  // workerd's loader errors span lines ("Failed to start Worker:\nUncaught Error: …"): one line here.
  const detail = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").trim();
  return `${COULD_NOT_RUN}: ${detail}`;
}

/** Why the run is an error because no iteration could run, or null when some ran (or none was tried). */
export function noIterationRan(totals: MetricStats): string | null {
  if (totals.counters.iterations > 0 || totals.counters.sent > 0 || !totals.hasScript) return null;
  const first = totals.script.errors().find((e) => e.message.startsWith(COULD_NOT_RUN));
  if (!first) return null;
  return `no iteration could run: ${first.message} (${totals.script.errorCount} tried)`;
}
