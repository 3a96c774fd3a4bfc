/**
 * The windows shards flush, taken in by their coordinator: each one appended to the flush
 * log once (a retried flush's windows are recognised there and skipped), then merged into
 * the open windows and the run's totals. After a restart the log is taken in again: the
 * totals rebuilt from their checkpoint and newer rows, the windows not yet taken reopened,
 * and those taken but not yet in D1 queued to be written (window-writes.ts).
 */
import type { ShardFlush, ShardWindow } from "../../core/run/protocol.ts";
import type { RunTotals } from "../../core/run/run-totals.ts";
import type { FlushLog, TotalsCheckpoint } from "./flush-log.ts";
import { OpenWindows } from "./open-windows.ts";
import type { RunRecord } from "./run-record.ts";
import type { UnwrittenWindows } from "./window-writes.ts";
import { reportersOf } from "../../core/plan/aggregation-tree.ts";
import { scriptAbortIn } from "../../core/run/script-report.ts";

/** What one flush brought: windows new and repeated, and the newest new one (null: none). */
export interface FlushIntake {
  readonly accepted: number;
  readonly duplicates: number;
  readonly latest: ShardWindow | null;
  /** A k6 script's exec.test.abort() message among the new windows (null: none). */
  readonly scriptAbort: string | null;
}

/** Takes in the windows of `message`, from a shard of `region`. */
export function takeInFlush(log: FlushLog, open: OpenWindows, totals: RunTotals, message: ShardFlush, region: string): FlushIntake {
  let accepted = 0;
  let duplicates = 0;
  let latest: ShardWindow | null = null;
  for (const window of message.windows) {
    if (!log.append(message.shardIndex, window)) {
      duplicates++;
      continue;
    }
    accepted++;
    open.merge(message.shardIndex, region, window, totals);
    if (!latest || window.windowS >= latest.windowS) latest = window;
  }
  return { accepted, duplicates, latest, scriptAbort: scriptAbortIn(message.windows) };
}

/**
 * Rebuilds the totals (checkpoint + newer log rows), reopens the windows not yet taken and
 * queues those taken (shown) but not yet written to D1, due at once.
 */
export function takeInLog(log: FlushLog, open: OpenWindows, unwritten: UnwrittenWindows, checkpoint: TotalsCheckpoint | undefined, run: RunRecord): RunTotals {
  const regions = new Map(reportersOf(run.plan).map((r) => [r.index, r.region]));
  const regionOf = (sender: number) => regions.get(sender)!;
  const taken = new OpenWindows();
  const totals = log.restore(checkpoint, {
    addToTotals: (totals, shard, window) => {
      for (const [step, wire] of window.steps) totals.addWire(shard, regionOf(shard), step, wire);
    },
    reopen: (shard, window) => open.merge(shard, regionOf(shard), window, null),
    unwritten: (shard, window) => taken.merge(shard, regionOf(shard), window, null),
  });
  const closed = taken.takeBelow(Number.MAX_SAFE_INTEGER, (step) => run.spec.steps[step]?.name ?? String(step));
  if (closed) unwritten.add(closed, log.takenMark, 0); // taken before the restart: long enough ago
  return totals;
}
