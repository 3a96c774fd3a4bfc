/**
 * A run's status view as the API serves it (GET /v1/runs/:id, its `?wait=`, /timeseries,
 * /abort): its RunCoordinator's while the coordinator holds the run, and once the run is
 * over and its objects' storage is gone (coordinator/run/run-cleanup.ts), the view the
 * coordinator left in D1 as it ended (store/run-cleanup-rows.ts storedFinalView).
 */
import type { RunView } from "../../core/run/protocol.ts";
import { storedFinalView } from "../store/run-cleanup-rows.ts";
import { coordinatorFor } from "./coordinator-stub.ts";
import type { RoutesEnv } from "./routes-env.ts";

/** Null for a run neither its coordinator nor D1 knows. */
export async function runViewOf(env: RoutesEnv, runId: string): Promise<RunView | null> {
  return (await coordinatorFor(env, runId).status()) ?? (await storedFinalView(env.DB, runId));
}

/** Aborts a run its coordinator holds; an ended run whose storage is gone answers with its final view, as any ended run does. */
export async function abortRun(env: RoutesEnv, runId: string, reason: string): Promise<RunView | null> {
  return (await coordinatorFor(env, runId).abort(reason)) ?? (await storedFinalView(env.DB, runId));
}
