/**
 * k6's randomSeed (vu-math.ts): a seeded VU's Math.random repeats its sequence and is its own,
 * whatever the other VUs of the isolate draw between its awaits; an unseeded VU keeps the
 * isolate's. The script tests run a bundled script's VUs in plain Node over a host whose
 * sleep yields to the event loop, so that VUs interleave as they do in a shard's isolate.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import vm from "node:vm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { vuContext } from "../test/support/vu-context.ts";
import { bundleScript } from "./bundle.ts";
import { createVuModules, sequence } from "./runtime/vu-modules.ts";
import type { IterationHost } from "./runtime/wire.ts";
import { createVuMath, int64Seed, seededRandom } from "./runtime/vu-modules/vu-math.ts";

const draws = (random: () => number, n: number) => Array.from({ length: n }, random);

describe("seededRandom", () => {
  it("repeats its sequence for a seed, in [0, 1)", () => {
    const first = draws(seededRandom(42n), 1000);
    expect(draws(seededRandom(42n), 1000)).toEqual(first);
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true);
    // Not stuck: a thousand draws are (nearly all) distinct.
    expect(new Set(first).size).toBeGreaterThan(990);
  });

  it.each([
    // Neighbouring seeds, and each half of the 64 bits, give sequences of their own.
    [0n, 1n],
    [1n, -1n],
    [0n, 2n ** 32n],
    [2n ** 32n, 2n ** 33n],
  ])("gives seeds %s and %s different sequences", (a, b) => {
    expect(draws(seededRandom(a), 4)).not.toEqual(draws(seededRandom(b), 4));
  });
});

describe("int64Seed", () => {
  it.each([
    // A number, as k6's int64.
    [42, 42n],
    // Go converts a float to int64 toward zero.
    [3.9, 3n],
    [-3.9, -3n],
    // A numeric string reads as its number.
    [" 17 ", 17n],
    // A bigint wraps to 64 bits.
    [2n ** 64n + 5n, 5n],
  ])("reads %s as %s", (seed, expected) => {
    expect(int64Seed(seed)).toBe(expected);
  });

  it.each([
    [undefined, "got undefined"],
    [Number.NaN, "got NaN"],
    [Number.POSITIVE_INFINITY, "got Infinity"],
    ["abc", 'got "abc"'],
    ["", 'got ""'],
    [null, "got null"],
    [{}, "got a object"],
  ])("refuses %s, naming it", (seed, named) => {
    expect(() => int64Seed(seed)).toThrow(`randomSeed(seed) needs an integer seed, ${named}`);
  });
});

describe("createVuMath", () => {
  it("is the isolate's Math until seeded, then the seed's sequence; a reseed restarts it", () => {
    const { math, seed } = createVuMath();
    expect(math.random).toBe(Math.random);
    expect([math.PI, math.max(1, 2), Object.prototype.toString.call(math)]).toEqual([Math.PI, 2, "[object Math]"]);
    seed(9);
    const once = draws(math.random, 3);
    expect(once).toEqual(draws(seededRandom(9n), 3));
    seed(9);
    expect(draws(math.random, 3)).toEqual(once);
    // The isolate's own Math is untouched.
    expect(Math.random).not.toBe(math.random);
  });
});

/** A script whose VUs seed from __ENV (in the init context or in VU code) and draw across sleeps. */
const SCRIPT = `
import { randomSeed, sleep } from "k6";
if (__ENV.INIT_SEED) randomSeed(Number(__ENV.INIT_SEED));
export const initDraw = Math.random();
export default function () {
  if (__ENV.SEED) randomSeed(Number(__ENV.SEED));
  const draws = [];
  for (let i = 0; i < 4; i++) {
    draws.push(Math.random());
    sleep(0.001);
  }
  return draws;
}
`;

type Vu = { exports: { initDraw: number; default: () => Promise<number[]> } };

/** The script's factory, bundled once; `startVu` makes one VU of it, as runtime/entry.ts does. */
async function scriptVus(sleeps: number[]) {
  const dir = mkdtempSync(join(tmpdir(), "edgeload-random-seed-"));
  const path = join(dir, "script.js");
  writeFileSync(path, SCRIPT);
  const bundled = await bundleScript(path);
  if (!bundled.ok) throw new Error(bundled.problems.join("\n"));
  const factory = vm.runInNewContext(bundled.factory, { URL, Promise });
  return (id: number, env: Record<string, string>): Vu => {
    const context = vuContext(null, { id });
    const vu = factory(createVuModules(context), env, id, () => "", sequence) as Vu;
    // The iteration's host: each sleep yields to the event loop, so another VU runs meanwhile.
    const host = {
      sleep: async () => {
        sleeps.push(id);
        await new Promise((resolve) => setTimeout(resolve, 0));
      },
    } as unknown as IterationHost;
    context.host = host;
    return vu;
  };
}

describe("randomSeed in a script", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("gives a seeded VU its own repeatable sequence while an unseeded VU draws the isolate's, interleaved", async () => {
    const sleeps: number[] = [];
    const startVu = await scriptVus(sleeps);
    const seeded = startVu(1, { SEED: "7" });
    const unseeded = startVu(2, {});
    // The isolate's Math.random, made recognisable: the unseeded VU must read it, the seeded one never.
    vi.spyOn(Math, "random").mockReturnValue(0.25);
    const [seededDraws, unseededDraws] = await Promise.all([seeded.exports.default(), unseeded.exports.default()]);
    // The VUs did take turns between draws.
    expect(sleeps.slice(0, 4)).toEqual([1, 2, 1, 2]);
    expect(seededDraws).toEqual(draws(seededRandom(7n), 4));
    expect(unseededDraws).toEqual([0.25, 0.25, 0.25, 0.25]);
    // The same seed on a VU that runs alone: the same sequence.
    expect(await startVu(3, { SEED: "7" }).exports.default()).toEqual(seededDraws);
  });

  it("gives two VUs seeded alike the same sequence each: they share no generator", async () => {
    const startVu = await scriptVus([]);
    const [a, b] = await Promise.all([startVu(1, { SEED: "5" }).exports.default(), startVu(2, { SEED: "5" }).exports.default()]);
    expect(a).toEqual(draws(seededRandom(5n), 4));
    expect(b).toEqual(a);
  });

  it("seeds the VU from its init context on: its init and its iterations draw one sequence", async () => {
    const startVu = await scriptVus([]);
    const vu = startVu(1, { INIT_SEED: "11" });
    const iteration = await vu.exports.default();
    expect([vu.exports.initDraw, ...iteration]).toEqual(draws(seededRandom(11n), 5));
  });
});
