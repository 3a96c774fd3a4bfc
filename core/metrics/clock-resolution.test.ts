import { describe, expect, it } from "vitest";
import { ClockGrid, finerResolution, msDecimals, roundToResolution } from "./clock-resolution.ts";

/** Readings of a clock stepping by `stepMs` (so always on its grid), at pseudo-random moments over a second. */
function readings(stepMs: number, n = 500, startMs = 1_764_033_012_447): number[] {
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: n }, () => Math.floor((startMs + random() * 1000) / stepMs) * stepMs);
}

describe("ClockGrid", () => {
  it.each([
    // [clock step ms, detected µs, why]
    [1, 1000, "workerd and Date.now(): whole milliseconds"],
    [0.001, 1, "a microsecond clock (k6, performance.now() off Workers)"],
    [0.1, 100, "a 100 µs clock"],
    [10, 10_000, "a 10 ms clock (a coarse timer)"],
  ])("readings on a %d ms grid → %d µs (%s)", (stepMs, us, _why) => {
    const grid = new ClockGrid();
    for (const r of readings(stepMs)) grid.observe(r);
    expect(grid.resolutionUs).toBe(us);
  });

  it("knows nothing before a reading, and one reading off the grid refines it", () => {
    const grid = new ClockGrid();
    expect(grid.resolutionUs).toBeNull();
    grid.observe(1000);
    grid.observe(2000);
    expect(grid.resolutionUs).toBe(1_000_000);
    grid.observe(2000.25);
    expect(grid.resolutionUs).toBe(10);
  });

  it("combines shards by the finest detected grid", () => {
    expect(finerResolution(1000, 1)).toBe(1);
    expect(finerResolution(null, 1000)).toBe(1000);
    expect(finerResolution(undefined, undefined)).toBeNull();
  });
});

describe("msDecimals", () => {
  it.each([
    // [resolution ms, decimals]
    [1, 0],
    [10, 0],
    [0.1, 1],
    [0.01, 2],
    [0.001, 2],
    [null, 2],
  ])("%s ms → %i decimals", (res, decimals) => {
    expect(msDecimals(res)).toBe(decimals);
  });
});

describe("roundToResolution", () => {
  it.each([
    // [ms, resolution ms, shown, why]
    [33.92, 1, 34, "workerd's whole-ms clock: a histogram's bucket midpoint is not a measured figure"],
    [142.848, 0.1, 142.8, "a 100 µs clock keeps one decimal"],
    [3.0245, 0.001, 3.02, "a µs clock keeps k6's two"],
    [3.0245, null, 3.02, "nothing detected yet: two decimals, as before"],
  ])("%d ms at %s ms → %d (%s)", (ms, res, shown, _why) => {
    expect(roundToResolution(ms, res)).toBe(shown);
  });
});
