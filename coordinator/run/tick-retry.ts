/**
 * When a failing coordinator tick (D1 refusing writes, say) is tried again, and how many
 * failures in a row a run survives: retried with backoff up to 30 s, then given up as
 * `error` (tick-failure.ts). Pure numbers of their own, so the chaos bench's deadlines
 * (scripts/bench/chaos/deadlines.ts) read the same ones without the Worker's types.
 */

/** Failures in a row a run survives unless RESULT_WRITE_RETRIES says otherwise. */
const MAX_TICK_FAILURES = 12;

/** How many failed ticks in a row end the run (RESULT_WRITE_RETRIES overrides the default). */
export function tickFailureBudget(env: { readonly RESULT_WRITE_RETRIES?: string | undefined }): number {
  const n = Number(env.RESULT_WRITE_RETRIES);
  return Number.isInteger(n) && n > 0 ? n : MAX_TICK_FAILURES;
}

/** How long until the tick that failed for the `failures`th time is retried: 1 s, 2 s, 4 s … 30 s. */
export function tickRetryDelayMs(failures: number): number {
  return Math.min(30_000, 500 * 2 ** failures);
}
