/**
 * Statistics for run comparison, in plain arithmetic: a seeded random generator for
 * reproducible resampling, binomial draws, and the two-proportion interval and tests
 * (Newcombe's score interval, a z-test, Fisher's exact test for small counts).
 */
/**
 * One Binomial(n, p) draw. Below a mean of 30 it inverts the distribution exactly, walking
 * the pmf from 0 (about mean + 1 steps); above, it uses the normal limit, whose error at a
 * variance of 15 or more is far below what a bootstrap interval resolves.
 */
export function binomial(n: number, p: number, rng: Random): number {
  if (n <= 0 || p <= 0) return 0;
  if (p >= 1) return n;
  if (p > 0.5) return n - binomial(n, 1 - p, rng);
  const mean = n * p;
  if (mean < 30) {
    const s = p / (1 - p);
    const a = (n + 1) * s;
    let r = (1 - p) ** n; // ≥ e^(−42) for p ≤ ½ and mean < 30: no underflow
    let u = rng.next();
    let x = 0;
    while (u > r && x < n) {
      u -= r;
      x++;
      r *= a / x - s;
    }
    return x;
  }
  const x = Math.round(mean + Math.sqrt(mean * (1 - p)) * rng.normal());
  return x < 0 ? 0 : Math.min(x, n);
}

export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Standard normal. */
  normal(): number;
}

/** A small seeded generator (sfc32, seeded through splitmix32), for reproducible resampling. */
export function seededRandom(seed: number): Random {
  let s = seed >>> 0;
  const split = () => {
    s = (s + 0x9e3779b9) | 0;
    let z = Math.imul(s ^ (s >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = split(),
    b = split(),
    c = split(),
    d = split();
  const next = () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (((c << 21) | (c >>> 11)) + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  let spare: number | null = null;
  const normal = () => {
    // Box–Muller: two independent deviates per pair of uniforms.
    if (spare !== null) {
      const z = spare;
      spare = null;
      return z;
    }
    const radius = Math.sqrt(-2 * Math.log(1 - next()));
    const angle = 2 * Math.PI * next();
    spare = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  };
  return { next, normal };
}

// ── Rates: difference of two proportions ────────────────────────────────────────────────

export interface ProportionDifference {
  /** Confidence interval of x2/n2 − x1/n1 (Newcombe's hybrid score interval). */
  readonly interval: readonly [number, number];
  /** Two-sided p-value of "the proportions are equal". */
  readonly pValue: number;
  readonly method: "z-test" | "fisher-exact";
}

/**
 * Compares a baseline proportion x1/n1 with a candidate x2/n2 (both n > 0).
 *
 * @example
 * proportionDifference(48, 80, 56, 70, 0.95).interval // ≈ [0.0524, 0.3339] (Newcombe 1998, example a)
 */
export function proportionDifference(x1: number, n1: number, x2: number, n2: number, confidence: number): ProportionDifference {
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const p1 = x1 / n1;
  const p2 = x2 / n2;
  const [l1, u1] = wilson(x1, n1, z);
  const [l2, u2] = wilson(x2, n2, z);
  const d = p2 - p1;
  const interval = [d - Math.hypot(p2 - l2, u1 - p1), d + Math.hypot(u2 - p2, p1 - l1)] as const;
  const pooled = (x1 + x2) / (n1 + n2);
  const smallestExpected = Math.min(n1, n2) * Math.min(pooled, 1 - pooled);
  if (smallestExpected < 5) return { interval, pValue: fisherExact(x1, n1, x2, n2), method: "fisher-exact" };
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
  return { interval, pValue: erfc(Math.abs(d / se) / Math.SQRT2), method: "z-test" };
}

/** Wilson's score interval for x/n. */
function wilson(x: number, n: number, z: number): [number, number] {
  const p = x / n;
  const z2 = z * z;
  const scale = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / scale;
  const half = (z / scale) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/**
 * Fisher's exact test, two-sided: the probability, with both margins fixed, of every table
 * no more likely than the one observed. Hypergeometric terms come from the ratio of
 * successive terms, in logs, so large runs with few failures cost one step per failure.
 */
function fisherExact(x1: number, n1: number, x2: number, n2: number): number {
  const failures = x1 + x2;
  const from = Math.max(0, failures - n2);
  const to = Math.min(n1, failures);
  const logs = new Float64Array(to - from + 1);
  for (let k = from; k < to; k++) {
    logs[k - from + 1] = logs[k - from]! + Math.log(((n1 - k) * (failures - k)) / ((k + 1) * (n2 - failures + k + 1)));
  }
  const observed = logs[x1 - from]!;
  const top = logs.reduce((m, v) => Math.max(m, v), -Infinity);
  let total = 0;
  let extreme = 0;
  for (const v of logs) {
    const w = Math.exp(v - top);
    total += w;
    if (v <= observed + 1e-7) extreme += w; // relative tolerance for ties
  }
  return Math.min(1, extreme / total);
}

/** Complementary error function (Numerical Recipes' erfcc; relative error < 1.2e-7). */
function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const poly =
    -1.26551223 +
    t *
      (1.00002368 +
        t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  const r = t * Math.exp(-z * z + poly);
  return x >= 0 ? r : 2 - r;
}

/** Standard normal quantile, by bisection on the cdf (only ever asked for a handful of levels). */
function normalQuantile(p: number): number {
  let lo = -10;
  let hi = 10;
  for (let i = 0; i < 80; i++) {
    const mid = (lo + hi) / 2;
    if (erfc(-mid / Math.SQRT2) / 2 < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
