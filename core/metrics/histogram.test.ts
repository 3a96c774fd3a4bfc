import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BUCKET_COUNT, bucketIndex, bucketLowerBound, bucketMidpoint, Histogram, MAX_VALUE, RELATIVE_ERROR } from "./histogram.ts";

/** Nearest-rank percentile of the exact samples, the rule Histogram.quantile follows. */
function exactQuantile(sorted: number[], q: number): number {
  if (q <= 0) return sorted[0]!;
  if (q >= 1) return sorted[sorted.length - 1]!;
  return sorted[Math.max(0, Math.ceil(q * sorted.length - 1e-9) - 1)]!;
}

function histogramOf(samples: readonly number[]): Histogram {
  const h = new Histogram();
  for (const v of samples) h.record(v);
  return h;
}

const values = fc.array(fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 5_000_000 }), fc.integer({ min: 0, max: MAX_VALUE })), {
  minLength: 1,
  maxLength: 400,
});

describe("bucket layout", () => {
  it.each([
    // [value, expected index, why]
    [0, 0, "zero has its own bucket"],
    [255, 255, "the linear range ends at 255"],
    [256, 256, "first bucket of the first logarithmic octave"],
    [257, 256, "256 and 257 share a bucket of width 2"],
    [511, 383, "last bucket of octave [256, 512)"],
    [512, 384, "next octave starts a new run of 128 buckets"],
  ])("bucketIndex(%i) = %i (%s)", (value, index) => {
    expect(bucketIndex(value)).toBe(index);
  });

  it("covers every value up to MAX_VALUE with contiguous buckets", () => {
    expect(bucketIndex(MAX_VALUE)).toBe(BUCKET_COUNT - 1);
    for (let i = 1; i < BUCKET_COUNT; i++) expect(bucketLowerBound(i)).toBeGreaterThan(bucketLowerBound(i - 1));
  });

  it("puts every value in the bucket whose bounds contain it, midpoint within the error bound", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_VALUE }), (v) => {
        const i = bucketIndex(v);
        expect(bucketLowerBound(i)).toBeLessThanOrEqual(v);
        if (i + 1 < BUCKET_COUNT) expect(bucketLowerBound(i + 1)).toBeGreaterThan(v);
        expect(Math.abs(bucketMidpoint(i) - v)).toBeLessThanOrEqual(v * RELATIVE_ERROR + 1e-9);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("Histogram", () => {
  it("keeps every percentile within the relative error bound of an exact sort", () => {
    fc.assert(
      fc.property(values, fc.double({ min: 0, max: 1, noNaN: true }), (samples, q) => {
        const h = histogramOf(samples);
        const exact = exactQuantile(
          [...samples].sort((a, b) => a - b),
          q,
        );
        expect(Math.abs(h.quantile(q) - exact)).toBeLessThanOrEqual(exact * RELATIVE_ERROR + 1e-9);
      }),
      { numRuns: 500 },
    );
  });

  it("keeps count, sum, min and max exact", () => {
    fc.assert(
      fc.property(values, (samples) => {
        const h = histogramOf(samples);
        expect(h.count).toBe(samples.length);
        expect(h.sum).toBe(samples.reduce((a, b) => a + b, 0));
        expect(h.min).toBe(Math.min(...samples));
        expect(h.max).toBe(Math.max(...samples));
      }),
    );
  });

  it("merges associatively and commutatively, equal to recording everything in one", () => {
    fc.assert(
      fc.property(values, values, values, (a, b, c) => {
        const of = histogramOf;
        const left = of(a).merge(of(b)).merge(of(c));
        const right = of(a).merge(of(b).merge(of(c)));
        const swapped = of(c).merge(of(a)).merge(of(b));
        const whole = of([...a, ...b, ...c]);
        expect(left.snapshot()).toEqual(whole.snapshot());
        expect(right.snapshot()).toEqual(whole.snapshot());
        expect(swapped.snapshot()).toEqual(whole.snapshot());
      }),
      { numRuns: 200 },
    );
  });

  it("round-trips through its snapshot and its stored bucket form", () => {
    fc.assert(
      fc.property(values, (samples) => {
        const h = histogramOf(samples);
        expect(Histogram.fromSnapshot(h.snapshot()).snapshot()).toEqual(h.snapshot());
        const fromRows = Histogram.fromBuckets(h.buckets(), { sum: h.sum, min: h.min, max: h.max });
        expect(fromRows.snapshot()).toEqual(h.snapshot());
      }),
      { numRuns: 200 },
    );
  });

  it("answers NaN when empty and is reusable after reset", () => {
    const h = new Histogram();
    expect(h.quantile(0.5)).toBeNaN();
    h.record(1000);
    h.reset();
    expect(h.count).toBe(0);
    expect(h.snapshot().b).toEqual([]);
    h.record(7);
    expect(h.quantile(0.5)).toBe(7);
  });

  it("keeps every count as it grows, value by value up the whole range and through merges", () => {
    // Counts grow an octave at a time: record 0, then values ever larger (each octave's
    // first bucket and MAX_VALUE), then merge and re-read into histograms that are smaller.
    const rising = [0, 255, ...Array.from({ length: 24 }, (_, k) => 256 * 2 ** k), MAX_VALUE];
    const h = histogramOf(rising);
    expect(h.buckets().map(([, count]) => count)).toEqual(rising.map(() => 1));
    expect(h.quantile(1)).toBe(MAX_VALUE);
    const small = histogramOf([3]);
    expect(small.merge(h).snapshot()).toEqual(histogramOf([3, ...rising]).snapshot());
    expect(histogramOf([3]).mergeSnapshot(h.snapshot()).snapshot()).toEqual(histogramOf([3, ...rising]).snapshot());
    expect(Histogram.fromBuckets(h.buckets(), h).snapshot()).toEqual(h.snapshot());
  });

  it("clamps out-of-range values instead of failing", () => {
    const h = new Histogram();
    h.record(-5);
    h.record(MAX_VALUE * 4);
    expect(h.min).toBe(0);
    expect(h.max).toBe(MAX_VALUE);
  });

  it("rejects a corrupt snapshot naming the bad bucket", () => {
    expect(() => Histogram.fromSnapshot({ n: 1, min: 1, max: 1, sum: 1, b: [BUCKET_COUNT + 5, 1] })).toThrow(/out of range/);
  });
});
