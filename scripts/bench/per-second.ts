/**
 * Per-second p95s and their spread over a run's steady seconds, for the generator bench:
 * a whole-run p95 can hide a tail that is there every second (bookkeeping on the request
 * path) or one only at the start (a cold run). Second 0 is shown apart; the last second is
 * left out of the steady ones, since it may be partial.
 */

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
  const steady = p95BySecond
    .slice(1, -1)
    .filter((p) => !Number.isNaN(p))
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
