/**
 * Writing a run's merged windows to D1: every open window no shard can still add to
 * (core/run/run-lifecycle.ts closableBelow), in one batch per tick, then to the dashboards.
 *
 * The windows leave the open set, and their log rows are marked written, before the
 * batch is awaited: a flush arriving meanwhile opens a fresh cell (written next tick as
 * an extra row) instead of being merged into a cell that is already on its way. A failed
 * write puts them back and throws: the tick is retried (tick-failure.ts).
 */
import { closableBelow } from "../../core/run/run-lifecycle.ts";
import { reportersOf } from "../../core/plan/aggregation-tree.ts";
import type { ShardProgress } from "../shard-progress.ts";
import { seriesStatements, windowStatements } from "../store/results-store.ts";
import type { FlushLog } from "./flush-log.ts";
import type { LiveFeed } from "./live-feed.ts";
import type { OpenWindows } from "./open-windows.ts";
import type { RunRecord } from "./run-record.ts";

/** The coordinator's parts a write reads and changes. */
export interface WindowWriteParts {
  readonly db: D1Database;
  readonly open: OpenWindows;
  readonly log: FlushLog;
  readonly shards: ShardProgress;
  readonly live: LiveFeed;
}

/**
 * Writes every open window below every running shard's watermark, or older than
 * MAX_LATENESS_MS at `nowMs` (all of them once `everyoneDone`).
 */
export async function writeClosedWindows(parts: WindowWriteParts, run: RunRecord, nowMs: number, everyoneDone: boolean): Promise<void> {
  const { db, open, log, shards, live } = parts;
  const running = reportersOf(run.plan).filter((s) => !shards.isDone(s.index));
  // Never below what already left (flush-log.ts: the mark only rises).
  const cutoff = Math.max(log.writtenBelow, closableBelow({ watermarks: running.map((s) => shards.watermark(s.index)), t0Ms: run.t0Ms, nowMs, everyoneDone }));
  const closed = open.takeBelow(cutoff, (step) => run.spec.steps[step]?.name ?? String(step));
  if (!closed) return;
  const unmark = log.markWrittenBelow(cutoff);
  try {
    await db.batch([...windowStatements(db, run.runId, closed.cells), ...seriesStatements(db, run.runId, closed.series)]);
  } catch (error) {
    unmark();
    open.putBack(closed);
    throw error;
  }
  live.publishWindows(run.spec, closed.cells);
  open.forgetIterationsBefore(closed.newestWindowS - 10);
}
