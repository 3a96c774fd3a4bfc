/**
 * The windows a receiver's children flush (shards, or aggregators below it), taken in by
 * the RunCoordinator (a flush at a time) or a RunAggregator (every flush of a short while
 * at once, coordinator/merge/intake-batch.ts): the new ones appended to the flush log as one
 * row (a retried flush's windows are recognised there and skipped), then merged into the
 * open windows and the totals, in the same turn. After a restart the coordinator takes its
 * log in again (coordinator/run/log-replay.ts).
 */
import type { ChildFlush, ShardWindow } from "../../core/run/protocol.ts";
import type { RunTotals } from "../../core/run/run-totals.ts";
import { loggedWindowKey, type FlushLog, type LoggedEntry } from "./flush-log.ts";
import type { OpenWindows } from "./open-windows.ts";
import { scriptAbortIn, scriptFailIn } from "../../core/run/script-report.ts";

/** What one flush brought: windows new and repeated, and the newest new one (null: none). */
export interface FlushIntake {
  readonly accepted: number;
  readonly duplicates: number;
  readonly latest: ShardWindow | null;
  /** A k6 script's exec.test.abort() message among the new windows (null: none). */
  readonly scriptAbort: string | null;
  /** A k6 script's exec.test.fail() message among the windows (null: none): the run goes on, marked failed. */
  readonly scriptFail: string | null;
}

/** Takes in the windows of `message`, from a child in `region`. */
export function takeInFlush(log: FlushLog, open: OpenWindows, totals: RunTotals, message: ChildFlush, region: string): FlushIntake {
  return takeInFlushes(log, open, totals, [message], () => region)[0]!;
}

/**
 * Takes in the windows of several flushes as one log row; what each brought, in order. The
 * row goes first: a write that fails leaves nothing merged, and the flushes unacknowledged.
 */
export function takeInFlushes(
  log: FlushLog,
  open: OpenWindows,
  totals: RunTotals,
  messages: readonly ChildFlush[],
  regionOf: (child: number) => string,
): FlushIntake[] {
  const entries: LoggedEntry[] = [];
  const inThisRow = new Set<string>();
  const news = messages.map((message) =>
    message.windows.filter((window) => {
      const key = loggedWindowKey(message.childIndex, window.windowS, window.part);
      if (log.has(message.childIndex, window) || inThisRow.has(key)) return false;
      inThisRow.add(key);
      entries.push({ child: message.childIndex, window });
      return true;
    }),
  );
  log.append(entries);
  return messages.map((message, i): FlushIntake => {
    let latest: ShardWindow | null = null;
    for (const window of news[i]!) {
      open.merge(message.childIndex, regionOf(message.childIndex), window, totals);
      if (!latest || window.windowS >= latest.windowS) latest = window;
    }
    return {
      accepted: news[i]!.length,
      duplicates: message.windows.length - news[i]!.length,
      latest,
      scriptAbort: scriptAbortIn(message.windows),
      scriptFail: scriptFailIn(message.windows),
    };
  });
}
