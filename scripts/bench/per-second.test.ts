import { describe, expect, it } from "vitest";
import { checkAgainstFloor, formatFloorBar, formatSpread, p95PerSecond, steadySpread } from "./per-second.ts";

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

  it("checks a run against the floor's slowest steady second and p99, naming the slowest second's client delay", () => {
    const floor = { p95BySecond: [30, 22, 23, 22, 40], p99Ms: 23 };
    const met = checkAgainstFloor({ p95BySecond: [24, 23, 24, 22, 50], p99Ms: 25.02, clientDelayMaxBySecond: [1, 2, 3, 1, 9] }, floor);
    expect(met).toMatchObject({ met: true, secondOverMs: 1, slowest: { second: 2, p95Ms: 24, clientDelayMaxMs: 3 }, floorSlowestP95Ms: 23 });
    expect(met!.p99OverMs).toBeCloseTo(2.02);
    expect(formatFloorBar(met)).toBe("met: slowest second +1.0 (s2, client delay ≤ 3 ms in it), p99 +2.0");
    // One steady second 3.9 ms over the floor's slowest misses, whatever the p99.
    const missed = checkAgainstFloor({ p95BySecond: [23, 22, 26.9, 23, 23], p99Ms: 24, clientDelayMaxBySecond: [1, 1, 31] }, floor);
    expect(missed).toMatchObject({ met: false, slowest: { second: 2, clientDelayMaxMs: 31 } });
    expect(formatFloorBar(missed)).toBe("missed: slowest second +3.9 (s2, client delay ≤ 31 ms in it), p99 +1.0");
    // So does a p99 over by more than 2 ms; a client without a delay probe shows none.
    expect(formatFloorBar(checkAgainstFloor({ p95BySecond: [23, 22, 23, 23], p99Ms: 25.2 }, floor))).toBe("missed: slowest second +0.0 (s2), p99 +2.2");
    expect(formatFloorBar(checkAgainstFloor({ p95BySecond: [23, 22, 23, 23], p99Ms: 22.98, clientDelayMaxBySecond: [1, 1, NaN] }, floor))).toBe(
      "met: slowest second +0.0 (s2), p99 +0.0",
    );
    expect(checkAgainstFloor({ p95BySecond: [23, 24], p99Ms: 24 }, floor)).toBeNull();
    expect(formatFloorBar(null)).toBe("-");
  });
});
