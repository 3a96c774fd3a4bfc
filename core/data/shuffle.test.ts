import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { shuffled as edgeShuffled } from "../../scenarios/scenario.ts";
import { shuffled } from "./shuffle.ts";

describe("shuffled", () => {
  it("is a permutation, the same every time", () => {
    fc.assert(
      fc.property(fc.array(fc.integer()), (xs) => {
        const once = shuffled(xs);
        expect([...once].sort()).toEqual([...xs].sort());
        expect(shuffled(xs)).toEqual(once);
      }),
    );
  });

  it("walks a seed set in the order the edge scenarios walk it (scenarios/scenario.ts), so k6 sends the same entries", () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 500 }), (xs) => {
        expect(shuffled(xs)).toEqual(edgeShuffled(xs));
      }),
    );
  });
});
