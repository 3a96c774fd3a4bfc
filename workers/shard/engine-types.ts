/**
 * The engine's types that its executors and helpers share (kept apart so that they import
 * no engine, and the engine imports them: no cycle).
 */

export interface EngineClock {
  /** Epoch milliseconds. */
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** The platform's clock, which the objects hand their engines and flushers (tests hand in their own). */
export const systemClock: EngineClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
};

export type SliceEnd = "finished" | "deadline" | "stopped" | "handoff";

/** How far an iteration-count executor got (see ShardEngine.iterationProgress). */
export interface IterationProgress {
  readonly sharedLeft?: number;
  readonly perVu?: ReadonlyArray<readonly [vu: number, started: number]>;
}

export interface SliceResult {
  readonly end: SliceEnd;
  readonly cursor: number;
  /** Iterations started (open model) or requests sent (closed model) in this slice. */
  readonly sent: number;
  readonly peakInFlight: number;
}
