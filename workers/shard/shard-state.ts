/**
 * What a LoadShard keeps about itself between invocations (in its storage, under
 * "state"), how each step of its life changes it, and the telemetry it reports from it.
 *
 * Pure: the object reads its state, asks these functions for the next one (with the time
 * passed in) and writes it, so each transition reads in one place and the object stays thin.
 */
import { finerResolution } from "../../core/metrics/clock-resolution.ts";
import type { ShardAssignment, ShardTelemetry, ShardWindow } from "../../core/run/protocol.ts";
import { writesAtPhase } from "../../core/schedule/shard-assignment.ts";
import type { IterationProgress, SliceResult } from "./engine-types.ts";
import type { WarmUp } from "./warm-up.ts";

export type ShardPhase = "scheduled" | "running" | "done";

export interface ShardState {
  readonly phase: ShardPhase;
  /** Next own iteration to consider: the closed windows account for every one below it (cursor-marks.ts). */
  readonly cursor: number;
  /** Ranges of own iterations past the cursor the closed windows account for too (dropped while an earlier one waited). */
  readonly accountedPast?: readonly (readonly [number, number])[];
  /** The last invocation ended on purpose (subrequest budget): resume without skipping. */
  readonly handoff: boolean;
  readonly stopRequested: boolean;
  readonly restarts: number;
  /** When the last unplanned restart resumed (epoch ms): what it skipped fell due before this. */
  readonly lastRestartMs?: number;
  readonly invocations: number;
  readonly subrequests: number;
  readonly peakInFlight: number;
  readonly colo: string;
  /** Every window below this has been handed to the flusher. */
  readonly watermarkS: number;
  /** Times this shard read its seed set from R2 (once per object instance). */
  readonly seedLoads?: number;
  /** What its engines saw of the clock and of the target (see ShardTelemetry). */
  readonly clockResolutionUs?: number | null;
  readonly behindCloudflare?: boolean;
  /** Iteration-count executors: how far they got, for the invocation after a handoff. */
  readonly iterationProgress?: IterationProgress | null;
  /** The warm-up request sent before t0 (warm-up.ts); null when there was none to send, absent before. */
  readonly warmUp?: WarmUp | null;
  /**
   * Closed windows not yet acknowledged by the receiver, by key (window-flusher.ts): kept in
   * the state, so a window and the cursor past it are one row written a second, not three
   * (the window, the state, the window's deletion). An acknowledgement drops them from the
   * state in memory; the next write of the state drops them from storage.
   */
  readonly pending?: Readonly<Record<string, ShardWindow>>;
}

/**
 * What a shard keeps once its run is over for it — its done acknowledged, so its receiver
 * holds everything it measured (docs/architecture.md, "Objects' lifetimes"): the run it
 * belonged to, so that a late start() of that run recreates nothing (start() is idempotent
 * by the stored run), and its state without windows, for inspect(). A few hundred bytes,
 * deleted with the rest when its run's coordinator cleans up (LoadShard.cleanUp).
 */
export interface ShardTombstone {
  readonly runId: string;
  readonly state: Omit<ShardState, "pending" | "accountedPast" | "iterationProgress">;
}

/** The tombstone of a shard of `runId` that ended in `state`. */
export function tombstoneOf(runId: string, state: ShardState): ShardTombstone {
  const { pending: _windows, accountedPast: _past, iterationProgress: _progress, ...kept } = state;
  return { runId, state: kept };
}

/** What inspect() answers, for tests and diagnostics (no secrets, no window contents). */
export type ShardInspection = Omit<ShardState, "pending"> & { readonly pendingWindows: number; readonly alarm: number | null };

/** The state of a shard just given its assignment, waiting for T0. */
export function scheduledState(assignment: ShardAssignment): ShardState {
  return {
    phase: "scheduled",
    cursor: 0,
    handoff: false,
    stopRequested: false,
    restarts: 0,
    invocations: 0,
    subrequests: 0,
    peakInFlight: 0,
    colo: assignment.mode === "local" ? "local" : "unknown",
    watermarkS: 0,
  };
}

/** An invocation finding the shard running without a handoff follows an unplanned restart. */
export function resumesAfterCrash(state: ShardState): boolean {
  return state.phase === "running" && !state.handoff;
}

