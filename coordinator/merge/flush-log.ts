/**
 * The coordinator's flush log (and each aggregator's), in its SQLite storage: what it takes
 * in is appended as one row per intake — a flush at the coordinator, every flush of a short
 * while at an aggregator (coordinator/merge/intake-batch.ts) — in the same turn it is merged,
 * before any of it is acknowledged. Each window in a row is keyed by (child, window, part),
 * and every key logged is kept in memory, so a retried flush is recognised and ignored.
 * Windows leave — written to D1 at the coordinator, passed up to the parent at an
 * aggregator — by a cut-off that only rises; what has left is one mark, not a mark per row:
 * a window has left when it is below the mark's cut-off and its row is no newer than the
 * mark's last row (every row up to it had been merged when the windows below the cut-off
 * were taken). Totals are checkpointed every few seconds and the rows both in the
 * checkpoint and wholly left are trimmed: their data is dropped, their keys kept, so a
 * window its sender sends again much later (an acknowledgement it never got, a restart that
 * found it still stored) is still recognised. A restarted object replays the rest
 * (restore()), so nothing is lost and nothing is counted twice.
 *
 * A coordinator takes windows out (to its dashboards) every tick but writes them to D1 only
 * every few (coordinator/run/window-writes.ts, pinned by its test), so it keeps a second mark, of what was taken: a row
 * taken and not yet written is replayed to be written, not taken (shown) again. An
 * aggregator passes windows up as it takes them: its two marks are one.
 *
 * Rows, not windows: a row written is what storage bills, and a row per child window was
 * most of what a second of a large run cost (issue 41). So one row an intake, one mark a
 * tick, one trim a row, and no index: the keys live in the row and in memory.
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

/** A child's window, as an intake logs it. */
export interface LoggedEntry {
  readonly child: number;
  readonly window: ShardWindow;
}

/** A row's windows as stored: [child, window second, part, steps, series?]. */
type StoredWindow = readonly [number, number, number, ShardWindow["steps"], ShardWindow["series"]?];

/** A logged window's key, as the log keeps it in memory: a window with the same key is a resend. */
export const loggedWindowKey = (child: number, windowS: number, part: number) => `${child}:${windowS}:${part}`;

/** Which rows have left: those of a window below `cutoff`, no newer than row `throughId`. */
export interface LogMark {
  readonly cutoff: number;
  readonly throughId: number;
}

export class FlushLog {
  readonly #sql: SqlStorage;
  /** Every (child, window, part) logged, trimmed rows' too. */
  readonly #keys = new Set<string>();
  #lastId = 0;
  /** The rows written (to D1, or passed up). */
  #mark: LogMark;
  /** The rows taken out of the open windows: written, or on their way. */
  #taken: LogMark;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    // keys: JSON [[child, window, part], …]; data: JSON StoredWindow[] ('' once trimmed);
    // newest_window_s: the newest window in the row, for the trim.
    sql.exec(
      "CREATE TABLE IF NOT EXISTS flush_rows (id INTEGER PRIMARY KEY AUTOINCREMENT, keys TEXT NOT NULL, data TEXT NOT NULL, newest_window_s INTEGER NOT NULL)",
    );
    sql.exec("CREATE TABLE IF NOT EXISTS flush_log_mark (one INTEGER PRIMARY KEY CHECK (one = 0), cutoff INTEGER NOT NULL, through_id INTEGER NOT NULL)");
    sql.exec("CREATE TABLE IF NOT EXISTS flush_log_taken (one INTEGER PRIMARY KEY CHECK (one = 0), cutoff INTEGER NOT NULL, through_id INTEGER NOT NULL)");
    for (const row of sql.exec<{ id: number; keys: string }>("SELECT id, keys FROM flush_rows")) {
      for (const [child, windowS, part] of JSON.parse(row.keys) as Array<[number, number, number]>) this.#keys.add(loggedWindowKey(child, windowS, part));
      this.#lastId = Math.max(this.#lastId, row.id);
    }
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

  /** Whether a child's window is logged already (a retried flush, or a resend after a restart). */
  has(child: number, window: Pick<ShardWindow, "windowS" | "part">): boolean {
    return this.#keys.has(loggedWindowKey(child, window.windowS, window.part));
  }

  /** Logs an intake's windows (none of them logged yet: has()) as one row. */
  append(entries: readonly LoggedEntry[]): void {
    if (!entries.length) return;
    const keys: Array<[number, number, number]> = [];
    const data: StoredWindow[] = [];
    let newest = 0;
    for (const { child, window } of entries) {
      keys.push([child, window.windowS, window.part]);
      data.push(window.series?.length ? [child, window.windowS, window.part, window.steps, window.series] : [child, window.windowS, window.part, window.steps]);
      newest = Math.max(newest, window.windowS);
    }
    const { id } = this.#sql
      .exec<{ id: number }>(
        "INSERT INTO flush_rows (keys, data, newest_window_s) VALUES (?, ?, ?) RETURNING id",
        JSON.stringify(keys),
        JSON.stringify(data),
        newest,
      )
      .one();
    for (const [child, windowS, part] of keys) this.#keys.add(loggedWindowKey(child, windowS, part));
    this.#lastId = id;
  }

  /**
   * Marks taken every row of a window below `cutoff` (at least `takenBelow`) that is in the
   * log now; the mark to pass to markWritten() once those rows are written.
   */
  markTakenBelow(cutoff: number): LogMark {
    const taken = { cutoff: Math.max(this.#taken.cutoff, cutoff), throughId: this.#lastId };
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
    const mark = { cutoff: Math.max(this.#taken.cutoff, cutoff), throughId: this.#lastId };
    writeMark(this.#sql, "flush_log_mark", mark);
    this.#mark = this.#taken = mark;
  }

  /**
   * The checkpoint of `totals` through the newest row, stored with `put` before the rows
   * that are both in it and wholly written are trimmed (their data dropped, their keys kept).
   */
  checkpoint(totals: RunTotals, put: (checkpoint: TotalsCheckpoint) => void): void {
    put({ throughId: this.#lastId, wire: totals.toWire() });
    const { cutoff, throughId } = this.#mark;
    this.#sql.exec("UPDATE flush_rows SET data = '' WHERE id <= ? AND newest_window_s < ? AND data != ''", Math.min(this.#lastId, throughId), cutoff);
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
    for (const { id, child, window } of this.#kept()) {
      if (id > throughId) replay.addToTotals(totals, child, window);
      if (id > taken.throughId || window.windowS >= taken.cutoff) replay.reopen(child, window);
      else if (id > mark.throughId || window.windowS >= mark.cutoff) replay.unwritten(child, window);
    }
    return totals;
  }

  /** The windows whose data is still kept (not trimmed), in log order, as their senders sent them. */
  keptWindows(): LoggedEntry[] {
    return [...this.#kept()].map(({ child, window }) => ({ child, window }));
  }

  *#kept(): Generator<{ id: number; child: number; window: ShardWindow }> {
    for (const row of this.#sql.exec<{ id: number; data: string }>("SELECT id, data FROM flush_rows WHERE data != '' ORDER BY id")) {
      for (const [child, windowS, part, steps, series] of JSON.parse(row.data) as StoredWindow[]) {
        yield { id: row.id, child, window: { windowS, part, steps, ...(series ? { series } : {}) } };
      }
    }
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
