import { describe, expect, it } from "vitest";
import { targetLoadAt } from "./load-profile.ts";
import { validSpec } from "../../test/support/run-spec-fixtures.ts";

const open = (extra: Record<string, unknown>) => validSpec({ target: "http://127.0.0.1:9", steps: [{ path: "/" }], ...extra });

describe("targetLoadAt", () => {
  it("reads a flat rate in full from the run's first millisecond to its last, and 0 outside it", () => {
    const spec = open({ executor: "constant-arrival-rate", rate: 40, duration: "3s" });
    // The run's first and last half-seconds ask for 40/s like the rest: the second the rate
    // is averaged over is cut to the part inside the schedule.
    expect([0, 250, 1_500, 2_750, 2_999].map((t) => targetLoadAt(spec, t).ratePerS)).toEqual([40, 40, 40, 40, 40]);
    expect(targetLoadAt(spec, -1).ratePerS).toBe(0);
    expect(targetLoadAt(spec, 3_000).ratePerS).toBe(0);
    expect(targetLoadAt(spec, 1_500).vus).toBeNull();
  });

  it("averages a ramp over the second around the moment", () => {
    const spec = open({ executor: "ramping-arrival-rate", stages: [{ target: 100, duration: "10s" }] });
    expect(targetLoadAt(spec, 5_000).ratePerS).toBe(50);
    // At the start only [0, 0.5 s] is inside: its average, the rate at 0.25 s.
    expect(targetLoadAt(spec, 0).ratePerS).toBe(2.5);
    // At the end only [9.5 s, 10 s]: the rate at 9.75 s.
    expect(targetLoadAt(spec, 9_999).ratePerS).toBeCloseTo(97.5, 1);
  });

  it("counts the VUs a closed-model run has active, and no rate", () => {
    const spec = validSpec({ target: "http://127.0.0.1:9", steps: [{ path: "/" }], executor: "constant-vus", vus: 7, duration: "2s" });
    expect(targetLoadAt(spec, 1_000)).toEqual({ ratePerS: null, vus: 7 });
    expect(targetLoadAt(spec, 2_000)).toEqual({ ratePerS: null, vus: 0 });
  });
});
