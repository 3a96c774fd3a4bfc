/**
 * A shard sends from alarms, and an alarm handler may run at most 15 minutes of wall time
 * (PLATFORM_LIMITS.alarmWallTimeMs). A shard hands over to a fresh invocation once it has
 * started its iteration budget, so a budget set by subrequests alone (~9,500) outlives the
 * alarm at fewer than ~10.6 iterations a second per shard — a long, slow soak. The plan
 * also caps the budget by time: the fewest iterations a shard is due in any stretch of
 * INVOCATION_WALL_TIME_MS of its schedule, so an invocation hands over within that
 * stretch wherever it starts. Pure: tested in wall-time.test.ts.
 */
import { ArrivalSchedule, type RateStage } from "../schedule/arrival-schedule.ts";
import { PLATFORM_LIMITS } from "./platform-limits.ts";

/**
 * The longest a shard invocation is planned to send: the alarm's limit less three minutes
 * for its last requests (a timeout), its flushes and the handover.
 */
export const INVOCATION_WALL_TIME_MS = PLATFORM_LIMITS.alarmWallTimeMs - 3 * 60_000;

/** Steps the windows are tried at: a second, as arrival schedules change no faster. */
const STEP_MS = 1_000;

/**
 * The most iterations one shard may be given per invocation so that it hands over within
 * INVOCATION_WALL_TIME_MS: the fewest arrivals of `schedule` in any window of that length
 * inside it, this shard's share of them (`shards` equal shares), less one
 * for the rounding of the shares. Infinity when the schedule is shorter than a window: no
 * invocation can outlive it.
 *
 * @example iterationsWithinWallTime(new ArrivalSchedule([{ durationMs: 7_200_000, fromPerS: 5, toPerS: 5 }]), 1) // 3,599
 */
export function iterationsWithinWallTime(schedule: ArrivalSchedule, shards: number): number {
  const windowMs = INVOCATION_WALL_TIME_MS;
  const { durationMs } = schedule;
  if (durationMs <= windowMs) return Infinity;
  let fewest = Infinity;
  for (let t = 0; t + windowMs <= durationMs; t += STEP_MS) fewest = Math.min(fewest, schedule.arrivalsBy(t + windowMs) - schedule.arrivalsBy(t));
  return Math.max(1, Math.floor(fewest / shards) - 1);
}

/** The same for a closed-model run, from its estimated requests a second per shard (its budget counts requests). */
export function requestsWithinWallTime(estimatedRequestsPerSPerShard: number, durationMs: number): number {
  if (durationMs <= INVOCATION_WALL_TIME_MS) return Infinity;
  return Math.max(1, Math.floor((estimatedRequestsPerSPerShard * INVOCATION_WALL_TIME_MS) / 1000) - 1);
}

/** The same for a closed-model run: its budget of requests at its estimated requests a second per shard, at most the run. */
export function longestClosedInvocationMs(budgetRequests: number, requestsPerSPerShard: number, durationMs: number): number {
  return requestsPerSPerShard > 0 ? Math.min(durationMs, (budgetRequests / requestsPerSPerShard) * 1000) : durationMs;
}

/** What the cap needs of a run: its schedule, its shards, and for a closed model its estimated requests a second (null: open model). */
export interface WallTimeRun {
  readonly spec: { readonly stages: readonly RateStage[]; readonly durationMs: number };
  readonly shards: number;
  readonly requestsPerS: number | null;
}

/**
 * A shard invocation's `budget` (iterations, or a closed model's requests), capped so
 * that it hands over within INVOCATION_WALL_TIME_MS; says so in `notes` when the cap binds.
 */
export function withinWallTime(budget: number, run: WallTimeRun, notes: string[]): number {
  const { spec, shards, requestsPerS } = run;
  const closed = requestsPerS !== null;
  const cap = closed ? requestsWithinWallTime(requestsPerS / shards, spec.durationMs) : iterationsWithinWallTime(new ArrivalSchedule(spec.stages), shards);
  if (cap >= budget) return budget;
  notes.push(
    `a shard hands over every ${cap} ${closed ? "requests" : "iterations"} (within ${INVOCATION_WALL_TIME_MS / 60_000} minutes at this rate${closed ? ", estimated" : ""}), before its ${budget}-subrequest budget: an alarm may run ${PLATFORM_LIMITS.alarmWallTimeMs / 60_000} minutes`,
  );
  return cap;
}

/**
 * The longest one shard invocation is planned to send, in ms: from any second of `schedule`,
 * how long a shard (one of `shards` equal shares) takes to be due `budget` iterations, or
 * until the schedule ends. What `edgeload plan` holds against an alarm's wall time.
 */
export function longestInvocationMs(schedule: ArrivalSchedule, shards: number, budget: number): number {
  const { durationMs } = schedule;
  const needed = budget * shards;
  // Starts a second apart, or 2,000 over a long soak: the plan is made in a request.
  const every = Math.max(STEP_MS, Math.ceil(durationMs / 2_000 / STEP_MS) * STEP_MS);
  let longest = 0;
  for (let t = 0; t < durationMs; t += every) {
    const from = schedule.arrivalsBy(t);
    if (schedule.arrivalsBy(durationMs) - from < needed) {
      longest = Math.max(longest, durationMs - t);
      continue;
    }
    // The first moment its budget has fallen due: arrivals only grow, so a binary search.
    let low = t;
    let high = durationMs;
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      if (schedule.arrivalsBy(mid) - from >= needed) high = mid;
      else low = mid;
    }
    longest = Math.max(longest, high - t);
  }
  return longest;
}
