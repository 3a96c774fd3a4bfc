import { describe, expect, it } from "vitest";
import { compileTemplate, templateErrors } from "../spec/template.ts";
import { zipfProbability, zipfSampler } from "./zipf.ts";

/** A seeded uniform generator (mulberry32), so the statistical checks are deterministic. */
function uniform(seed = 12345) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("zipfSampler", () => {
  it("matches its distribution: chi-squared over the hottest keys and the tail", () => {
    const n = 10_000;
    const s = 1;
    const draw = zipfSampler(n, s);
    const u = uniform();
    const draws = 200_000;
    const counts = new Map<number, number>();
    for (let i = 0; i < draws; i++) {
      const k = draw(u());
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    // Cells: keys 1…50 one by one, then the tail in 10 equal-probability-ish bands.
    const cells: Array<[number, number]> = [];
    for (let k = 1; k <= 50; k++) cells.push([counts.get(k) ?? 0, zipfProbability(n, s, k) * draws]);
    const bands = [51, 100, 200, 400, 800, 1600, 3200, 6400, n + 1];
    for (let b = 0; b < bands.length - 1; b++) {
      let observed = 0;
      let expected = 0;
      for (let k = bands[b]!; k < bands[b + 1]!; k++) {
        observed += counts.get(k) ?? 0;
        expected += zipfProbability(n, s, k) * draws;
      }
      cells.push([observed, expected]);
    }
    const chi2 = cells.reduce((a, [o, e]) => a + (o - e) ** 2 / e, 0);
    // 58 cells → 57 degrees of freedom; the 99.9th percentile of χ²(57) is about 97.
    expect(chi2).toBeLessThan(97);
  });

  it("gives the hottest 20% of 10,000 keys about 80% of the traffic at s = 1", () => {
    const draw = zipfSampler(10_000, 1);
    const u = uniform(7);
    let hot = 0;
    for (let i = 0; i < 100_000; i++) if (draw(u()) <= 2_000) hot++;
    expect(hot / 100_000).toBeGreaterThan(0.8);
    expect(hot / 100_000).toBeLessThan(0.87);
  });

  it("is uniform at s = 0 and always within 1…n", () => {
    const draw = zipfSampler(4, 0);
    expect([0, 0.24, 0.25, 0.5, 0.74, 0.75, 0.9999].map(draw)).toEqual([1, 1, 2, 3, 3, 4, 4]);
    expect(() => zipfSampler(0, 1)).toThrow(/n must be/);
    expect(() => zipfSampler(10, -1)).toThrow(/exponent/);
  });
});

describe("{{zipf(n, s)}} in templates", () => {
  it("draws keys 1…n in request paths, and names a bad key space or exponent", () => {
    const path = compileTemplate("/items/{{zipf(100, 1.2)}}", { vars: {}, secrets: {} });
    const keys = Array.from({ length: 500 }, () => Number(path({ iteration: 0, shard: 0, region: "wnam" }).slice(7)));
    expect(keys.every((k) => Number.isInteger(k) && k >= 1 && k <= 100)).toBe(true);
    expect(keys.filter((k) => k === 1).length).toBeGreaterThan(keys.filter((k) => k === 100).length);
    expect(templateErrors("/items/{{zipf(0, 1)}}", { vars: {}, secrets: {} })[0]).toMatch(/use zipf\(n, s\)/);
  });

  it("rejects a sampler with the wrong exponent (the chi-squared check has power)", () => {
    const n = 1_000;
    const draw = zipfSampler(n, 1.2);
    const u = uniform(3);
    const counts = new Array<number>(n + 1).fill(0);
    for (let i = 0; i < 50_000; i++) counts[draw(u())]!++;
    let chi2 = 0;
    for (let k = 1; k <= 20; k++) chi2 += (counts[k]! - zipfProbability(n, 1, k) * 50_000) ** 2 / (zipfProbability(n, 1, k) * 50_000);
    expect(chi2).toBeGreaterThan(200);
  });
});
