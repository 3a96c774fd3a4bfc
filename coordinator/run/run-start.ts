/**
 * How a run starts, carried out by its RunCoordinator once the record is made: its D1 rows,
 * setup (phases.ts), every shard (or region root) started at a common T0 (run-shards.ts), and
 * then `running`. A pending run always has an owner: an alarm set for its setup deadline
 * (run-record.ts setupDeadlineMs) ends it in error if this object restarted in the middle of
 * setup (`setupOverdue`), so no run holds a run slot for ever.
 */
import { FINAL_STATUSES, type RunStatus } from "../../core/run/protocol.ts";
import type { ForcedStatus } from "../../core/run/summary.ts";
import type { Env } from "../../workers/env.ts";
import { updateRunStatus } from "../store/results-store.ts";
import { createdRunStatements } from "./created-run-rows.ts";
import { TICK_MS } from "../merge/ticks.ts";
import { setUpRun } from "./phases.ts";
import { setupDeadlineMs, type RunRecord } from "./run-record.ts";
import { startShards, type RunObjects } from "./run-shards.ts";

/** What starting a run needs of its coordinator. */
export interface StartingHost {
  readonly env: Env;
  readonly storage: DurableObjectStorage;
  readonly objects: RunObjects;
  run(): RunRecord;
  save(run: RunRecord): void;
  finish(status: ForcedStatus, reason: string): Promise<void>;
  /** Stops every shard. */
  abortShards(): Promise<boolean>;
}

/** Writes the new run's rows, sets it up and starts its shards; the status it is left in. */
export async function startRun(host: StartingHost, run: RunRecord): Promise<{ t0Ms: number; status: RunStatus }> {
  const db = host.env.DB;
  await db.batch(createdRunStatements(db, run));
  await host.storage.setAlarm(setupDeadlineMs(run));
  const setUp = await setUpRun(host.env, run);
  // Ended meanwhile: its alarm found setup overdue.
  if (FINAL_STATUSES.includes(host.run().status)) return { t0Ms: run.t0Ms, status: host.run().status };
  // Aborted during setup: the stop stands (the record set up here predates it), and no shard starts.
  const stopped = host.run();
  if (stopped.stopping !== null) {
    host.save({ ...setUp.run, status: stopped.status, stopping: stopped.stopping, abortReason: stopped.abortReason, endMs: stopped.endMs });
    await host.finish(stopped.stopping, stopped.abortReason ?? "stopped during setup");
    return { t0Ms: run.t0Ms, status: host.run().status };
  }
  host.save(setUp.run);
  if (setUp.failure) {
    await host.finish(setUp.failure.status, setUp.failure.reason);
    return { t0Ms: run.t0Ms, status: host.run().status };
  }
  const ready = host.run();
  const started = await startShards(host.objects, ready);
  const failure = started.find((s) => s.status === "rejected");
  if (failure) {
    await host.abortShards();
    await host.finish("error", `could not start every shard: ${String((failure as PromiseRejectedResult).reason)}`);
    throw new Error("could not start every shard");
  }
  host.save({ ...host.run(), status: "running" });
  await db.batch([updateRunStatus(db, run.runId, "running", { t0: ready.t0Ms })]);
  await host.storage.setAlarm(Date.now() + TICK_MS);
  return { t0Ms: ready.t0Ms, status: "running" };
}

/**
 * A pending run at its alarm: setup still under way (the alarm waits for its deadline), or
 * the object restarted in the middle of it, with no one left to end it but this: then it ends
 * in error before any shard started.
 */
export async function setupOverdue(host: StartingHost, run: RunRecord, nowMs: number): Promise<void> {
  const deadline = setupDeadlineMs(run);
  if (nowMs < deadline) return host.storage.setAlarm(deadline);
  host.save({ ...run, phases: { setup: { ok: false, steps: [] } } });
  await host.finish("error", `setup did not end within ${(deadline - run.createdMs) / 1000} s (the coordinator restarted during it, or it hung)`);
}
