/**
 * What an executor drives: the engine's pacing, window closing, timeouts and iterations,
 * without its HTTP side (executors never touch a request: the engine's send() measures it
 * into a trail, core/metrics/request-trail.ts records it). ShardEngine builds one host per engine.
 */
import type { ShardAssignment } from "../../../core/run/protocol.ts";
import type { IterationInfo } from "../../../scenarios/flow.ts";
import type { EngineClock, SliceEnd } from "../engine-types.ts";

export interface ExecutorHost {
  readonly a: ShardAssignment;
  readonly clock: EngineClock;
  /** stop() was called: send nothing more. */
  isStopped(): boolean;
  /** Requests sent by this invocation so far (the closed model's budget counts them). */
  requestsSent(): number;
  peakInFlight(): number;
  /** Hands out every window that may close at `nowMs`. */
  closeDue(nowMs: number): void;
  /** How long until the next window may close. */
  untilNextClose(nowMs: number): number;
  /** The earliest request timeout pending (epoch ms; Infinity when none). */
  nextTimeoutMs(): number;
  sweepTimeouts(nowMs: number): void;
  /** Sleeps, woken early by stop() or wake(); never wakes before the next millisecond. */
  sleep(ms: number): Promise<void>;
  /**
   * The executor's schedule is over and it sleeps no more (its wakes looked at the event loop,
   * core/metrics/loop-delay.ts): what is still in flight is watched without them.
   */
  sleepsEnded(): void;
  wake(): void;
  /** Cuts every think time in progress short (the run's end or deadline). */
  wakeSleepers(): void;
  /** Open model: starts own iteration `k` now, or counts it dropped at the in-flight cap. */
  launch(k: number, nowMs: number): void;
  /** Open model: counts `count` own iterations dropped at `nowMs`, never started (the deadline passed). */
  dropUnstarted(count: number, nowMs: number): void;
  /** Records the next own iteration to consider (checkpointed with each window). */
  setCursor(k: number): void;
  /** Closed model: runs one iteration (no intended time) until it ends or its hard stop. */
  startIteration(it: IterationInfo, hardStopMs: number): Promise<void>;
  /** Waits for every in-flight request, enforcing timeouts meanwhile. */
  drain(): Promise<void>;
  /** Hands out every open window, the current one included. */
  closeAll(): void;
}

/**
 * What every executor does first on waking: hand out the windows that may close, then say
 * whether the slice must end now ("stopped" by stop(), or past the shard's "deadline").
 */
export function tickEnd(host: ExecutorHost, nowMs: number): Extract<SliceEnd, "stopped" | "deadline"> | null {
  host.closeDue(nowMs);
  if (host.isStopped()) return "stopped";
  if (nowMs >= host.a.deadlineMs) return "deadline";
  return null;
}
