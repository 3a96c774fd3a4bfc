/**
 * Taking a run's merged windows out and writing them to D1. Every tick, every open window
 * no shard can still add to (core/run/run-lifecycle.ts takeableBelow) is taken: shown on the
 * dashboards at once, and kept with the windows taken before it until a D1 write is due
 * (d1WriteDue: every few ticks, sooner in a run of many regions and steps, and at the end),
 * then written in one batch.
 *
 * Taken windows leave the open set, and their log rows are marked taken, in the same turn
 * they are shown: a flush arriving later opens a fresh cell (shown and written as a late
 * portion) instead of being merged into a cell already shown. Their rows are marked written
 * only once the batch is in D1; a failed write keeps them waiting and throws (the tick is
 * retried: tick-failure.ts), and a restarted coordinator replays them to be written, not
 * shown again (flush-log.ts).
 */
import { takeableBelow, d1WriteDue } from "../../core/run/run-lifecycle.ts";
import { reportersOf } from "../../core/plan/aggregation-tree.ts";
import type { ChildProgress } from "../merge/child-progress.ts";
import { seriesStatements, windowStatements } from "../store/results-store.ts";
import type { ClosedCell, SeriesRow } from "../../core/run/window-cell.ts";
import type { FlushLog, LogMark } from "../merge/flush-log.ts";
import type { LiveFeed } from "./live-feed.ts";
import type { ClosedWindows, OpenWindows } from "../merge/open-windows.ts";
import type { RunRecord } from "./run-record.ts";

/** Windows taken (shown) and not yet in D1, with the log mark their write moves to. */
export class UnwrittenWindows {
  #cells: ClosedCell[] = [];
  #series: SeriesRow[] = [];
  #mark: LogMark | null = null;
  /** When the oldest of them was taken; null while none waits. */
  #oldestTakenMs: number | null = null;
  /** The write under way, if any: writes go one at a time, so the written mark moves in order. */
  #writing: Promise<unknown> = Promise.resolve();

  get oldestTakenMs(): number | null {
    return this.#oldestTakenMs;
  }

  get cellCount(): number {
    return this.#cells.length;
  }

  /** Adds windows taken at `nowMs`, their rows covered by `mark`. */
  add(closed: ClosedWindows, mark: LogMark, nowMs: number): void {
    this.#cells.push(...closed.cells);
    this.#series.push(...closed.series);
    this.#mark = mark;
    this.#oldestTakenMs ??= nowMs;
  }

  /** Takes every waiting window out for a write; `putBack` returns them if it fails. */
  take(): { cells: ClosedCell[]; series: SeriesRow[]; mark: LogMark; putBack: () => void } | null {
    const mark = this.#mark;
    if (!mark) return null;
    const taken = { cells: this.#cells, series: this.#series, mark, oldestTakenMs: this.#oldestTakenMs };
    this.#cells = [];
    this.#series = [];
    this.#mark = null;
    this.#oldestTakenMs = null;
    const putBack = () => {
      // Older than whatever was taken meanwhile: first, and their mark if none came since.
      this.#cells.unshift(...taken.cells);
      this.#series.unshift(...taken.series);
      this.#mark ??= taken.mark;
      this.#oldestTakenMs = taken.oldestTakenMs;
    };
    return { cells: taken.cells, series: taken.series, mark, putBack };
  }

  /** Runs `write` once the write under way (a tick's, or the end's) has settled. */
  oneAtATime(write: () => Promise<void>): Promise<void> {
    const next = this.#writing.then(write);
    this.#writing = next.catch(() => {});
    return next;
  }
}

/** The coordinator's parts a write reads and changes. */
export interface WindowWriteParts {
  readonly db: D1Database;
  readonly open: OpenWindows;
  readonly unwritten: UnwrittenWindows;
  readonly log: FlushLog;
  readonly shards: ChildProgress;
  readonly live: LiveFeed;
}

/**
 * Takes every open window below every running shard's watermark, or older than
 * MAX_LATENESS_MS at `nowMs` (all of them once `everyoneDone`), to the dashboards; writes
 * what has waited long enough (everything once `everyoneDone`) to D1.
 */
export async function showClosedWindows(parts: WindowWriteParts, run: RunRecord, nowMs: number, everyoneDone: boolean): Promise<void> {
  const { db, open, unwritten, log, shards, live } = parts;
  const running = reportersOf(run.plan).filter((s) => !shards.isDone(s.index));
  // Never below what already left (flush-log.ts: the mark only rises).
  const cutoff = Math.max(log.takenBelow, takeableBelow({ watermarks: running.map((s) => shards.watermark(s.index)), t0Ms: run.t0Ms, nowMs, everyoneDone }));
  const closed = open.takeBelow(cutoff, (step) => run.spec.steps[step]?.name ?? String(step));
  if (closed) {
    unwritten.add(closed, log.markTakenBelow(cutoff), nowMs);
    live.publishWindows(run.spec, closed.cells);
    open.forgetIterationsBefore(closed.newestWindowS - 10);
  }
  await unwritten.oneAtATime(async () => {
    if (!d1WriteDue({ oldestTakenMs: unwritten.oldestTakenMs, cells: unwritten.cellCount, nowMs, everyoneDone })) return;
    const batch = unwritten.take()!;
    try {
      await db.batch([...windowStatements(db, run.runId, batch.cells), ...seriesStatements(db, run.runId, batch.series)]);
    } catch (error) {
      batch.putBack();
      throw error;
    }
    log.markWritten(batch.mark);
  });
}
