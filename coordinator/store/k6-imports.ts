/**
 * k6 summaries imported beside a run for crosscheck (D1 `k6_imports`, migration 0005),
 * stored as the storable part of the document (core/formats/k6-summary.ts).
 */
import type { K6Format } from "../../core/formats/k6-summary.ts";

export interface K6ImportRow {
  readonly id: string;
  readonly format: K6Format;
  readonly imported_at: number;
  readonly summary_json: string;
}

export async function insertK6Import(db: D1Database, runId: string, row: K6ImportRow): Promise<void> {
  await db
    .prepare("INSERT INTO k6_imports (id, run_id, format, imported_at, summary_json) VALUES (?, ?, ?, ?, ?)")
    .bind(row.id, runId, row.format, row.imported_at, row.summary_json)
    .run();
}

/** A run's imports, oldest first. */
export async function listK6Imports(db: D1Database, runId: string): Promise<K6ImportRow[]> {
  const { results } = await db
    .prepare("SELECT id, format, imported_at, summary_json FROM k6_imports WHERE run_id = ? ORDER BY imported_at")
    .bind(runId)
    .all<K6ImportRow>();
  return results;
}
