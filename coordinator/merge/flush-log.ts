/**
 * The coordinator's flush log (and each aggregator's), in its SQLite storage: every
 * accepted window is appended in the same turn it is merged, keyed by (child, window,
 * part) so a retried flush is recognised and ignored. Windows leave — written to D1 at the
 * coordinator, passed up to the parent at an aggregator — by a cut-off that only rises; what has left is one mark, not
 * a mark per row: a row is written when its window is below the mark's cut-off and the row
 * is no newer than the mark's last row (every row up to it had been merged when the
 * windows below the cut-off were taken). Totals are checkpointed every few seconds and the
 * rows both in the checkpoint and written trimmed: their data is dropped, their key kept,
 * so a window its sender sends again much later (an acknowledgement it never got, a
 * restart that found it still stored) is still recognised. A restarted object replays the
 * rest (restore()), so nothing is lost and nothing is counted twice.
 *
 * A coordinator takes windows out (to its dashboards) every tick but writes them to D1 only
 * every few (coordinator/run/window-writes.ts, pinned by its test), so it keeps a second mark, of what was taken: a row
 * taken and not yet written is replayed to be written, not taken (shown) again. An
 * aggregator passes windows up as it takes them: its two marks are one.
 *
 * One mark a tick where there was an UPDATE a row: a row written costs as much as a row
 * inserted, and at an aggregator the log is most of what a shard's second costs in storage.
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

/** Which rows have left: those of a window below `cutoff`, no newer than row `throughId`. */
export interface LogMark {
  readonly cutoff: number;
  readonly throughId: number;
}

export class FlushLog {
  readonly #sql: SqlStorage;
  /** The rows written (to D1, or passed up). */
  #mark: LogMark;
  /** The rows taken out of the open windows: written, or on their way. */
  #taken: LogMark;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    sql.exec(
      `CREATE TABLE IF NOT EXISTS flush_log (id INTEGER PRIMARY KEY AUTOINCREMENT, shard INTEGER NOT NULL, window_s INTEGER NOT NULL,
        part INTEGER NOT NULL, data TEXT NOT NULL, written INTEGER NOT NULL DEFAULT 0, UNIQUE (shard, window_s, part))`,
    );
    sql.exec("CREATE TABLE IF NOT EXISTS flush_log_mark (one INTEGER PRIMARY KEY CHECK (one = 0), cutoff INTEGER NOT NULL, through_id INTEGER NOT NULL)");
    sql.exec("CREATE TABLE IF NOT EXISTS flush_log_taken (one INTEGER PRIMARY KEY CHECK (one = 0), cutoff INTEGER NOT NULL, through_id INTEGER NOT NULL)");
    this.#mark = readMark(sql, "flush_log_mark") ?? { cutoff: 0, throughId: 0 };
    // Never behind what was written (markWrittenBelow moves both but stores one).
    const taken = readMark(sql, "flush_log_taken");
    this.#taken = taken && taken.cutoff >= this.#mark.cutoff && taken.throughId >= this.#mark.throughId ? taken : this.#mark;
  }

  /**
   * Windows below this have been taken out once already: a cut-off computed lower (after a
   * restart, from progress not yet caught up) is raised to it, so the mark only rises.
   */
  get takenBelow(): number {
    return this.#taken.cutoff;
  }

  /** The rows taken so far (written, or on their way): what a write of all of them marks. */
  get takenMark(): LogMark {
    return this.#taken;
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
   * Marks taken every row of a window below `cutoff` (at least `takenBelow`) that is in the
   * log now; the mark to pass to markWritten() once those rows are written.
   */
  markTakenBelow(cutoff: number): LogMark {
    const taken = { cutoff: Math.max(this.#taken.cutoff, cutoff), throughId: this.#maxId() };
    writeMark(this.#sql, "flush_log_taken", taken);
    this.#taken = taken;
    return taken;
  }

  /** Marks written the rows `taken` covers (a mark from markTakenBelow; the mark only rises). */
  markWritten(taken: LogMark): void {
    if (taken.cutoff < this.#mark.cutoff || taken.throughId < this.#mark.throughId) return;
    writeMark(this.#sql, "flush_log_mark", taken);
    this.#mark = taken;
  }

  /**
   * Marks taken and written at once, for windows that leave as they are taken (an
   * aggregator's): one row stored, as the taken mark is never behind the written one.
   */
  markWrittenBelow(cutoff: number): void {
    const mark = { cutoff: Math.max(this.#taken.cutoff, cutoff), throughId: this.#maxId() };
    writeMark(this.#sql, "flush_log_mark", mark);
    this.#mark = this.#taken = mark;
  }

  /**
   * The checkpoint of `totals` through the newest row, stored with `put` before the rows
   * that are both in it and written are trimmed (their data dropped, their keys kept).
   */
  checkpoint(totals: RunTotals, put: (checkpoint: TotalsCheckpoint) => void): void {
    const maxId = this.#maxId();
    put({ throughId: maxId, wire: totals.toWire() });
    const { cutoff, throughId } = this.#mark;
    this.#sql.exec("UPDATE flush_log SET data = '' WHERE id <= ? AND window_s < ? AND data != ''", Math.min(maxId, throughId), cutoff);
  }

  /**
   * After a restart: the totals (checkpoint + newer rows, added to them through `addToTotals`),
   * every window not yet taken (`reopen`) and every one taken but not yet written
   * (`unwritten`), in log order.
   */
  restore(
    checkpoint: TotalsCheckpoint | undefined,
    replay: {
      addToTotals(totals: RunTotals, shard: number, window: LoggedWindow): void;
      reopen(shard: number, window: LoggedWindow): void;
      unwritten(shard: number, window: LoggedWindow): void;
    },
  ): RunTotals {
    const totals = checkpoint ? RunTotals.fromWire(checkpoint.wire) : new RunTotals();
    const throughId = checkpoint?.throughId ?? 0;
    const mark = this.#mark;
    const taken = this.#taken;
    const rows = this.#sql.exec<{ id: number; shard: number; window_s: number; data: string }>(
      "SELECT id, shard, window_s, data FROM flush_log WHERE (id > ? OR id > ? OR window_s >= ?) AND data != '' ORDER BY id",
      throughId,
      mark.throughId,
      mark.cutoff,
    );
    for (const row of rows) {
      const window = { windowS: row.window_s, ...parseLogData(row.data) };
      if (row.id > throughId) replay.addToTotals(totals, row.shard, window);
      if (row.id > taken.throughId || row.window_s >= taken.cutoff) replay.reopen(row.shard, window);
      else if (row.id > mark.throughId || row.window_s >= mark.cutoff) replay.unwritten(row.shard, window);
    }
    return totals;
  }

  #maxId(): number {
    return this.#sql.exec<{ id: number | null }>("SELECT MAX(id) AS id FROM flush_log").one().id ?? 0;
  }
}

function readMark(sql: SqlStorage, table: string): LogMark | null {
  const row = sql.exec<{ cutoff: number; through_id: number }>(`SELECT cutoff, through_id FROM ${table}`).toArray()[0];
  return row ? { cutoff: row.cutoff, throughId: row.through_id } : null;
}

function writeMark(sql: SqlStorage, table: string, mark: LogMark): void {
  sql.exec(
    `INSERT INTO ${table} (one, cutoff, through_id) VALUES (0, ?, ?) ON CONFLICT (one) DO UPDATE SET cutoff = excluded.cutoff, through_id = excluded.through_id`,
    mark.cutoff,
    mark.throughId,
  );
}
