/**
 * One VU's own `Math`, so that k6's `randomSeed(seed)` seeds that VU's `Math.random` alone.
 *
 * In k6 each VU is a runtime of its own and randomSeed replaces that runtime's random source
 * (k6 v1.8.1 internal/js/modules/k6/k6.go RandomSeed: rt.SetRandSource(rand.New(rand.NewSource(seed)).Float64)).
 * Here the VUs of a shard share one isolate, and so its `Math`. Each VU's script instance is
 * one call of the bundle's factory, which binds `Math` to the VU's object (bundle.ts
 * wrapFactory): the binding is lexical, so it holds across awaits however the VUs interleave,
 * where a global Math.random would have to guess the calling VU.
 *
 * The object inherits everything from the isolate's `Math`; an unseeded VU reads the
 * isolate's Math.random through it. Seeded, its random is sfc32 (Chris Doty-Humphrey's Small
 * Fast Counter, from PractRand, seeded as PractRand seeds it from 64 bits): a sequence that
 * repeats for a seed from run to run, but not the numbers of k6's Go math/rand.
 */

/** A VU's `Math` and how randomSeed reseeds it. */
export interface VuMath {
  /** What the script's code sees as `Math`. */
  readonly math: Math;
  /** k6's randomSeed: from now on `math.random` is the sequence of `seed`. */
  seed(seed: unknown): void;
}

export function createVuMath(): VuMath {
  const math = Object.create(Math) as Math;
  return {
    math,
    seed(seed) {
      const random = seededRandom(int64Seed(seed));
      // As Math's own random: writable and configurable, not enumerable.
      Object.defineProperty(math, "random", { value: random, writable: true, configurable: true, enumerable: false });
    },
  };
}

/**
 * k6's seed, an int64: a number is truncated toward zero as Go converts it, a numeric string
 * read as a number, a bigint taken as it is; all wrap to 64 bits. Anything else is refused,
 * naming it: k6 would seed with 0 and the script would not know.
 */
export function int64Seed(seed: unknown): bigint {
  if (typeof seed === "bigint") return BigInt.asIntN(64, seed);
  const n = typeof seed === "number" ? seed : typeof seed === "string" && seed.trim() !== "" ? Number(seed) : Number.NaN;
  if (!Number.isFinite(n)) throw new TypeError(`randomSeed(seed) needs an integer seed, got ${shown(seed)}`);
  return BigInt.asIntN(64, BigInt(Math.trunc(n)));
}

function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || value === null || value === undefined) return String(value);
  return `a ${typeof value}`;
}

/** 2^-53: the step between doubles in [0, 1) with 53 bits of randomness. */
const UNIT_53 = 1 / 2 ** 53;

/**
 * sfc32 over `seed`'s 64 bits, as PractRand's sfc32::seed(Uint64): a = 0, b and c the low and
 * high halves, counter 1, then 12 outputs thrown away to mix them. Each draw joins two
 * outputs into a double in [0, 1) with 53 random bits (as Mersenne Twister's genrand_res53).
 *
 * @example seededRandom(42n)() // → the same number on every run
 */
export function seededRandom(seed: bigint): () => number {
  const bits = BigInt.asUintN(64, seed);
  let a = 0;
  let b = Number(bits & 0xffffffffn) | 0;
  let c = Number(bits >> 32n) | 0;
  let counter = 1;
  const next = (): number => {
    const t = (((a + b) | 0) + counter) | 0;
    counter = (counter + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 12; i++) next();
  return () => ((next() >>> 5) * 2 ** 26 + (next() >>> 6)) * UNIT_53;
}
