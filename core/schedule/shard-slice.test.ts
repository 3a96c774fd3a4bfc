import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { interleaveCycle, ownedSlots } from "../data/interleave.ts";
import { shardSliceOf, shardSlices, sliceWeight, withSlice } from "./shard-slice.ts";

const weightsArb = fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 40 });

describe("shardSlices", () => {
  it("gives each shard the very slots the whole weight list gives it, with the cycle, its segment's start and the shard count", () => {
    fc.assert(
      fc.property(weightsArb, (weights) => {
        const slices = shardSlices(weights);
        const cycle = interleaveCycle(weights).length;
        slices.forEach((slice, i) => {
          expect(slice.slots).toEqual(ownedSlots(weights, i));
          expect(slice.cycle).toBe(cycle);
          expect(slice.before).toBe(weights.slice(0, i).reduce((a, w) => a + w, 0));
          expect(slice.shards).toBe(weights.length);
          expect(sliceWeight(slice)).toBe(weights[i]);
        });
      }),
    );
  });

  it("slices a plan of 10,000 equal shards in one pass, each owning one slot", () => {
    const started = performance.now();
    const slices = shardSlices(Array.from({ length: 10_000 }, () => 1));
    // ownedSlots shard by shard interleaves the whole list 10,000 times over (seconds).
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(slices[9_999]).toEqual({ slots: [9_999], cycle: 10_000, before: 9_999, shards: 10_000 });
  });

  it.each([
    // An index past the plan, and one that is not an index at all.
    [[1, 1], 2],
    [[1, 1], -1],
    [[1, 1], 0.5],
  ])("refuses shard %j of weights %j, naming the plan's size", (weights, index) => {
    expect(() => shardSliceOf(weights, index)).toThrow(/not in a plan of 2 shards/);
  });
});

describe("withSlice", () => {
  it("reads an assignment stored before slices (a deploy during a run) as its slice, the weight list gone", () => {
    const legacy = { runId: "r", shard: { index: 1 }, weights: [2, 1, 1] };
    const read = withSlice(legacy);
    expect(read.slice).toEqual(shardSliceOf([2, 1, 1], 1));
    expect("weights" in read).toBe(false);
  });

  it("leaves an assignment that has its slice as it is", () => {
    const current = { runId: "r", shard: { index: 0 }, slice: shardSliceOf([1, 1], 0) };
    expect(withSlice(current)).toBe(current);
  });
});
