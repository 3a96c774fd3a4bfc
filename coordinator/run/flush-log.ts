/**
 * The coordinator's flush log, in its SQLite storage: every accepted window is appended in
 * the same turn it is merged, keyed by (shard, window, part) so a retried flush is
 * recognised and ignored. A row is marked written once its window went to D1; totals are
 * checkpointed every few seconds and the rows both in the checkpoint and in D1 trimmed. A
 * restarted object replays the rest (restore()), so nothing is lost and nothing is
 * counted twice.
 */
import type { ShardWindow } from "../../core/run/protocol.ts";
import { RunTotals, type RunTotalsWire } from "../../core/run/run-totals.ts";

/** A window as logged and replayed: its steps, with its scraped series when it has any. */
export type LoggedWindow = Pick<ShardWindow, "windowS" | "steps" | "series">;

/** Totals as checkpointed (storage key "totals"): through which log row they count. */
export interface TotalsCheckpoint {
  readonly throughId: number;
  readonly wire: RunTotalsWire;
}

function logData(window: ShardWindow): string {
  return JSON.stringify(window.series?.length ? { steps: window.steps, series: window.series } : window.steps);
}

function parseLogData(data: string): Pick<ShardWindow, "steps" | "series"> {
  const parsed = JSON.parse(data) as unknown;
  return Array.isArray(parsed) ? { steps: parsed as ShardWindow["steps"] } : (parsed as Pick<ShardWindow, "steps" | "series">);
}

/** Row ids per UPDATE: SQLite's bound-parameter limit, with room to spare. */
const IDS_PER_STATEMENT = 90;

export class FlushLog {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    sql.exec(
      `CREATE TABLE IF NOT EXISTS flush_log (id INTEGER PRIMARY KEY AUTOINCREMENT, shard INTEGER NOT NULL, window_s INTEGER NOT NULL,
        part INTEGER NOT NULL, data TEXT NOT NULL, written INTEGER NOT NULL DEFAULT 0, UNIQUE (shard, window_s, part))`,
    );
  }

  /** Logs a shard's window; false when it is logged already (a retried flush). */
  append(shard: number, window: ShardWindow): boolean {
    const inserted = this.#sql
      .exec(
        "INSERT INTO flush_log (shard, window_s, part, data) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
        shard,
        window.windowS,
        window.part,
        logData(window),
      )
      .toArray();
    return inserted.length > 0;
  }

  /**
   * Marks written every unwritten row of a window below `cutoff`, and returns how to undo
   * it (the D1 write failed: the rows are replayed after a restart again).
   */
  markWrittenBelow(cutoff: number): () => void {
    const ids = this.#sql
      .exec<{ id: number }>("SELECT id FROM flush_log WHERE written = 0 AND window_s < ?", cutoff)
      .toArray()
      .map((r) => r.id);
    const mark = (written: 0 | 1) => {
      for (let i = 0; i < ids.length; i += IDS_PER_STATEMENT) {
        const chunk = ids.slice(i, i + IDS_PER_STATEMENT);
        this.#sql.exec(`UPDATE flush_log SET written = ? WHERE id IN (${chunk.map(() => "?").join(",")})`, written, ...chunk);
      }
    };
    mark(1);
    return () => mark(0);
  }

  /**
   * The checkpoint of `totals` through the newest row, stored with `put` before the rows
   * that are both in it and in D1 are trimmed.
   */
  checkpoint(totals: RunTotals, put: (checkpoint: TotalsCheckpoint) => void): void {
    const maxId = this.#sql.exec<{ id: number | null }>("SELECT MAX(id) AS id FROM flush_log").one().id ?? 0;
    put({ throughId: maxId, wire: totals.toWire() });
    this.#sql.exec("DELETE FROM flush_log WHERE id <= ? AND written = 1", maxId);
  }

  /**
   * After a restart: the totals (checkpoint + newer rows, added to them through `addToTotals`)
   * and every window not yet written to D1 (`reopen`), in log order.
   */
  restore(
    checkpoint: TotalsCheckpoint | undefined,
    replay: { addToTotals(totals: RunTotals, shard: number, window: LoggedWindow): void; reopen(shard: number, window: LoggedWindow): void },
  ): RunTotals {
    const totals = checkpoint ? RunTotals.fromWire(checkpoint.wire) : new RunTotals();
    const throughId = checkpoint?.throughId ?? 0;
    const rows = this.#sql.exec<{ id: number; shard: number; window_s: number; data: string; written: number }>(
      "SELECT id, shard, window_s, data, written FROM flush_log WHERE id > ? OR written = 0 ORDER BY id",
      throughId,
    );
    for (const row of rows) {
      const window = { windowS: row.window_s, ...parseLogData(row.data) };
      if (row.id > throughId) replay.addToTotals(totals, row.shard, window);
      if (row.written === 0) replay.reopen(row.shard, window);
    }
    return totals;
  }
}
