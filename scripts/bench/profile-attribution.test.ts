import { describe, expect, it } from "vitest";
import { bookkeepingBySecond, MAX_SAMPLE_US, type SampledProfile } from "./profile-attribution.ts";

/** root → alarm → closeDue → toWire; root → send → fetchAndMeasure; root → (idle); root → (program); root → someHelper. */
const nodes: SampledProfile["nodes"] = [
  { id: 1, callFrame: { functionName: "(root)", url: "" }, children: [2, 5, 7, 8, 9] },
  { id: 2, callFrame: { functionName: "alarm", url: "index.js" }, children: [3] },
  { id: 3, callFrame: { functionName: "closeDue", url: "index.js" }, children: [4] },
  { id: 4, callFrame: { functionName: "toWire2", url: "index.js" } },
  { id: 5, callFrame: { functionName: "send", url: "index.js" }, children: [6] },
  { id: 6, callFrame: { functionName: "fetchAndMeasure", url: "index.js" } },
  { id: 7, callFrame: { functionName: "(idle)", url: "" } },
  { id: 8, callFrame: { functionName: "(program)", url: "" } },
  { id: 9, callFrame: { functionName: "someHelper", url: "index.js" } },
];

describe("bookkeepingBySecond", () => {
  it("gives each sample to the bookkeeping frame nearest its leaf, in the run second it was taken", () => {
    const profile: SampledProfile = {
      nodes,
      startTime: 0,
      // 500 ms before t0 (offset), then samples at 0.6 s, 0.9 s, 1.2 s, 1.5 s, 1.8 s, 2.1 s of the profile.
      samples: [3, 4, 6, 7, 8, 9, 3],
      timeDeltas: [600_000, 300_000, 300_000, 300_000, 300_000, 300_000, 1_000],
    };
    const seconds = bookkeepingBySecond(profile, 500);
    expect(seconds).toHaveLength(2);
    // 0.6 s and 0.9 s of the profile are second 0; the idle sample at 1.5 s counts nowhere.
    expect(seconds[0]!["window close"]).toBe(MAX_SAMPLE_US / 1000); // a long gap counts at most MAX_SAMPLE_US
    expect(seconds[0]!.serialise).toBe(50); // toWire2 under closeDue is the serialisation
    expect(seconds[0]!["send path"]).toBe(50); // at 1.2 s: still second 0 (0.7 s after t0)
    expect(seconds[1]!["V8 (program, GC)"]).toBe(50);
    expect(seconds[1]!.other).toBe(50);
    expect(seconds[1]!["window close"]).toBe(1); // 2.101 s: second 1, its own 1 ms
  });

  it("leaves out samples before t0 and fills a second nothing was sampled in with zeros", () => {
    const profile: SampledProfile = { nodes, startTime: 10, samples: [3, 6], timeDeltas: [100_000, 2_500_000] };
    const seconds = bookkeepingBySecond(profile, 200);
    expect(seconds).toHaveLength(3);
    expect(Object.values(seconds[0]!).every((ms) => ms === 0)).toBe(true);
    expect(seconds[2]!["send path"]).toBe(50);
  });
});
