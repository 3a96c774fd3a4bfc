/**
 * The times a chaos run (./schedule.ts) is held to, computed from the constants the
 * product's own code uses (imported, never copied), so that the `deadline` and `ends`
 * invariants (./invariants.ts) move with them: when the run must be final whatever its
 * faults, when a run whose setup was killed ends, and how a run with D1 away for minutes
 * must end — finished once D1 is back, or given up after the coordinator's failed ticks.
 * Pure.
 */
import { TICK_MS } from "../../../coordinator/merge/ticks.ts";
import { SHARD_FLUSH_GRACE_MS, setupDeadlineMs } from "../../../coordinator/run/run-record.ts";
import { tickFailureBudget, tickRetryDelayMs } from "../../../coordinator/run/tick-retry.ts";
import { D1_WRITE_AFTER_MS } from "../../../core/run/run-lifecycle.ts";
import { afterEndMs } from "../../../core/schedule/graceful-stop.ts";
import type { RunSpec } from "../../../core/spec/run-spec.ts";
import { CHAOS_RUN, type ChaosFault, type ChaosSchedule, faultsOverAtMs } from "./schedule.ts";

/** Failed coordinator ticks in a row before a chaos run is given up (its deployment's RESULT_WRITE_RETRIES). */
export const TICK_FAILURE_BUDGET = tickFailureBudget({ RESULT_WRITE_RETRIES: String(CHAOS_RUN.resultWriteRetries) });

/**
 * From a coordinator's first failed tick to the one that gives the run up: the waits between
 * the budget's tries (tick-failure.ts tickRetryDelayMs), 91 s at 8. The last try is made
 * then: a D1 back by that moment lets the run finish.
 */
export const GIVE_UP_AFTER_MS = Array.from({ length: TICK_FAILURE_BUDGET - 1 }, (_, i) => tickRetryDelayMs(i + 1)).reduce((a, b) => a + b, 0);

/** The longest wait between two tries: a run finishes at most this long after D1 is back. */
export const LONGEST_RETRY_WAIT_MS = tickRetryDelayMs(TICK_FAILURE_BUDGET);

/**
 * By when a run must have its final status, whatever its faults: its schedule, the time its
 * shards may still be at work after it (afterEndMs), the time they keep retrying their last
 * flushes (SHARD_FLUSH_GRACE_MS; longer than the coordinator's own waits for them, its
 * finish and abort graces), and the coordinator's give-up time when its ticks fail. A run
 * whose setup was killed is ended by its setup deadline, well before.
 */
export function runDeadlineMs(t0Ms: number): number {
  const times = { durationMs: CHAOS_RUN.durationMs, timeoutMs: CHAOS_RUN.timeoutMs, gracefulStopMs: CHAOS_RUN.timeoutMs };
  return t0Ms + CHAOS_RUN.durationMs + afterEndMs(times) + SHARD_FLUSH_GRACE_MS + GIVE_UP_AFTER_MS;
}

/** When the alarm of a run created at `createdMs` ends it if its setup never ended (run-record.ts): one setup step. */
export function chaosSetupDeadlineMs(createdMs: number): number {
  const spec = { setup: [{ path: `/delay?ms=${CHAOS_RUN.setupDelayMs}` }], timeoutMs: CHAOS_RUN.timeoutMs } as unknown as RunSpec;
  return setupDeadlineMs({ createdMs, spec });
}

/**
 * When the run's last reason to go on is over (epoch ms): its schedule, its last fault, and
 * — its setup killed — its setup deadline. `ends` measures from here.
 */
export function scheduleOverAtMs(schedule: ChaosSchedule, t0Ms: number, createdMs: number): number {
  const over = t0Ms + Math.max(CHAOS_RUN.durationMs, faultsOverAtMs(schedule));
  return schedule.faults.some((f) => f.kind === "setup-killed") ? Math.max(over, chaosSetupDeadlineMs(createdMs)) : over;
}

/** How a run with D1 away for long must end: `finished` once D1 is back, `given-up` (status error), or `either`. */
export type D1Outcome = "finished" | "given-up" | "either";

/**
 * The end a long D1 outage allows. The coordinator's first failed tick comes when a windows
 * write is due: no sooner than the outage, and at most D1_WRITE_AFTER_MS (and two ticks)
 * after the later of the outage's start and the schedule's end (a coordinator restarted
 * meanwhile starts its wait for a due write again; windows are taken until after the end).
 * The run is given up GIVE_UP_AFTER_MS after that first failure, at its last try, unless D1
 * is back by then; between the two bounds, either, the ticks' own time (a tick a try) as
 * margin.
 */
export function d1OutageOutcome(f: Extract<ChaosFault, { kind: "d1-refusing-long" }>): D1Outcome {
  if (f.untilMs < f.atMs + GIVE_UP_AFTER_MS) return "finished";
  const latestFirstFailure = Math.max(f.atMs, CHAOS_RUN.durationMs) + D1_WRITE_AFTER_MS + 2 * TICK_MS;
  if (f.untilMs > latestFirstFailure + GIVE_UP_AFTER_MS + TICK_FAILURE_BUDGET * TICK_MS) return "given-up";
  return "either";
}
