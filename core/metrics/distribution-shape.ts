/**
 * Two shapes of a latency distribution a reader must be warned about before trusting a
 * percentile:
 *
 * - **Clock-quantised**: the latencies sit on only a few clock steps (workerd times in
 *   whole milliseconds), so percentiles jump from step to step and a p95 of 13.02 ms means
 *   "13 ms". Flagged when the middle 98% of requests (p1…p99) span at most
 *   QUANTISED_MAX_STEPS steps of the detected clock.
 * - **Bimodal**: two separate groups of latencies (a cache hit and a miss, two backends,
 *   a retry), where a mean or a single percentile describes neither. Flagged when the
 *   log-spaced distribution has two peaks, each holding at least 5% of the requests, with a
 *   valley between them below half the smaller peak. Bins narrower than a clock step can
 *   hold no value and are skipped, so quantisation alone never looks bimodal.
 *
 * Pure: histogram buckets ([µs, count], as stored) and the clock's step in, flags out.
 */

/** A distribution whose p1…p99 lie on this many clock steps or fewer is quantised. */
export const QUANTISED_MAX_STEPS = 10;
const BINS_PER_OCTAVE = 4;
const MIN_PEAK_SHARE = 0.05;
const MAX_VALLEY_TO_PEAK = 0.5;

export interface DistributionShape {
  readonly quantised: { readonly steps: number; readonly stepMs: number } | null;
  readonly bimodal: { readonly lowPeakMs: number; readonly highPeakMs: number; readonly valleyMs: number } | null;
  /** One sentence per flag, for reports. */
  readonly notes: readonly string[];
}

export function distributionShape(buckets: ReadonlyArray<readonly [number, number]>, stepMs: number | null): DistributionShape {
  const total = buckets.reduce((a, [, n]) => a + n, 0);
  if (total === 0) return { quantised: null, bimodal: null, notes: [] };
  const sorted = [...buckets].sort(([a], [b]) => a - b);
  const quantile = (q: number) => {
    let seen = 0;
    for (const [us, n] of sorted) if ((seen += n) >= q * total) return us / 1000;
    return sorted[sorted.length - 1]![0] / 1000;
  };
  const [p1, p99] = [quantile(0.01), quantile(0.99)];
  const steps = stepMs && stepMs > 0 ? Math.round((p99 - p1) / stepMs) + 1 : Infinity;
  const quantised = steps <= QUANTISED_MAX_STEPS ? { steps, stepMs: stepMs! } : null;
  const bimodal = twoPeaks(sorted, total, stepMs ?? 0);
  const notes: string[] = [];
  if (quantised) {
    notes.push(
      `clock-quantised: 98% of the latencies (p1 ${round(p1)} ms to p99 ${round(p99)} ms) lie on ${steps} steps of the ${stepMs} ms clock, so percentiles move in whole steps and differences under ${stepMs} ms are not measured`,
    );
  }
  if (bimodal) {
    notes.push(
      `bimodal: two groups of latencies, around ${round(bimodal.lowPeakMs)} ms and ${round(bimodal.highPeakMs)} ms, with few near ${round(bimodal.valleyMs)} ms between them; a mean or one percentile describes neither — look at the steps, regions or statuses that split them`,
    );
  }
  return { quantised, bimodal, notes };
}

/** The two tallest separated peaks of the log-binned counts, when the valley between them is deep enough. */
function twoPeaks(sorted: ReadonlyArray<readonly [number, number]>, total: number, stepMs: number): DistributionShape["bimodal"] {
  const counts = new Map<number, number>();
  for (const [us, n] of sorted) {
    const k = Math.floor(Math.log2(Math.max(1, us) / 1000) * BINS_PER_OCTAVE);
    counts.set(k, (counts.get(k) ?? 0) + n);
  }
  const first = Math.min(...counts.keys());
  const last = Math.max(...counts.keys());
  const bins: Array<{ k: number; n: number }> = [];
  for (let k = first; k <= last; k++) {
    const width = 2 ** ((k + 1) / BINS_PER_OCTAVE) - 2 ** (k / BINS_PER_OCTAVE);
    // A bin narrower than a clock step may hold no value at all: no evidence either way.
    if (!counts.has(k) && width < stepMs) continue;
    bins.push({ k, n: counts.get(k) ?? 0 });
  }
  const peaks = bins
    .map((b, i) => ({ ...b, i }))
    .filter((b, i) => b.n >= MIN_PEAK_SHARE * total && (i === 0 || bins[i - 1]!.n <= b.n) && (i === bins.length - 1 || bins[i + 1]!.n < b.n));
  let best: DistributionShape["bimodal"] = null;
  let deepest = Infinity;
  for (let a = 0; a < peaks.length; a++) {
    for (let b = a + 1; b < peaks.length; b++) {
      const [lo, hi] = [peaks[a]!, peaks[b]!];
      const between = bins.slice(lo.i + 1, hi.i);
      if (between.length === 0) continue;
      const valley = between.reduce((m, x) => (x.n < m.n ? x : m));
      const ratio = valley.n / Math.min(lo.n, hi.n);
      if (ratio <= MAX_VALLEY_TO_PEAK && ratio < deepest) {
        deepest = ratio;
        best = { lowPeakMs: binMidMs(lo.k), highPeakMs: binMidMs(hi.k), valleyMs: binMidMs(valley.k) };
      }
    }
  }
  return best;
}

const binMidMs = (k: number) => 2 ** ((k + 0.5) / BINS_PER_OCTAVE);
const round = (ms: number) => (ms >= 10 ? Math.round(ms * 10) / 10 : Math.round(ms * 100) / 100);
