/**
 * Zipf-distributed keys for hot-key workloads: key k (1-based, of n) is drawn with
 * probability proportional to 1 / k^s. With n = 10,000 and s = 1 the hottest 20% of keys
 * take about 84% of the draws — the "80/20" of a CRUD mix with hot records.
 *
 * Sampling inverts the cumulative distribution with a binary search over a table built
 * once per (n, s) and cached, so a draw costs O(log n) and no allocation.
 *
 * @example const draw = zipfSampler(10_000, 1); draw(Math.random()) // → 1 most often
 */
const tables = new Map<string, Float64Array>();

/** Largest key space a sampler builds a table for (8 bytes per key). */
export const MAX_ZIPF_KEYS = 1_000_000;

function cumulative(n: number, s: number): Float64Array {
  const id = `${n}:${s}`;
  let table = tables.get(id);
  if (!table) {
    table = new Float64Array(n);
    let sum = 0;
    for (let k = 1; k <= n; k++) table[k - 1] = sum += 1 / k ** s;
    for (let i = 0; i < n; i++) table[i]! /= sum;
    tables.set(id, table);
  }
  return table;
}

/** A sampler of keys 1…n from a uniform number u in [0, 1). */
export function zipfSampler(n: number, s: number): (u: number) => number {
  if (!(Number.isInteger(n) && n >= 1 && n <= MAX_ZIPF_KEYS)) throw new RangeError(`zipf: n must be an integer from 1 to ${MAX_ZIPF_KEYS}`);
  if (!(s >= 0 && s <= 10)) throw new RangeError("zipf: the exponent must be between 0 and 10");
  const table = cumulative(n, s);
  return (u) => {
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (table[mid]! > u) hi = mid;
      else lo = mid + 1;
    }
    return lo + 1;
  };
}

/** The probability of key k (1-based) under Zipf(n, s): what a draw should match. */
export function zipfProbability(n: number, s: number, k: number): number {
  const table = cumulative(n, s);
  return table[k - 1]! - (k > 1 ? table[k - 2]! : 0);
}
