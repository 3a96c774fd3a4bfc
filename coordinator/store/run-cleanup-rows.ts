/**
 * The D1 side of a run's clean-up (issue 49; migration 0012, SCHEMA.md): what its
 * coordinator checks before deleting its storage (the run is final and its summary is
 * stored), the status view it leaves behind for the API, the mark that its objects' storage
 * is gone, and the runs whose clean-up the cron tick has to finish
 * (coordinator/schedule/storage-sweep.ts).
 */
import type { Plan } from "../../core/plan/plan.ts";
import { FINAL_STATUSES, type RunStatus, type RunView } from "../../core/run/protocol.ts";
import type { RunSpec } from "../../core/spec/types.ts";
import type { SqlReader } from "./results-queries.ts";

/** What D1 holds of a run's end. */
export interface StoredEnd {
  readonly status: RunStatus;
  /** Its final summary is in D1: nothing of the run is lost with its objects' storage. */
  readonly summaryStored: boolean;
  readonly cleanedAt: number | null;
  /** The plan as stored when the run was created (parsed only by a clean-up whose coordinator holds nothing). */
  readonly planJson: string;
}

/** Null for a run D1 does not know. */
export async function storedEnd(db: D1Database, runId: string): Promise<StoredEnd | null> {
  const row = await db
    .prepare("SELECT status, summary_json IS NOT NULL AS summary_stored, cleaned_at, plan_json FROM runs WHERE id = ?")
    .bind(runId)
    .first<{ status: RunStatus; summary_stored: number; cleaned_at: number | null; plan_json: string }>();
  return row && { status: row.status, summaryStored: row.summary_stored === 1, cleanedAt: row.cleaned_at, planJson: row.plan_json };
}

/** Whether its objects' storage may go: the run is final and its summary is in D1. */
export function cleanable(end: StoredEnd | null): end is StoredEnd {
  return end !== null && FINAL_STATUSES.includes(end.status) && end.summaryStored;
}

/** The objects a plan stored as JSON starts: its shards and its tree. */
export function planOfJson(planJson: string): Pick<Plan, "shards" | "tree"> {
  const plan = JSON.parse(planJson) as Pick<Plan, "shards" | "tree">;
  if (!Array.isArray(plan?.shards)) throw new Error("the stored plan has no shards");
  return plan;
}

/** Stores the run's status view as it ended: GET /v1/runs/:id answers from it once the coordinator holds nothing. */
export async function storeFinalView(db: D1Database, runId: string, view: RunView): Promise<void> {
  await db.prepare("UPDATE runs SET view_json = ? WHERE id = ?").bind(JSON.stringify(view), runId).run();
}

/** The run's objects hold nothing any more. */
export async function markCleaned(db: D1Database, runId: string, nowMs: number): Promise<void> {
  await db.prepare("UPDATE runs SET cleaned_at = ? WHERE id = ?").bind(nowMs, runId).run();
}

/** The status view an ended run left in D1; null while it goes, or for a run D1 does not know. */
export async function storedFinalView(db: SqlReader, runId: string): Promise<RunView | null> {
  const [rows] = await db.batch([db.prepare("SELECT view_json FROM runs WHERE id = ?").bind(runId)]);
  const json = rows?.results[0]?.view_json;
  return typeof json === "string" ? (JSON.parse(json) as RunView) : null;
}

/** What the live stream of an ended run is drawn from (http/ended-run-live.ts): its final view and its spec as stored (redacted). */
export async function endedRunRecord(db: D1Database, runId: string): Promise<{ view: RunView; spec: RunSpec } | null> {
  const row = await db.prepare("SELECT view_json, spec_json FROM runs WHERE id = ?").bind(runId).first<{ view_json: string | null; spec_json: string }>();
  return row?.view_json ? { view: JSON.parse(row.view_json) as RunView, spec: JSON.parse(row.spec_json) as RunSpec } : null;
}

/**
 * Final runs with their summary in D1 whose objects may still hold storage, ended before
 * `endedBeforeMs`, oldest first, at most `limit`: their clean-up was interrupted (or they
 * ended before clean-ups existed).
 */
export async function runsToCleanUp(db: D1Database, endedBeforeMs: number, limit: number): Promise<string[]> {
  const statuses = FINAL_STATUSES.map(() => "?").join(",");
  const { results } = await db
    .prepare(
      `SELECT id FROM runs WHERE cleaned_at IS NULL AND ended_at < ? AND summary_json IS NOT NULL AND status IN (${statuses})
       ORDER BY ended_at LIMIT ?`,
    )
    .bind(endedBeforeMs, ...FINAL_STATUSES, limit)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}
