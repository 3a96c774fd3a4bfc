import { describe, expect, it } from "vitest";
import { parseRunSpec } from "../spec/run-spec.ts";
import { vuGauges } from "./vu-gauges.ts";

const spec = (executor: Record<string, unknown>) => {
  const r = parseRunSpec({ target: "http://127.0.0.1:9090", steps: [{ path: "/" }], ...executor });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.spec;
};

describe("vuGauges", () => {
  it.each([
    // [executor, k6's vus and vus_max as the plan fixes them]
    [
      { executor: "constant-vus", vus: 3, duration: "5s" },
      { vus: { value: 3, min: 3, max: 3 }, vus_max: { value: 3, min: 3, max: 3 } },
    ],
    [
      { executor: "shared-iterations", vus: 2, iterations: 10 },
      { vus: { value: 2, min: 2, max: 2 }, vus_max: { value: 2, min: 2, max: 2 } },
    ],
    // a ramp's sampled vus depend on timing: only vus_max, its peak
    [
      {
        executor: "ramping-vus",
        startVUs: 1,
        stages: [
          { duration: "2s", target: 4 },
          { duration: "2s", target: 0 },
        ],
      },
      { vus_max: { value: 4, min: 4, max: 4 } },
    ],
    // externally-controlled: its VUs are the user's to move, only vus_max (its maxVUs, all initialised by k6)
    [{ executor: "externally-controlled", vus: 1, maxVUs: 6, duration: "5s" }, { vus_max: { value: 6, min: 6, max: 6 } }],
    // arrival rate: the VUs k6 initialises up front
    [{ executor: "constant-arrival-rate", rate: 5, duration: "2s", preAllocatedVUs: 7, maxVUs: 20 }, { vus_max: { value: 7, min: 7, max: 7 } }],
  ])("%j", (executor, gauges) => {
    expect(vuGauges(spec(executor))).toEqual(gauges);
  });

  it("gives nothing for a run without VUs (a spec's arrival rate with no preAllocatedVUs)", () => {
    expect(vuGauges(spec({ executor: "constant-arrival-rate", rate: 5, duration: "2s" }))).toEqual({});
  });
});
