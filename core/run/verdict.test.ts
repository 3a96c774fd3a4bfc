import { describe, expect, it } from "vitest";
import { combineVerdicts, describeVerdict, failed, inconclusive, PASSED, verdictExitCode } from "./verdict.ts";

describe("combineVerdicts", () => {
  it.each([
    // [parts, combined, why]
    [[PASSED, PASSED], PASSED, "every part passed"],
    [[PASSED, inconclusive("no data in weur")], inconclusive("no data in weur"), "one part could not be told"],
    [[inconclusive("a"), failed("b"), failed("c")], failed("b", "c"), "a failure anywhere fails, with every failure's reason"],
    [[], inconclusive("nothing to decide on"), "nothing at all is never a pass"],
  ] as const)("%j → %j (%s)", (parts, combined, _why) => {
    expect(combineVerdicts(parts)).toEqual(combined);
  });
});

describe("verdictExitCode", () => {
  it("is 0 only for passed: 99 failed (k6's), 75 inconclusive (EX_TEMPFAIL)", () => {
    expect([PASSED, failed("x"), inconclusive("y")].map(verdictExitCode)).toEqual([0, 99, 75]);
    expect(describeVerdict(inconclusive("a", "b"))).toBe("inconclusive: a; b");
  });
});
