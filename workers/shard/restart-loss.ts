/**
 * What an unplanned shard restart cost, counted as the new instance resumes: iterations
 * edgeload did not send (or whose results died with the old instance), counted
 * `interrupted` so the summary's "not sent by edgeload" figure and the verdict see them
 * (core/run/not-sent.ts). Apart from LoadShard so the rule for each model reads in one place.
 *
 * - Arrival rate: the shard resumes at the current time. Every own iteration after its
 *   stored cursor (what its closed windows account for) up to the first one due now is
 *   counted dropped and interrupted, never replayed — those it had sent in windows that
 *   died with it included (engine.skip, cursor-marks.ts).
 * - VUs: the loops restart from the schedule at the current time. The iterations the dead
 *   loops had in flight are lost: one per VU the shard owned that the schedule had active
 *   when it died (executors/vus.ts inFlightAt). When exactly it died is unknown; the end of
 *   the last window it stored is the last moment it is known to have run (or its last
 *   restart, if later), so the VUs active then are counted. Completed iterations whose
 *   windows died with it are not counted: a VU shard keeps no cursor to tell them.
 */
import { WINDOW_MS, type ShardAssignment } from "../../core/run/protocol.ts";
import type { ShardEngine } from "./engine.ts";
import type { ShardState } from "./shard-state.ts";

/**
 * Counts what the restart lost into `engine`'s open window at `nowMs` and returns the
 * cursor to run from (the stored one for a VU shard, which has none to move).
 */
export function countRestartLoss(engine: ShardEngine, state: ShardState, a: ShardAssignment, nowMs: number): number {
  const cursor = state.cursor;
  if (engine.closedModel) {
    engine.interruptInFlight(lastKnownRunningMs(state, a), nowMs);
    return cursor;
  }
  const resumeAt = Math.max(cursor, engine.share.firstDueAtOrAfter(nowMs - a.t0Ms));
  engine.skip(cursor, resumeAt, nowMs, state.accountedPast ?? []);
  return resumeAt;
}

/**
 * The last moment the dead instance is known to have been running: the end of the last
 * window it stored (its watermark, in the run's numbering, less a named scenario's offset),
 * or its own last restart if that was later.
 */
export function lastKnownRunningMs(state: ShardState, a: ShardAssignment): number {
  const storedThroughMs = a.t0Ms + (state.watermarkS - (a.part?.windowOffsetS ?? 0)) * WINDOW_MS;
  return Math.max(storedThroughMs, state.lastRestartMs ?? 0);
}
