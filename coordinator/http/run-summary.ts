/**
 * A run's summary as the API serves it (/summary, the report): the final one stored in D1
 * (store/results-queries.ts finalSummary, the one reader of it), or, while there is none,
 * what the run's RunCoordinator answers — a live summary over what has arrived, or the
 * final one it kept when D1 refused the writes (the run ended `error`).
 */
import type { Summary } from "../../core/run/summary.ts";
import type { RoutesEnv } from "./routes-env.ts";
import { finalSummary } from "../store/results-queries.ts";
import { coordinatorFor } from "./coordinator-stub.ts";

/** Null for a run neither D1 nor its coordinator knows. */
export async function runSummary(env: RoutesEnv, runId: string): Promise<Summary | null> {
  const stored = await finalSummary(env.DB, runId);
  if (stored?.summary) return stored.summary;
  return (await coordinatorFor(env, runId).summary()) as Summary | null;
}