/** The state as invocation number `invocation` starts at `nowMs` (the cursor stays put). */
export function invocationStarted(state: ShardState, invocation: number, afterCrash: boolean, nowMs: number): ShardState {
  return {
    ...state,
    phase: "running",
    handoff: false,
    invocations: invocation,
    restarts: state.restarts + (afterCrash ? 1 : 0),
    ...(afterCrash ? { lastRestartMs: nowMs } : {}),
  };
}

/** The state after the engine's slice ended: running still after a handoff, done otherwise. */
export function sliceEnded(state: ShardState, result: SliceResult, iterationProgress: IterationProgress | null): ShardState {
  const handoff = result.end === "handoff";
  return {
    ...state,
    phase: handoff ? "running" : "done",
    cursor: result.cursor,
    accountedPast: [],
    handoff,
    subrequests: state.subrequests + result.sent,
    iterationProgress,
    peakInFlight: Math.max(state.peakInFlight, result.peakInFlight),
  };
}

/** What the engine tells of itself when a window closes (see ShardEngine). */
export interface EngineProgress {
  readonly closedThrough: number;
  /** What the closed windows account for (ShardEngine.covered). */
  readonly covered: { readonly cursor: number; readonly past: readonly (readonly [number, number])[] };
  readonly clockResolutionUs: number | null;
  readonly behindCloudflare: boolean;
}

/**
 * The state stored with a closed window: the watermark in the run's numbering (a named
 * scenario's shard counts windows from its own start, `windowOffsetS` later), the cursor
 * a crash resumes from, and what the engine saw.
 */
export function windowClosed(state: ShardState, engine: EngineProgress, windowOffsetS: number): ShardState {
  const covered = engine.covered;
  return {
    ...state,
    watermarkS: engine.closedThrough + windowOffsetS,
    cursor: covered.cursor,
    accountedPast: covered.past,
    clockResolutionUs: finerResolution(state.clockResolutionUs, engine.clockResolutionUs),
    behindCloudflare: state.behindCloudflare || engine.behindCloudflare,
  };
}

/** The state with the windows held since the last write (`held`) in its pending ones: what a write stores. */
export function withHeldWindows(state: ShardState, held: ReadonlyArray<readonly [string, ShardWindow]>): ShardState {
  return held.length ? { ...state, pending: { ...state.pending, ...Object.fromEntries(held) } } : state;
}

/**
 * Whether the window `windowS` just closed, with `heldWindows` held in all (it among them),
 * makes a write of the state due, at `windowsPerWrite` (absent: 1): at the shard's own phase
 * (writesAtPhase), or once it holds that many.
 */
export function writeDue(heldWindows: number, windowsPerWrite: number | undefined, windowS: number, shardIndex: number): boolean {
  const every = windowsPerWrite ?? 1;
  return heldWindows >= every || writesAtPhase(windowS, shardIndex, every);
}

/**
 * What a shard stores as window `windowS` closes: its state (with the held windows) when a
 * write is due (writeDue), and its flow's state (a refresh family's rotated tokens, a
 * script's iteration count) after EVERY window whatever the write schedule. A tree run
 * writes its windows every fourth second; a flow state four windows old would, after a
 * restart, replay refresh tokens the provider has already rotated, and the provider revokes
 * the family: failures that look like the provider's, made by edgeload.
 */
export function windowWrites(
  heldWindows: number,
  windowsPerWrite: number | undefined,
  windowS: number,
  shardIndex: number,
  hasFlowState: boolean,
): { readonly state: boolean; readonly flowState: boolean } {
  return { state: writeDue(heldWindows, windowsPerWrite, windowS, shardIndex), flowState: hasFlowState };
}

/** The telemetry a flush carries: where the shard runs and how its invocations went. */
export function shardTelemetry(a: ShardAssignment, s: ShardState): ShardTelemetry {
  return {
    region: a.shard.region,
    colo: s.colo,
    invocations: s.invocations,
    restarts: s.restarts,
    subrequests: s.subrequests,
    peakInFlight: s.peakInFlight,
    clockResolutionUs: s.clockResolutionUs ?? null,
    behindCloudflare: s.behindCloudflare ?? false,
  };
}
