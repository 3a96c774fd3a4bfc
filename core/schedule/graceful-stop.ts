/**
 * k6's graceful stop, as times. When a scenario's schedule ends, no iteration starts; one
 * in progress may finish within `gracefulStop` (every executor, default 30 s) and is
 * counted; one still running then is interrupted and, as in k6, not counted in
 * `iterations`. A VU that ramping-vus ramps down before the end has `gracefulRampDown`
 * instead, never past the scenario's graceful stop. k6 documents both under "Graceful
 * stop" (using-k6/scenarios/concepts/graceful-stop). Pure: times are offsets in ms from
 * the scenario's start.
 *
 * @example
 * iterationStopMs({ stopsAtMs: 10_000, durationMs: 10_000, gracefulRampDownMs: 0, gracefulStopMs: 3_000 }) // 13_000
 */

/** k6's default gracefulStop. */
export const DEFAULT_GRACEFUL_STOP_MS = 30_000;

export interface GracefulTimes {
  /** The schedule's length. */
  readonly durationMs: number;
  /** The request timeout. */
  readonly timeoutMs: number;
  /** k6's gracefulStop; absent in specs stored before it was read: k6's default. */
  readonly gracefulStopMs?: number;
}

export const gracefulStopOf = (spec: Pick<GracefulTimes, "gracefulStopMs">): number => spec.gracefulStopMs ?? DEFAULT_GRACEFUL_STOP_MS;

/** When iterations still running are interrupted: the schedule's end plus the graceful stop. */
export const interruptAtMs = (spec: Omit<GracefulTimes, "timeoutMs">): number => spec.durationMs + gracefulStopOf(spec);

/**
 * How long after the schedule's end a shard may still be at work: its iterations' graceful
 * stop (a request still in flight then is cut, as k6 cancels it), and never less than the
 * request timeout, the margin a shard's deadline had before graceful stops. The shard's
 * deadline and the coordinator's wait for its last flush follow it.
 */
export const afterEndMs = (spec: GracefulTimes): number => Math.max(spec.timeoutMs, gracefulStopOf(spec));

export interface VuStop {
  /** When the schedule stops the VU (core/schedule/vu-schedule.ts stopsAt): the run's end at the latest. */
  readonly stopsAtMs: number;
  readonly durationMs: number;
  readonly gracefulRampDownMs: number;
  readonly gracefulStopMs: number;
}

/**
 * When an iteration of a closed-model VU is interrupted: a VU ramped down before the end
 * has gracefulRampDown, within the scenario's graceful stop; one still active at the end
 * has the graceful stop.
 */
export function iterationStopMs({ stopsAtMs, durationMs, gracefulRampDownMs, gracefulStopMs }: VuStop): number {
  const interruptAt = durationMs + gracefulStopMs;
  return stopsAtMs >= durationMs ? interruptAt : Math.min(interruptAt, stopsAtMs + gracefulRampDownMs);
}
