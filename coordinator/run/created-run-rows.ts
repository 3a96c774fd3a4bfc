/**
 * The D1 rows of a run as its coordinator creates it: the run (its spec without secrets,
 * its plan) and one row per shard. What the run's end writes goes with its summary
 * (summary-of.ts endedRunStatements).
 */
import { redactSpec } from "../../core/spec/redact.ts";
import { insertRun, insertShards } from "../store/results-store.ts";
import type { RunRecord } from "./run-record.ts";

/** The statements storing a run just created, and its shards. */
export function createdRunStatements(db: D1Database, run: RunRecord): D1PreparedStatement[] {
  // Name and target too: either may hold a credential (`https://user:key@…`, a pasted token).
  const shown = redactSpec(run.spec);
  return [
    insertRun(db, {
      id: run.runId,
      name: shown.name,
      target: shown.target,
      createdAt: run.createdMs,
      durationMs: run.spec.durationMs,
      specJson: JSON.stringify(shown),
      planJson: JSON.stringify(run.plan),
    }),
    ...insertShards(db, run.runId, run.plan.shards),
  ];
}
