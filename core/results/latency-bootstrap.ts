/**
 * The latency half of run comparison (compare.ts): a percentile bootstrap over two runs'
 * histograms. A resample draws a run's request count again over its buckets —
 * multinomially, as one binomial per bucket — and reads p50, p95, p99 and the mean off the
 * resampled counts with the rule of Histogram.quantile. Its cost is one draw per non-empty
 * bucket, whatever the number of requests; no sample is ever expanded.
 */
import type { Histogram } from "../metrics/histogram.ts";
import { binomial, type Random } from "./comparison-statistics.ts";

/** The quantiles compared, in the order of compare.ts's LATENCY_METRICS (the mean comes last). */
export const QUANTILES = [0.5, 0.95, 0.99] as const;

/** A histogram ready for resampling: its buckets' values (µs) and counts. */
class Resampler {
  readonly #values: Float64Array;
  readonly #counts: Float64Array;
  readonly #n: number;
  readonly #ranks: readonly number[];
  /** Exact mean − mean of the bucket values: keeps the resampled means centred on the exact one. */
  readonly #meanShift: number;

  constructor(h: Histogram) {
    const buckets = h.buckets();
    // Histogram.quantile reports a bucket's midpoint clamped to the exact min and max.
    this.#values = Float64Array.from(buckets, ([v]) => Math.min(h.max, Math.max(h.min, v)));
    this.#counts = Float64Array.from(buckets, ([, c]) => c);
    this.#n = h.count;
    this.#ranks = QUANTILES.map((q) => q * h.count);
    let sum = 0;
    for (let i = 0; i < this.#values.length; i++) sum += this.#values[i]! * this.#counts[i]!;
    this.#meanShift = h.mean - sum / h.count;
  }

  /** Draws one resample and writes its p50, p95, p99 and mean (µs) into `out`. */
  draw(rng: Random, out: Float64Array): void {
    const values = this.#values;
    const counts = this.#counts;
    const last = values.length - 1;
    // Multinomial as successive binomials: bucket i gets Bin(requests left, its share of the counts left).
    let left = this.#n;
    let mass = this.#n;
    let cumulative = 0;
    let sum = 0;
    let q = 0;
    for (let i = 0; i <= last && left > 0; i++) {
      const c = counts[i]!;
      const x = i === last ? left : binomial(left, c / mass, rng);
      mass -= c;
      left -= x;
      cumulative += x;
      sum += x * values[i]!;
      while (q < QUANTILES.length && cumulative >= this.#ranks[q]!) out[q++] = values[i]!;
    }
    out[QUANTILES.length] = sum / this.#n + this.#meanShift;
  }
}

/** Bootstrap distributions of candidate − baseline for p50, p95, p99 and mean (µs), in that order. */
export function bootstrapDeltas(a: Histogram, b: Histogram, resamples: number, rng: Random): Float64Array[] {
  const ra = new Resampler(a);
  const rb = new Resampler(b);
  const stats = QUANTILES.length + 1;
  const deltas = Array.from({ length: stats }, () => new Float64Array(resamples));
  const outA = new Float64Array(stats);
  const outB = new Float64Array(stats);
  for (let r = 0; r < resamples; r++) {
    ra.draw(rng, outA);
    rb.draw(rng, outB);
    for (let k = 0; k < stats; k++) deltas[k]![r] = outB[k]! - outA[k]!;
  }
  return deltas;
}

/** The central `confidence` interval of a bootstrap distribution (sorted in place). */
export function percentileInterval(samples: Float64Array, confidence: number): [number, number] {
  samples.sort();
  const tail = (1 - confidence) / 2;
  const n = samples.length;
  return [samples[Math.min(n - 1, Math.floor(tail * n))]!, samples[Math.max(0, Math.ceil((1 - tail) * n) - 1)]!];
}
