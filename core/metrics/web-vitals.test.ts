/**
 * Web vitals' ratings at web.dev's bounds (good ≤ first, poor > second) and the samples of
 * one navigation: what a page did not measure is not recorded as 0.
 */
import { describe, expect, it } from "vitest";
import { webVitalRating, webVitalSamples } from "./web-vitals.ts";

describe("webVitalRating", () => {
  it.each([
    // At the first bound a vital is still good; one past it needs improvement.
    ["lcp", 2500, "good"],
    ["lcp", 2501, "needs-improvement"],
    // At the second bound it still needs improvement; past it, poor.
    ["lcp", 4000, "needs-improvement"],
    ["lcp", 4001, "poor"],
    ["fcp", 1800, "good"],
    ["fcp", 3001, "poor"],
    ["ttfb", 800, "good"],
    ["ttfb", 1801, "poor"],
    ["inp", 200, "good"],
    ["inp", 201, "needs-improvement"],
    ["inp", 501, "poor"],
    // CLS is a score, not milliseconds: 0.1 is still good, past 0.25 poor.
    ["cls", 0.1, "good"],
    ["cls", 0.11, "needs-improvement"],
    ["cls", 0.26, "poor"],
  ] as const)("%s of %d is %s", (vital, ms, rating) => {
    expect(webVitalRating(vital, ms)).toBe(rating);
  });
});

describe("webVitalSamples", () => {
  it("tags each vital with the page's URL and its rating", () => {
    expect(webVitalSamples({ ttfb: 120, fcp: 900, lcp: 4200 }, "http://t/sign-in")).toEqual([
      { name: "browser_web_vital_ttfb", value: 120, tags: { url: "http://t/sign-in", rating: "good" } },
      { name: "browser_web_vital_fcp", value: 900, tags: { url: "http://t/sign-in", rating: "good" } },
      { name: "browser_web_vital_lcp", value: 4200, tags: { url: "http://t/sign-in", rating: "poor" } },
    ]);
  });

  it("records INP and CLS when a page is left, CLS of 0 included (a page that never shifted)", () => {
    expect(webVitalSamples({ inp: 48, cls: 0 }, "http://t/")).toEqual([
      { name: "browser_web_vital_inp", value: 48, tags: { url: "http://t/", rating: "good" } },
      { name: "browser_web_vital_cls", value: 0, tags: { url: "http://t/", rating: "good" } },
    ]);
  });

  it("records nothing for a vital the page did not measure (a page that never painted has no LCP, not an LCP of 0)", () => {
    expect(webVitalSamples({ ttfb: 30, fcp: null, lcp: null }, "http://t/").map((s) => s.name)).toEqual(["browser_web_vital_ttfb"]);
  });
});
