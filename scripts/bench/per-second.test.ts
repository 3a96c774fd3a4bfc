import { describe, expect, it } from "vitest";
import { formatSpread, p95PerSecond, steadySpread } from "./per-second.ts";

describe("per-second p95s", () => {
  it("takes each second's p95 by nearest rank, NaN for a second without samples", () => {
    const samples = [
      ...Array.from({ length: 20 }, (_, i) => ({ second: 0, ms: i + 1 })), // 1..20: p95 = 19
      ...Array.from({ length: 20 }, (_, i) => ({ second: 2, ms: 100 - i })), // unsorted 81..100: p95 = 99
    ];
    const bySecond = p95PerSecond(samples);
    expect(bySecond).toHaveLength(3);
    expect(bySecond[0]).toBe(19);
    expect(bySecond[1]).toBeNaN();
    expect(bySecond[2]).toBe(99);
  });

  it("spreads the steady seconds (not the first, not the last), second 0 apart", () => {
    const spread = steadySpread([60, 31, 35, 32, NaN, 33, 90]);
    expect(spread).toEqual({ first: 60, min: 31, median: 32, max: 35, steadySeconds: 4 });
    expect(formatSpread(spread)).toBe("60.0; 31.0 / 32.0 / 35.0");
    expect(steadySpread([10, 20])).toBeNull();
    expect(formatSpread(null)).toBe("-");
  });
});
