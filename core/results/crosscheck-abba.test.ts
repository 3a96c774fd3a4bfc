import { describe, expect, it } from "vitest";
import { abbaCrosscheck, renderAbba } from "./crosscheck-abba.ts";
import type { LoadFigures } from "./crosscheck.ts";

/** A run's figures with a p95 of `p95` ms (the other latency figures follow it). */
const run = (p95: number): LoadFigures => ({
  requests: 3000,
  ratePerS: 100,
  errorRate: 0,
  failed: 0,
  durationS: 30,
  dropped: 0,
  steps: {},
  clockResolutionMs: 1,
  latency: { p50: p95 - 10, p90: p95 - 2, p95, p99: p95 + 5, max: p95 + 30 },
});
const p95Row = (c: ReturnType<typeof abbaCrosscheck>) => c.rows.find((r) => r.metric === "p95" && r.step === null)!;

describe("abbaCrosscheck", () => {
  it.each([
    // [A1, B1, B2, A2 p95s, the p95 row's verdict, the overall verdict, why]
    [[30, 30, 30, 30], "agree", "agree", "the same reading four times"],
    // A warming target: each run reads 8 ms faster than the one before. One pair (A then B)
    // says edgeload is 8 ms slower, the other (B then A) 8 ms faster: the mean is 0.
    [[60, 52, 44, 36], "agree", "agree", "a steady drift cancels out of ABBA's mean difference"],
    // The tools differ by 12 ms in both orders while each tool reads the target the same twice.
    [[42, 30, 30, 42], "differ", "differ beyond the target's own noise", "a real difference, beyond a steady target's noise"],
    // 12 ms apart, but k6 itself read the target 16 ms apart between its two runs.
    [[42, 22, 38, 42], "target moved", "the target moved too much to tell", "the target's own A/A spread swallows the difference"],
  ] as const)("p95s %j → %s", (p95s, row, overall, _why) => {
    const [a1, b1, b2, a2] = p95s;
    const c = abbaCrosscheck({ a1: run(a1), b1: run(b1), b2: run(b2), a2: run(a2) });
    expect(p95Row(c).verdict).toBe(row);
    expect(c.verdict).toBe(overall);
    // The exit code's verdict: only agreement passes; a moved target is inconclusive, never a pass.
    expect(c.outcome.kind).toBe({ agree: "passed", differ: "failed", "target moved": "inconclusive" }[row]);
  });

  it("shows the mean difference, the tolerance and the target's spread per row", () => {
    const c = abbaCrosscheck({ a1: run(42), b1: run(22), b2: run(38), a2: run(42) });
    expect(p95Row(c)).toMatchObject({ difference: 12, targetSpread: 16, tolerance: 5 });
    expect(renderAbba(c)).toMatch(/^p95 +\+12\.00 ms +±5\.00 ms +16\.00 ms +target moved$/m);
    expect(renderAbba(c)).toContain("verdict: the target moved too much to tell");
  });
});
