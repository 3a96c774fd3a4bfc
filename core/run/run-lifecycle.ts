/**
 * The RunCoordinator's lifecycle decision, made on each tick from the run's state and the
 * time: finish now (and with which status), or keep going — evaluating abortOnFail
 * thresholds and entering `finishing` once the schedule is over; and which windows it (or
 * an aggregator) may take out, and when its taken windows are written to D1. Pure, so the
 * timing rules are tested in Node (run-lifecycle.test.ts); the Durable Object only carries
 * them out.
 *
 *   pending → running → finishing → passed | failed | inconclusive | aborted | error
 */
import { WINDOW_MS, type RunStatus } from "./protocol.ts";

/** After the planned end, shards get this long (plus their graceful stop or request timeout) to report done. */
export const FINISH_GRACE_MS = 15_000;
/**
 * After an abort (API or abortOnFail) the run ends as soon as every shard has reported
 * done — they stop sending within a second — or after this long: a shard that cannot
 * reach its coordinator for a while retries its final flush every few seconds, and what it
 * measured must not be thrown away because it came late (k6's gracefulStop is 30 s too).
 */
export const ABORT_GRACE_MS = 30_000;

export interface LifecycleState {
  readonly status: RunStatus;
  /** Set by an abort or a failing abortOnFail threshold: the status the run ends with. */
  readonly stopping: "aborted" | "failed" | null;
  /** When sending stopped (set on abort), epoch ms. */
  readonly endMs: number | null;
  readonly t0Ms: number;
  readonly durationMs: number;
  /** How long after the schedule's end shards may still be at work (core/schedule/graceful-stop.ts afterEndMs). */
  readonly afterEndMs: number;
  /** Every shard has sent its final flush. */
  readonly everyoneDone: boolean;
}

export type LifecycleStep =
  /**
   * End the run. `status` null: the verdict decides (core/run/run-verdict.ts). `silent`:
   * some shards never reported done, so what they measured is missing and the run cannot
   * pass (it is inconclusive unless a threshold failed on what did arrive).
   */
  | { readonly kind: "finish"; readonly status: "aborted" | "failed" | null; readonly silent: boolean }
  /** Keep going; evaluate abortOnFail thresholds unless stopping, enter `finishing` if asked. */
  | { readonly kind: "continue"; readonly evaluateThresholds: boolean; readonly enterFinishing: boolean };

export function lifecycleStep(s: LifecycleState, nowMs: number): LifecycleStep {
  if (s.stopping) {
    const graceOver = nowMs >= (s.endMs ?? nowMs) + ABORT_GRACE_MS;
    return s.everyoneDone || graceOver
      ? { kind: "finish", status: s.stopping, silent: false }
      : { kind: "continue", evaluateThresholds: false, enterFinishing: false };
  }
  const endOfSchedule = s.t0Ms + s.durationMs;
  if (s.everyoneDone) return { kind: "finish", status: null, silent: false };
  if (nowMs >= endOfSchedule + s.afterEndMs + FINISH_GRACE_MS) return { kind: "finish", status: null, silent: true };
  return { kind: "continue", evaluateThresholds: true, enterFinishing: s.status === "running" && nowMs >= endOfSchedule };
}

/**
 * A window closes (it is shown, and waits for its D1 write) once every shard still sending
 * has passed it, or this long after it ended, so that one quiet shard cannot hold the live
 * view back (pinned by core/run/run-lifecycle.test.ts, takeableBelow).
 */
export const MAX_LATENESS_MS = 10_000;

export interface WindowCutoff {
  /** How far each shard still sending has flushed (its watermark, a window number). */
  readonly watermarks: readonly number[];
  readonly t0Ms: number;
  readonly nowMs: number;
  /** Every shard has sent its final flush: nothing more can come for any window. */
  readonly everyoneDone: boolean;
}

/**
 * The cut-off of the coordinator and of each aggregator: windows below the returned number
 * may be taken now. It decides what may be shown (the coordinator) or passed up (an
 * aggregator), not when D1 is written: that is d1WriteDue's call, every few ticks
 * (coordinator/run/window-writes.ts). Nothing more can arrive for a window every running
 * shard has flushed past; a shard that has gone quiet holds a window back at most
 * MAX_LATENESS_MS (what it sends later is taken as a late portion of the same window). The
 * shard's own rule is its close lag (workers/shard/shard-windows.ts). Pinned by
 * core/run/run-lifecycle.test.ts; the coordinator's use by coordinator/run/window-writes.test.ts.
 */
export function takeableBelow({ watermarks, t0Ms, nowMs, everyoneDone }: WindowCutoff): number {
  if (everyoneDone) return Number.MAX_SAFE_INTEGER;
  const watermark = Math.min(...watermarks, Number.MAX_SAFE_INTEGER);
  const lateLimit = Math.floor((nowMs - t0Ms - MAX_LATENESS_MS) / WINDOW_MS);
  return Math.max(watermark, lateLimit);
}

/**
 * Windows reach the dashboards the tick they close, D1 every few ticks: a D1 write costs
 * its call more than its rows (locally ~2.5 ms a tick of the one thread every shard sends
 * from, where a response arriving meanwhile waits). They are written at the first tick at
 * least this long after the oldest of them was taken, so D1 trails the live view by four
 * or five ticks during a run; all of them once every shard is done.
 */
export const D1_WRITE_AFTER_MS = 4_000;

/**
 * Or sooner, once this many cells (a window's region × step) wait: a write stays within
 * what a tick of a run of many regions and steps wrote before, ~160 statements of D1's
 * 1,000 per invocation (a cell is a windows row and up to six histogram rows).
 */
export const D1_WRITE_MAX_CELLS = 200;

export interface WaitingWrites {
  /** When the oldest waiting window was taken; null: none waits. */
  readonly oldestTakenMs: number | null;
  /** Cells waiting. */
  readonly cells: number;
  readonly nowMs: number;
  /** Every shard has sent its final flush. */
  readonly everyoneDone: boolean;
}

/** Whether the waiting windows are written now. */
export function d1WriteDue({ oldestTakenMs, cells, nowMs, everyoneDone }: WaitingWrites): boolean {
  if (oldestTakenMs === null) return false;
  return everyoneDone || cells >= D1_WRITE_MAX_CELLS || nowMs - oldestTakenMs >= D1_WRITE_AFTER_MS;
}
