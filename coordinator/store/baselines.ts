/**
 * Named baselines in D1 (`baselines`, migration 0004): a name pointing at an ended run, so
 * a pipeline compares each new run with "the last good one" (compare-api.ts).
 */
import type { RunStatus } from "../../core/run/protocol.ts";

/** A run as a comparison reaches it: its id and status (null when its run row is gone). */
export interface RunRef {
  readonly id: string;
  readonly status: RunStatus | null;
}

/** The run a baseline names; null for an unknown name. */
export async function baselineRun(db: D1Database, name: string): Promise<RunRef | null> {
  return db.prepare("SELECT b.run_id AS id, r.status FROM baselines b LEFT JOIN runs r ON r.id = b.run_id WHERE b.name = ?").bind(name).first<RunRef>();
}

/** A run by id; null for an unknown one. */
export async function runRef(db: D1Database, id: string): Promise<RunRef | null> {
  return db.prepare("SELECT id, status FROM runs WHERE id = ?").bind(id).first<RunRef>();
}

/** Points `name` at `runId` (in one batch with reading what it pointed at), returning that previous run. */
export async function putBaseline(db: D1Database, name: string, runId: string, createdAt: number): Promise<string | undefined> {
  const [previous] = await db.batch<{ run_id: string }>([
    db.prepare("SELECT run_id FROM baselines WHERE name = ?").bind(name),
    db
      .prepare(
        "INSERT INTO baselines (name, run_id, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET run_id = excluded.run_id, created_at = excluded.created_at",
      )
      .bind(name, runId, createdAt),
  ]);
  return previous!.results[0]?.run_id;
}

export interface BaselineRow {
  readonly name: string;
  readonly run_id: string;
  readonly created_at: number;
  readonly run_name: string | null;
  readonly status: RunStatus | null;
}

/** Every baseline by name, with its run's name and status. */
export async function listBaselines(db: D1Database): Promise<BaselineRow[]> {
  const { results } = await db
    .prepare("SELECT b.name, b.run_id, b.created_at, r.name AS run_name, r.status FROM baselines b LEFT JOIN runs r ON r.id = b.run_id ORDER BY b.name")
    .all<BaselineRow>();
  return results;
}
