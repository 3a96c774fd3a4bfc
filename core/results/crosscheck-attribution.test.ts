import { describe, expect, it } from "vitest";
import { crosscheck, type LoadFigures } from "./crosscheck.ts";
import { attributeResiduals, renderAttributions } from "./crosscheck-attribution.ts";

const figures = (p99: number, max: number): LoadFigures => ({
  requests: 4500,
  ratePerS: 300,
  errorRate: 0,
  failed: 0,
  durationS: 15,
  dropped: 0,
  latency: { p50: 22, p90: 23, p95: 24, p99, max },
  steps: {},
  clockResolutionMs: 1,
});

describe("attributeResiduals", () => {
  const k6 = figures(25.4, 32);
  it("puts a residual the floor reads too on the runtime", () => {
    const check = crosscheck(figures(32.9, 40), k6);
    expect(check.rows.find((r) => r.metric === "p99")?.verdict).toBe("disagree");
    const [p99] = attributeResiduals(check, { p50: 22, p90: 23, p95: 24, p99: 33, max: null });
    expect(p99).toMatchObject({ metric: "p99", owner: "runtime" });
    expect(p99!.residualMs).toBeCloseTo(7.5, 5);
    expect(p99!.runtimeMs).toBeCloseTo(7.6, 5);
    expect(renderAttributions([p99!])[0]).toBe("p99 +7.5 ms: the runtime's (workerd's own paced loop reads +7.6 ms over k6 at this rate)");
  });

  it("keeps on edgeload what it reads over a floor that agrees with k6", () => {
    const check = crosscheck(figures(32.9, 40), k6);
    const [p99] = attributeResiduals(check, { p50: 22, p90: 23, p95: 24, p99: 26, max: null });
    expect(p99).toMatchObject({ metric: "p99", owner: "edgeload" });
    expect(renderAttributions([p99!])[0]).toBe("p99 +7.5 ms: +6.9 ms of it edgeload's own, over workerd's paced loop (which reads +0.6 ms over k6)");
  });

  it("keeps on edgeload what it reads beyond a floor that disagrees too", () => {
    const check = crosscheck(figures(45, 50), k6);
    const [p99] = attributeResiduals(check, { p50: 22, p90: 23, p95: 24, p99: 33, max: null });
    expect(p99).toMatchObject({ owner: "edgeload" });
    expect(p99!.edgeloadMs).toBeCloseTo(12, 5);
  });

  it("leaves out the rows that agree and those the floor did not measure", () => {
    const check = crosscheck(figures(32.9, 233), k6);
    expect(check.rows.find((r) => r.metric === "max")?.verdict).toBe("disagree");
    expect(attributeResiduals(check, { p50: 22, p90: 23, p95: 24, p99: 33, max: null }).map((a) => a.metric)).toEqual(["p99"]);
  });
});
