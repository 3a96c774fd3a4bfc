/**
 * How finely a run's clock could tell times apart, detected from the readings themselves.
 *
 * workerd's `Date.now()` moves in whole milliseconds and only at I/O, so a latency of
 * 13.024 ms (a histogram bucket's midpoint) was really "13 ms, give or take a step"; k6's
 * Go clock reads microseconds. The histogram's 0.39% bound is not the error of such a
 * figure: the clock's step is. So each shard watches the clock readings it times requests
 * with and keeps the largest decimal grid (1 µs, 10 µs, … 1 s) that every reading falls
 * on: integer-millisecond readings give 1 ms, microsecond readings 1 µs. A grid is only
 * ever refined by more readings (a reading off the grid proves a finer clock), so shards,
 * invocations and windows combine by taking the finest.
 *
 * Figures are then printed with no more digits than that step gives, and comparisons
 * (core/results/compare.ts, core/results/crosscheck.ts) do not call a difference smaller than a clock step
 * real.
 */

const START_GRID_US = 1_000_000;

/** Tracks the grid of clock readings (epoch or monotonic milliseconds, possibly fractional). */
export class ClockGrid {
  #gridUs = START_GRID_US;
  #readings = 0;

  observe(ms: number): void {
    this.#readings++;
    const us = Math.round(ms * 1000);
    while (this.#gridUs > 1 && us % this.#gridUs !== 0) this.#gridUs /= 10;
  }

  /** The detected resolution in µs, or null before any reading. */
  get resolutionUs(): number | null {
    return this.#readings === 0 ? null : this.#gridUs;
  }
}

/** The finer of two detected resolutions (null: nothing detected). */
export function finerResolution(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a == null) return b ?? null;
  if (b == null) return a;
  return Math.min(a, b);
}

/** Decimals a millisecond figure can honestly carry at this resolution: 1 ms → 0, 0.1 ms → 1, finer → 2. */
export function msDecimals(resolutionMs: number | null | undefined): number {
  if (resolutionMs == null || resolutionMs <= 0) return 2;
  return Math.max(0, Math.min(2, Math.ceil(-Math.log10(resolutionMs) - 1e-9)));
}

/** `ms` to the decimals the resolution allows (msDecimals): 33.92 at a 1 ms clock is 34. */
export function roundToResolution(ms: number, resolutionMs: number | null | undefined): number {
  const factor = 10 ** msDecimals(resolutionMs);
  return Math.round(ms * factor) / factor;
}

/** k6's resolution: Go's monotonic clock, reported by k6 in fractional milliseconds (µs and finer). */
export const K6_RESOLUTION_MS = 0.001;

/**
 * A duration in k6's style ("13.62ms", "852µs", "1.20s"), with no more digits than the
 * clock that measured it had (`resolutionMs`, below): at workerd's 1 ms
 * a p95 of 13.024 ms prints as "13ms".
 */
export function formatMs(ms: number, resolutionMs?: number | null): string {
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)}s`;
  const decimals = ms >= 100 ? 0 : ms >= 10 ? 1 : 2;
  if (resolutionMs != null && resolutionMs >= 0.01) return `${ms.toFixed(Math.min(decimals, msDecimals(resolutionMs)))}ms`;
  if (ms >= 1) return `${ms.toFixed(decimals)}ms`;
  return `${(ms * 1000).toFixed(0)}µs`;
}
