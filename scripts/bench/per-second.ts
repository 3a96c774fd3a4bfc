/**
 * Per-second p95s and their spread over a run's steady seconds, for the generator bench:
 * a whole-run p95 can hide a tail that is there every second (bookkeeping on the request
 * path) or one only at the start (a cold run). Second 0 is shown apart; the last second is
 * left out of the steady ones, since it may be partial.
 */
import { signedMs } from "../../core/results/crosscheck-attribution.ts";

/** The p95 of each second's samples (nearest rank), indexed by second; NaN for a second without samples. */
export function p95PerSecond(samples: Iterable<{ readonly second: number; readonly ms: number }>): number[] {
  const bySecond: number[][] = [];
  for (const { second, ms } of samples) (bySecond[second] ??= []).push(ms);
  return Array.from(bySecond, (values) => {
    if (!values?.length) return NaN;
    values.sort((a, b) => a - b);
    return values[Math.min(values.length - 1, Math.ceil(0.95 * values.length) - 1)]!;
  });
}

export interface SecondsSpread {
  /** Second 0's p95: the start of the run. */
  readonly first: number;
  /** Over the steady seconds (1 to the next-to-last): the smallest, median and largest p95. */
  readonly min: number;
  readonly median: number;
  readonly max: number;
  readonly steadySeconds: number;
}

/** The spread of per-second p95s; null when the run has fewer than three seconds. */
export function steadySpread(p95BySecond: readonly number[]): SecondsSpread | null {
  const steady = steadySeconds(p95BySecond)
    .map((s) => s.p95Ms)
    .sort((a, b) => a - b);
  if (steady.length === 0) return null;
  return {
    first: p95BySecond[0] ?? NaN,
    min: steady[0]!,
    median: steady[Math.floor((steady.length - 1) / 2)]!,
    max: steady[steady.length - 1]!,
    steadySeconds: steady.length,
  };
}

/** "first; min / median / max" in ms, as the tables print it. */
export function formatSpread(spread: SecondsSpread | null | undefined): string {
  if (!spread) return "-";
  const f = (n: number) => (Number.isNaN(n) ? "-" : n.toFixed(1));
  return `${f(spread.first)}; ${f(spread.min)} / ${f(spread.median)} / ${f(spread.max)}`;
}

/** The tail bar of the generator bench: edgeload against workerd's own paced loop in an object, in the same run. */
export const FLOOR_BAR = { secondP95OverMs: 1, p99OverMs: 2 } as const;

/** What a client's run gives the bar: its per-second p95s and whole-run p99. */
export interface TailReading {
  readonly p95BySecond?: readonly number[];
  readonly p99Ms: number;
  /** edgeload only: the most its event loop held a response, per second (client_delay's max). */
  readonly clientDelayMaxBySecond?: readonly number[];
}

export interface FloorBarCheck {
  readonly met: boolean;
  /** The slowest steady second's p95 over the floor's slowest steady second, in ms. */
  readonly secondOverMs: number;
  readonly p99OverMs: number;
  /** Which steady second was slowest, its p95, and the client delay measured in it (null where not measured). */
  readonly slowest: { readonly second: number; readonly p95Ms: number; readonly clientDelayMaxMs: number | null };
  readonly floorSlowestP95Ms: number;
}

/**
 * Checks a run against the floor: every steady second's p95 within FLOOR_BAR.secondP95OverMs
 * of the floor's slowest steady second, and the whole run's p99 within FLOOR_BAR.p99OverMs
 * of the floor's. Null when either side has no steady seconds. The slowest second's client
 * delay says whether the generator's own event loop was held then (a stall) or not.
 */
export function checkAgainstFloor(run: TailReading, floor: TailReading): FloorBarCheck | null {
  const slowest = slowestSteadySecond(run.p95BySecond ?? []);
  const floorSlowest = slowestSteadySecond(floor.p95BySecond ?? []);
  if (!slowest || !floorSlowest) return null;
  const secondOverMs = slowest.p95Ms - floorSlowest.p95Ms;
  const p99OverMs = run.p99Ms - floor.p99Ms;
  // Histogram bucket bounds (25.02 against a timer's 23) are not a miss by themselves.
  const within = (over: number, bar: number) => Math.round(over * 10) / 10 <= bar;
  return {
    met: within(secondOverMs, FLOOR_BAR.secondP95OverMs) && within(p99OverMs, FLOOR_BAR.p99OverMs),
    secondOverMs,
    p99OverMs,
    slowest: { ...slowest, clientDelayMaxMs: clientDelayAt(run, slowest.second) },
    floorSlowestP95Ms: floorSlowest.p95Ms,
  };
}

/** "met" or "missed", with the margins and the slowest second's client delay. */
export function formatFloorBar(check: FloorBarCheck | null): string {
  if (!check) return "-";
  const delay = check.slowest.clientDelayMaxMs === null ? "" : `, client delay ≤ ${check.slowest.clientDelayMaxMs.toFixed(0)} ms in it`;
  return `${check.met ? "met" : "missed"}: slowest second ${signedMs(check.secondOverMs)} (s${check.slowest.second}${delay}), p99 ${signedMs(check.p99OverMs)}`;
}

/** The steady seconds (1 to the next-to-last) that have samples, with their p95s. */
function steadySeconds(p95BySecond: readonly number[]): Array<{ second: number; p95Ms: number }> {
  return p95BySecond.flatMap((p95Ms, second) => (second > 0 && second < p95BySecond.length - 1 && !Number.isNaN(p95Ms) ? [{ second, p95Ms }] : []));
}

function slowestSteadySecond(p95BySecond: readonly number[]): { second: number; p95Ms: number } | null {
  return steadySeconds(p95BySecond).reduce<{ second: number; p95Ms: number } | null>((slowest, s) => (!slowest || s.p95Ms > slowest.p95Ms ? s : slowest), null);
}

function clientDelayAt(run: TailReading, second: number): number | null {
  const ms = run.clientDelayMaxBySecond?.[second];
  return ms === undefined || Number.isNaN(ms) ? null : ms;
}
