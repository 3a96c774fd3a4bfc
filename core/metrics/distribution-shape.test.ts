import { describe, expect, it } from "vitest";
import { distributionShape } from "./distribution-shape.ts";
import { Histogram } from "./histogram.ts";

/** Stored buckets of a histogram of these latencies (ms). */
function buckets(ms: readonly number[]): Array<[number, number]> {
  const h = new Histogram();
  for (const v of ms) h.record(Math.round(v * 1000));
  return h.buckets() as Array<[number, number]>;
}

/** n latencies spread around `centerMs` (± spread), on a clock of `stepMs` steps (0: exact). */
function around(n: number, centerMs: number, spreadMs: number, stepMs = 0, seed = 1): number[] {
  let x = seed;
  const random = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: n }, () => {
    const v = centerMs + (random() + random() + random() - 1.5) * ((2 * spreadMs) / 1.5);
    return stepMs ? Math.round(v / stepMs) * stepMs : v;
  });
}

describe("distributionShape", () => {
  it.each([
    // [latencies, clock ms, quantised, bimodal, why]
    [around(2000, 6, 2, 1), 1, true, false, "6 ± 2 ms on a 1 ms clock: a handful of steps (the demo's userinfo)"],
    [around(2000, 6, 2), 0.001, false, false, "the same on a microsecond clock: a smooth distribution"],
    [around(2000, 40, 15, 1), 1, false, false, "40 ± 15 ms on a 1 ms clock: many steps, no flag"],
    [[...around(1500, 5, 1), ...around(500, 80, 10, 0, 2)], 0.001, false, true, "cache hits near 5 ms and misses near 80 ms"],
    [[...around(1500, 5, 1, 1), ...around(500, 80, 10, 1, 2)], 1, false, true, "the same timed by a 1 ms clock: still bimodal, not mistaken for quantisation"],
    [around(3000, 3, 1.5, 1), 1, true, false, "2–4 ms on 1 ms steps: log bins narrower than a step are skipped, no false peaks"],
  ])("%#: quantised %s, bimodal %s (%s)", (latencies, stepMs, quantised, bimodal, _why) => {
    const shape = distributionShape(buckets(latencies as number[]), stepMs as number);
    expect(shape.quantised !== null).toBe(quantised);
    expect(shape.bimodal !== null).toBe(bimodal);
    expect(shape.notes).toHaveLength(Number(quantised) + Number(bimodal));
  });

  it("names the two groups of a bimodal distribution", () => {
    const shape = distributionShape(buckets([...around(1500, 5, 1), ...around(500, 80, 10, 0, 2)]), 0.001);
    expect(shape.bimodal!.lowPeakMs).toBeGreaterThan(3);
    expect(shape.bimodal!.lowPeakMs).toBeLessThan(7);
    expect(shape.bimodal!.highPeakMs).toBeGreaterThan(60);
    expect(shape.bimodal!.highPeakMs).toBeLessThan(100);
  });

  it("says nothing of an empty run", () => {
    expect(distributionShape([], 1)).toEqual({ quantised: null, bimodal: null, notes: [] });
  });
});
