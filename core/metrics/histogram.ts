/**
 * Log-linear latency histogram: HDR-style buckets, fixed memory, exact merges.
 *
 * Why our own rather than hdr-histogram-js: shards serialise a handful of histograms every
 * second and the coordinator merges and stores them; what matters is sparse serialisation
 * and merge cost, plus a bucket layout simple enough to express in SQL (see
 * coordinator/migrations/SCHEMA.md). `npm run bench` (histogram section) measures both
 * implementations side by side; the figures are in the README.
 *
 * Layout (like HDR with 2 significant digits): values 0..255 have a bucket each; above
 * that, every octave [2^k, 2^(k+1)) is split into 128 equal buckets. A bucket's width is
 * at most 1/128 of its lower bound, and we report its midpoint, so any reported value is
 * within 1/256 (0.39%) of every true value in the bucket. Values are non-negative
 * integers (microseconds by convention); larger values are clamped to MAX_VALUE (~71 min).
 */

const SUB_BUCKET_BITS = 7;
const SUB_BUCKET_HALF = 1 << SUB_BUCKET_BITS; // 128 buckets per octave
const LINEAR_LIMIT = SUB_BUCKET_HALF << 1; // 256: below this, one bucket per value

/** Largest recordable value; anything above is clamped to it. */
export const MAX_VALUE = 0xffff_ffff;
/** Number of buckets needed to cover 0..MAX_VALUE. */
export const BUCKET_COUNT = bucketIndex(MAX_VALUE) + 1;
/** The counts of a histogram that has recorded nothing (shared: never written, see #reserve). */
const EMPTY_COUNTS = new Float64Array(0);
/** Worst-case relative error of a reported value (midpoint of a bucket). */
export const RELATIVE_ERROR = 1 / (2 * SUB_BUCKET_HALF);

/** Index of the bucket holding `value` (a non-negative integer ≤ MAX_VALUE). */
export function bucketIndex(value: number): number {
  if (value < LINEAR_LIMIT) return value;
  const shift = 31 - Math.clz32(value) - SUB_BUCKET_BITS;
  return (shift << SUB_BUCKET_BITS) + (value >>> shift);
}

/** Smallest value that falls into bucket `index`. */
export function bucketLowerBound(index: number): number {
  if (index < LINEAR_LIMIT) return index;
  const shift = (index >>> SUB_BUCKET_BITS) - 1;
  return (index - (shift << SUB_BUCKET_BITS)) * 2 ** shift;
}

/** Value reported for bucket `index`: its midpoint (exact for the linear range). */
export function bucketMidpoint(index: number): number {
  if (index < LINEAR_LIMIT) return index;
  const width = 2 ** ((index >>> SUB_BUCKET_BITS) - 1);
  return bucketLowerBound(index) + (width - 1) / 2;
}

/**
 * The serialised form shipped from shards and stored by the coordinator. `b` lists the
 * non-empty buckets as flattened pairs [indexDelta, count, indexDelta, count, …], the
 * index delta counted from the previous pair's index, so it stays small in JSON.
 */
export interface HistogramSnapshot {
  readonly n: number;
  readonly min: number;
  readonly max: number;
  readonly sum: number;
  readonly b: readonly number[];
}

/** Buckets per octave above the linear range: the unit the counts array grows by. */
const GROWTH_STEP = SUB_BUCKET_HALF;

export class Histogram {
  /**
   * Dense counts; Float64 so whole-run merges never overflow (exact up to 2^53). Grown on
   * demand up to BUCKET_COUNT, an octave beyond the highest bucket used: a shard makes a
   * histogram per trend per window, and latencies of tens of milliseconds need 10 KB of
   * the 26 KB the full range takes (and zero-fills) at every allocation.
   */
  #counts: Float64Array = EMPTY_COUNTS;
  #lowestIndex = BUCKET_COUNT;
  #highestIndex = -1;
  count = 0;
  sum = 0;
  min = Infinity;
  max = -Infinity;

