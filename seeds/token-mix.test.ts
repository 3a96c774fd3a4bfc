import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_MIX, mixCounts, parseMix } from "./token-mix.ts";

describe("mixCounts", () => {
  it("splits 3000 tokens as the reference seeder does", () => {
    expect(mixCounts(3000)).toEqual({ valid: 1800, valid_exchanged: 150, expired: 360, revoked: 360, wrong_audience: 180, wrong_client: 150 });
  });

  it("gives the rounding remainder to wrong_client: 7 tokens", () => {
    // floor(7×.6)=4, floor(7×.05)=0, floor(7×.12)=0 twice, floor(7×.06)=0 → 3 left over.
    expect(mixCounts(7)).toEqual({ valid: 4, valid_exchanged: 0, expired: 0, revoked: 0, wrong_audience: 0, wrong_client: 3 });
  });

  it("always sums to n", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), (n) => {
        expect(Object.values(mixCounts(n, DEFAULT_MIX)).reduce((a, b) => a + b, 0)).toBe(n);
      }),
    );
  });
});

describe("parseMix", () => {
  it.each([
    ["valid=60,valid_exchanged=5,expired=12,revoked=12,wrong_audience=6,wrong_client=5", true],
    ["valid=100", true],
    ["valid=50,expired=40", false], // adds to 90
    ["valid=100,bogus=0", false],
    ["valid=-5,expired=105", false],
  ])("%s → ok %s", (text, ok) => {
    expect(parseMix(text).ok).toBe(ok);
  });
});
