/**
 * The windows a receiver's children flush (shards, or aggregators below it), taken in by
 * the RunCoordinator or a RunAggregator: each one appended to the flush log once (a retried
 * flush's windows are recognised there and skipped), then merged into the open windows and
 * the totals. After a restart the coordinator takes its log in again
 * (coordinator/run/log-replay.ts).
 */
import type { ChildFlush, ShardWindow } from "../../core/run/protocol.ts";
import type { RunTotals } from "../../core/run/run-totals.ts";
import type { FlushLog } from "./flush-log.ts";
import type { OpenWindows } from "./open-windows.ts";
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
export function takeInFlush(log: FlushLog, open: OpenWindows, totals: RunTotals, message: ChildFlush, region: string): FlushIntake {
  let accepted = 0;
  let duplicates = 0;
  let latest: ShardWindow | null = null;
  for (const window of message.windows) {
    if (!log.append(message.childIndex, window)) {
      duplicates++;
      continue;
    }
    accepted++;
    open.merge(message.childIndex, region, window, totals);
    if (!latest || window.windowS >= latest.windowS) latest = window;
  }
  return { accepted, duplicates, latest, scriptAbort: scriptAbortIn(message.windows) };
}
