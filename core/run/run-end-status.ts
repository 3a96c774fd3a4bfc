/**
 * The status a run ends with once its load and teardown are over, and why, decided once by
 * its coordinator (coordinator/run/run-end.ts finishRun), in the order k6 v1.8.1 returns its
 * errors: a teardown() that threw, aborted or ran past its timeout; else a stop the
 * coordinator made (an abort, an abortOnFail threshold, an error); else a script run in which
 * no iteration could run; else the script's exec.test.fail(). Null status: the thresholds'
 * verdict decides (core/run/summary.ts buildFinalSummary).
 */
import type { ForcedStatus } from "./summary.ts";

export interface EndFacts {
  /** The status the coordinator stopped the run with; null when it ran to its end. */
  readonly forced: ForcedStatus | null;
  /** Why it was stopped, when it was. */
  readonly note: string | null;
  /** How teardown() ended the run, when it did (coordinator/run/phases.ts). */
  readonly teardown: { readonly status: "error" | "aborted"; readonly reason: string } | null;
  /** Why no iteration could run (script-start.ts noIterationRan), or null. */
  readonly nothingRan: string | null;
  /** exec.test.fail()'s reason (RunRecord.markedFailed), when the script called it. */
  readonly markedFailed: string | undefined;
}

export interface RunEnd {
  readonly status: ForcedStatus | null;
  readonly reason: string | null;
  /**
   * The end is the script's exec.test.fail(): the run is `endedByScript`, so it exits 110
   * (protocol.ts exitCodeOf) where a threshold's failure exits 99.
   */
  readonly markedFailed: boolean;
}

/**
 * The run's end from what happened.
 *
 * @example
 * runEndStatus({ forced: null, note: null, teardown: null, nothingRan: null, markedFailed: "marked failed by the script: soft" })
 * // → { status: "failed", reason: "marked failed by the script: soft", markedFailed: true }
 */
export function runEndStatus(f: EndFacts): RunEnd {
  if (f.teardown) return { status: f.teardown.status, reason: f.teardown.reason, markedFailed: false };
  // k6 returns an abort (108, 105) or a threshold's abortOnFail (99) before it looks at the mark.
  if (f.forced !== null) return { status: f.forced, reason: f.note, markedFailed: false };
  if (f.nothingRan !== null) return { status: "error", reason: f.nothingRan, markedFailed: false };
  // k6 exits 110 even when thresholds failed too: its run command logs their error and keeps the mark.
  if (f.markedFailed !== undefined) return { status: "failed", reason: f.markedFailed, markedFailed: true };
  return { status: null, reason: null, markedFailed: false };
}
