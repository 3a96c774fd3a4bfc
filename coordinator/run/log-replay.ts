/**
 * A restarted RunCoordinator takes its flush log in again: the totals rebuilt from their
 * checkpoint and newer rows, the windows not yet taken reopened, and those taken (shown)
 * but not yet in D1 queued to be written (window-writes.ts). Pinned by
 * coordinator/run/window-writes.test.ts's restart case.
 */
import type { RunTotals } from "../../core/run/run-totals.ts";
import { reportersOf } from "../../core/plan/aggregation-tree.ts";
import type { FlushLog, TotalsCheckpoint } from "../merge/flush-log.ts";
import { OpenWindows } from "../merge/open-windows.ts";
import type { RunRecord } from "./run-record.ts";
import type { UnwrittenWindows } from "./window-writes.ts";

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
