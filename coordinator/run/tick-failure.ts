/**
 * A coordinator tick that throws (D1 refusing writes, say): it is retried with backoff up
 * to 30 s, and after too many failures in a row the run ends as `error`, its summary kept
 * in the coordinator (the retry times and budget: tick-retry.ts). Pure: the object asks
 * these, with the time passed in, and writes.
 * (Pinned by test/workers/coordinator-resilience.test.ts.)
 */
import { hideInSummary, redactSpec, secretHider } from "../../core/spec/redact.ts";
import { endOf, type RunRecord } from "./run-record.ts";
import { endSummary, type SummarySources } from "./summary-of.ts";
import type { Summary } from "../../core/run/summary.ts";

export { tickFailureBudget, tickRetryDelayMs } from "./tick-retry.ts";

/** `run` after one more failed tick: the count, and the message the status shows while retrying. */
export function withTickFailure(run: RunRecord, error: unknown): { readonly run: RunRecord; readonly failures: number; readonly message: string } {
  const failures = (run.tickFailures ?? 0) + 1;
  const message = error instanceof Error ? error.message : String(error);
  return { run: { ...run, tickFailures: failures, lastError: message }, failures, message };
}

/**
 * The run given up because its results could not be stored: `error`, measured until
 * `endMs` (run-record.ts endOf), its secrets forgotten.
 */
export function unstorableRun(run: RunRecord, message: string, endMs: number): RunRecord {
  return {
    ...run,
    status: "error",
    stopping: null,
    endMs,
    abortReason: `results could not be stored: ${message}`,
    spec: redactSpec(run.spec),
  };
}

/**
 * The end of a run given up at `nowMs`: its record, `error` with its verdict, and the
 * summary the coordinator keeps (D1 refused it), measured until the run's end (endOf).
 */
export function unstorableEnd(run: RunRecord, message: string, nowMs: number, sources: SummarySources): { final: RunRecord; summary: Summary; endMs: number } {
  const endMs = endOf(run, nowMs);
  const unstorable = unstorableRun(run, message, endMs);
  const summary = hideInSummary(endSummary(unstorable, endMs, "error", sources), secretHider(run.spec));
  return { final: { ...unstorable, verdict: summary.edgeload.verdict! }, summary, endMs };
}
