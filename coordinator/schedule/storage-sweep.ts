/**
 * The cron tick's storage sweep (issue 49), a bounded slice of work each tick:
 *
 *  1. Clean-ups: a final run whose summary is in D1 but whose objects may still hold storage
 *     CLEAN_UP_SWEEP_AFTER_MS after its end (its coordinator's own clean-up, 5 min after the
 *     end, was interrupted; or it ended before clean-ups existed) — its coordinator is asked to
 *     clean up again (coordinator/run/run-cleanup.ts), which passes it to its shards and
 *     aggregators from the plan D1 keeps. At most CLEAN_UPS_PER_TICK runs a tick.
 *  2. Rollups: the per-second rows of runs that ended RESULTS_RETENTION_DAYS ago become
 *     per-minute rows (store/results-retention.ts), ROLLUP_BATCHES_PER_TICK batches of a few
 *     minutes of run each.
 *  3. The outbox: settled alerts as old as that, no streak needing them, are deleted (at most
 *     ALERTS_PRUNED_PER_TICK), and delivery attempts as old (store/retained-rows.ts).
 *  4. R2: the screenshots and unwanted script bundles of runs as old (artifact-sweep.ts).
 *
 * A failure of one part is logged and leaves the rest of the tick alone: the next tick
 * carries on where this one stopped, as every part picks up what is left.
 */
import { CLEAN_UP_SWEEP_AFTER_MS, retentionDaysOf, rollupCutoffMs, rollupRange } from "../../core/results/retention.ts";
import { markRolledUp, pruneSettledAlerts, rollUp, runToRollUp } from "../store/results-retention.ts";
import { runsToCleanUp } from "../store/run-cleanup-rows.ts";
import { pruneOldAttempts } from "../store/retained-rows.ts";
import { sweepRunArtifacts } from "./artifact-sweep.ts";
import type { WatchdogEnv } from "./run-watchdog.ts";

/** Runs whose clean-up is finished per tick: each asks every shard (or region root) of its run. */
export const CLEAN_UPS_PER_TICK = 5;
/** Rollup batches per tick (each a few minutes of one run: core/results/retention.ts ROLLUP_MINUTES_PER_BATCH). */
export const ROLLUP_BATCHES_PER_TICK = 4;
export const ALERTS_PRUNED_PER_TICK = 500;

export interface SweepReport {
  /** Runs whose objects now hold nothing. */
  readonly cleaned: number;
  /** Rollup batches done (runs found with nothing left per second are only marked). */
  readonly rolledUp: number;
}

export async function sweepStorage(env: WatchdogEnv, nowMs: number): Promise<SweepReport> {
  const cleaned = await attempt("clean-ups", () => finishCleanUps(env, nowMs), 0);
  const retention = retentionDaysOf(env.RESULTS_RETENTION_DAYS);
  if (!retention.ok) {
    // Rolling up deletes the per-second rows: nothing is rolled up while the var is wrong.
    console.error(`storage sweep: ${retention.error}; nothing is rolled up or pruned until it is fixed`);
    return { cleaned, rolledUp: 0 };
  }
  const cutoffMs = rollupCutoffMs(nowMs, retention.days);
  const rolledUp = await attempt("rollups", () => rollUpOldRuns(env.DB, cutoffMs, nowMs), 0);
  await attempt("the outbox", () => pruneSettledAlerts(env.DB, cutoffMs, ALERTS_PRUNED_PER_TICK), undefined);
  await attempt("delivery attempts", () => pruneOldAttempts(env.DB, cutoffMs, ALERTS_PRUNED_PER_TICK), undefined);
  await attempt("R2 objects", () => sweepRunArtifacts(env, cutoffMs, nowMs), 0);
  return { cleaned, rolledUp };
}

/** Asks the coordinators of runs whose clean-up did not finish to clean up; how many did. */
async function finishCleanUps(env: WatchdogEnv, nowMs: number): Promise<number> {
  const ids = await runsToCleanUp(env.DB, nowMs - CLEAN_UP_SWEEP_AFTER_MS, CLEAN_UPS_PER_TICK);
  const results = await Promise.allSettled(ids.map((id) => env.RUN_COORDINATOR.get(env.RUN_COORDINATOR.idFromName(id)).cleanUp(id)));
  results.forEach((r, i) => {
    const why = r.status === "rejected" ? String(r.reason) : "reason" in r.value ? r.value.reason : null;
    if (why !== null) console.warn(`storage sweep: run ${ids[i]} not cleaned up: ${why}`);
  });
  return results.filter((r) => r.status === "fulfilled" && r.value.cleaned).length;
}

/** Rolls up the oldest runs past their retention, ROLLUP_BATCHES_PER_TICK batches at most; how many batches ran. */
async function rollUpOldRuns(db: D1Database, cutoffMs: number, nowMs: number): Promise<number> {
  let batches = 0;
  // A run found with nothing left per second is marked, which costs no batch but is bounded too.
  for (let looks = 0; batches < ROLLUP_BATCHES_PER_TICK && looks < 2 * ROLLUP_BATCHES_PER_TICK; looks++) {
    const run = await runToRollUp(db, cutoffMs);
    if (!run) break;
    if (run.firstWindowS === null) {
      await markRolledUp(db, run.id, nowMs);
      continue;
    }
    const { fromS, toS } = rollupRange(run.firstWindowS);
    await rollUp(db, run.id, fromS, toS);
    batches++;
  }
  return batches;
}

async function attempt<T>(part: string, work: () => Promise<T>, fallback: T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    console.error(`storage sweep: ${part} stopped: ${String(error)}`);
    return fallback;
  }
}
