/**
 * When a stopping run (an API abort, a failing abortOnFail threshold, a script's abort)
 * tells its shards to stop. The stop itself is recorded in the run record first, so an
 * abort is answered at once and survives a restart of the coordinator; telling the shards
 * is a separate step that the coordinator's ticks repeat until every shard (every region
 * root, in a tree) has answered.
 *
 * Why not in the abort call: a shard asked to stop while no engine runs in it answers only
 * once its last flush to the coordinator is through, and the coordinator may be out of
 * reach or restarting meanwhile (chaos flat seeds 89 and 172: the API abort waited on
 * that, the coordinator was reset under it, and the API answered 500).
 *
 * Pure: the coordinator passes the time in (stop-signal.test.ts).
 */

/**
 * A stop sent and not answered after this long is sent again: a call into an object that
 * was reset meanwhile may never answer, and asking a shard again is harmless (its abort()
 * is idempotent).
 */
export const STOP_RESEND_AFTER_MS = 5_000;

export interface StopSignal {
  /** The run is stopping (RunRecord.stopping). */
  readonly stopping: boolean;
  /** Every shard (every region root) has answered a stop: recorded in the run record. */
  readonly delivered: boolean;
  /** When the stop now on its way was sent, epoch ms; null when none is (none yet, or it failed). */
  readonly sentAtMs: number | null;
}

/** Whether to send the stop to the shards at `nowMs`. */
export function stopSignalDue(s: StopSignal, nowMs: number): boolean {
  if (!s.stopping || s.delivered) return false;
  return s.sentAtMs === null || nowMs - s.sentAtMs >= STOP_RESEND_AFTER_MS;
}
