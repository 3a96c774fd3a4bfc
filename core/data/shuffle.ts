/**
 * A fixed pseudo-random permutation (mulberry32 from a fixed seed): the order in which a
 * run walks a seed set, so that the run-wide iteration index alone decides which entry an
 * iteration uses and a short run still sees the set's mix rather than its first type.
 *
 * Kept free of imports and platform APIs: the k6 scripts (k6-scripts/lib/seeds.js) import
 * it too, so a k6 run and an edge run of the same set send the same entries in the same order.
 *
 * @example shuffled(["a", "b", "c", "d"]) // always the same permutation of the four
 */
export function shuffled<T>(entries: readonly T[]): T[] {
  const out = entries.slice();
  let state = 0x9e3779b9;
  const next = () => {
    // mulberry32
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