  /** Records one value. Negative or fractional values are rounded into range. */
  record(value: number): void {
    const v = value <= 0 ? 0 : value >= MAX_VALUE ? MAX_VALUE : Math.round(value);
    const index = bucketIndex(v);
    if (index >= this.#counts.length) this.#reserve(index);
    this.#counts[index]! += 1;
    if (index < this.#lowestIndex) this.#lowestIndex = index;
    if (index > this.#highestIndex) this.#highestIndex = index;
    this.count += 1;
    this.sum += v;
    if (v < this.min) this.min = v;
    if (v > this.max) this.max = v;
  }

  /** Makes room for bucket `index`: up to the octave after its own. */
  #reserve(index: number): void {
    const length = Math.min(BUCKET_COUNT, (Math.floor(index / GROWTH_STEP) + 2) * GROWTH_STEP);
    const grown = new Float64Array(length);
    grown.set(this.#counts);
    this.#counts = grown;
  }

  /** Adds every count of `other` into this histogram (exact; order does not matter). */
  merge(other: Histogram): this {
    if (other.count === 0) return this;
    if (other.#highestIndex >= this.#counts.length) this.#reserve(other.#highestIndex);
    const counts = this.#counts;
    const theirs = other.#counts;
    for (let i = other.#lowestIndex; i <= other.#highestIndex; i++) {
      const c = theirs[i]!;
      if (c !== 0) counts[i]! += c;
    }
    this.#absorbSummary(other.#lowestIndex, other.#highestIndex, other.count, other.sum, other.min, other.max);
    return this;
  }

  /** Adds a serialised histogram into this one without materialising it. */
  mergeSnapshot(snapshot: HistogramSnapshot): this {
    if (snapshot.n === 0) return this;
    const pairs = snapshot.b;
    let index = 0;
    let lowest = BUCKET_COUNT;
    let highest = -1;
    for (let p = 0; p < pairs.length; p += 2) {
      index += pairs[p]!;
      if (index < 0 || index >= BUCKET_COUNT) throw new RangeError(`histogram bucket ${index} out of range`);
      if (index >= this.#counts.length) this.#reserve(index);
      this.#counts[index]! += pairs[p + 1]!;
      if (index < lowest) lowest = index;
      if (index > highest) highest = index;
    }
    this.#absorbSummary(lowest, highest, snapshot.n, snapshot.sum, snapshot.min, snapshot.max);
    return this;
  }

  #absorbSummary(lowest: number, highest: number, n: number, sum: number, min: number, max: number): void {
    if (lowest < this.#lowestIndex) this.#lowestIndex = lowest;
    if (highest > this.#highestIndex) this.#highestIndex = highest;
    this.count += n;
    this.sum += sum;
    if (min < this.min) this.min = min;
    if (max > this.max) this.max = max;
  }

  /**
   * The value at quantile `q` (0..1): the midpoint of the first bucket whose cumulative
   * count reaches q·count, clamped to the exact min and max. The same rule is written in
   * SQL in SCHEMA.md, so both give identical answers. NaN when empty.
   */
  quantile(q: number): number {
    if (this.count === 0) return NaN;
    if (q <= 0) return this.min;
    if (q >= 1) return this.max;
    const rank = q * this.count;
    let cumulative = 0;
    const counts = this.#counts;
    for (let i = this.#lowestIndex; i <= this.#highestIndex; i++) {
      cumulative += counts[i]!;
      if (cumulative >= rank) return Math.min(this.max, Math.max(this.min, bucketMidpoint(i)));
    }
    return this.max;
  }

  /** Bytes its counts take (what hdr-histogram-js calls its estimated footprint). */
  get footprintBytes(): number {
    return this.#counts.byteLength;
  }

  get mean(): number {
    return this.count === 0 ? NaN : this.sum / this.count;
  }

  /** Sparse, JSON-friendly form (see HistogramSnapshot). */
  snapshot(): HistogramSnapshot {
    const b: number[] = [];
    let previous = 0;
    const counts = this.#counts;
    for (let i = this.#lowestIndex; i <= this.#highestIndex; i++) {
      const c = counts[i]!;
      if (c !== 0) {
        b.push(i - previous, c);
        previous = i;
      }
    }
    return this.count === 0 ? EMPTY_SNAPSHOT : { n: this.count, min: this.min, max: this.max, sum: this.sum, b };
  }

  /** Non-empty buckets as [midpointValue, count] pairs, ascending: the D1 storage form. */
  buckets(): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    const counts = this.#counts;
    for (let i = this.#lowestIndex; i <= this.#highestIndex; i++) {
      const c = counts[i]!;
      if (c !== 0) out.push([bucketMidpoint(i), c]);
    }
    return out;
  }

  /** Clears all counts so the object can be reused (cheaper than a new array). */
  reset(): void {
    if (this.#highestIndex >= 0) this.#counts.fill(0, this.#lowestIndex, this.#highestIndex + 1);
    this.#lowestIndex = BUCKET_COUNT;
    this.#highestIndex = -1;
    this.count = 0;
    this.sum = 0;
    this.min = Infinity;
    this.max = -Infinity;
  }

  /**
   * Rebuilds a histogram from stored [value, count] pairs (as `buckets()` writes them) and
   * its exact summary figures.
   */
  static fromBuckets(pairs: ReadonlyArray<readonly [number, number]>, summary: { sum: number; min: number; max: number }): Histogram {
    const h = new Histogram();
    let n = 0;
    for (const [value, count] of pairs) {
      const index = bucketIndex(Math.min(MAX_VALUE, Math.max(0, Math.floor(value))));
      if (index >= h.#counts.length) h.#reserve(index);
      h.#counts[index]! += count;
      if (index < h.#lowestIndex) h.#lowestIndex = index;
      if (index > h.#highestIndex) h.#highestIndex = index;
      n += count;
    }
    if (n > 0) {
      h.count = n;
      h.sum = summary.sum;
      h.min = summary.min;
      h.max = summary.max;
    }
    return h;
  }

  static fromSnapshot(snapshot: HistogramSnapshot): Histogram {
    return new Histogram().mergeSnapshot(snapshot);
  }
}

export const EMPTY_SNAPSHOT: HistogramSnapshot = Object.freeze({ n: 0, min: 0, max: 0, sum: 0, b: Object.freeze([]) as readonly number[] });
