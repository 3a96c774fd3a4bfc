import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { crosscheck, edgeFigures, TOLERANCES, type Latency, type LoadFigures } from "./crosscheck.ts";
import { renderCrosscheck } from "./crosscheck-text.ts";
import type { Summary } from "../run/summary.ts";

const latency = (p50: number, over: Partial<Latency> = {}): Latency => ({ p50, p90: p50 * 1.1, p95: p50 * 1.2, p99: p50 * 1.5, max: p50 * 2, ...over });

function figures(over: Partial<LoadFigures> = {}): LoadFigures {
  return { requests: 1500, ratePerS: 300, errorRate: 0, failed: 0, durationS: 5, dropped: 0, latency: latency(22), steps: {}, ...over };
}

const rowOf = (edge: LoadFigures, k6: LoadFigures, metric: string, step: string | null = null) =>
  crosscheck(edge, k6).rows.find((r) => r.metric === metric && r.step === step)!;

describe("crosscheck verdicts", () => {
  // [what the row means, metric, edge figures, k6 figures, expected verdict, expected tolerance]
  it.each([
    [
      "p50 3 ms apart at 22 ms: the 3 ms floor holds (10% would be 2.2 ms)",
      "p50",
      figures({ latency: latency(25) }),
      figures({ latency: latency(22) }),
      "agree",
      3,
    ],
    ["p50 just over 3 ms apart at 22 ms disagrees", "p50", figures({ latency: latency(25.01) }), figures({ latency: latency(22) }), "disagree", 3],
    ["p50 19 ms apart at 200 ms: 10% of k6's (20 ms) holds", "p50", figures({ latency: latency(219) }), figures({ latency: latency(200) }), "agree", 20],
    ["p50 21 ms apart at 200 ms disagrees", "p50", figures({ latency: latency(221) }), figures({ latency: latency(200) }), "disagree", 20],
    ["edgeload lower than k6 counts the same as higher", "p50", figures({ latency: latency(19) }), figures({ latency: latency(22) }), "agree", 3],
    [
      "p95 4.5 ms apart at 26 ms: the tail's 5 ms floor holds",
      "p95",
      figures({ latency: latency(22, { p95: 30.5 }) }),
      figures({ latency: latency(22, { p95: 26 }) }),
      "agree",
      5,
    ],
    [
      "p95 5.5 ms apart at 26 ms disagrees",
      "p95",
      figures({ latency: latency(22, { p95: 31.5 }) }),
      figures({ latency: latency(22, { p95: 26 }) }),
      "disagree",
      5,
    ],
    [
      "p99 9 ms apart at 50 ms: 20% of k6's (10 ms) holds",
      "p99",
      figures({ latency: latency(22, { p99: 59 }) }),
      figures({ latency: latency(22, { p99: 50 }) }),
      "agree",
      10,
    ],
    [
      "max 40 ms apart at 100 ms: one sample each, 50% holds",
      "max",
      figures({ latency: latency(22, { max: 140 }) }),
      figures({ latency: latency(22, { max: 100 }) }),
      "agree",
      50,
    ],
    ["requests 1500 vs 1501: k6 started one more at the end", "requests", figures(), figures({ requests: 1501 }), "agree", 15.01],
    ["requests 1% apart is the limit", "requests", figures({ requests: 1515 }), figures({ requests: 1500 }), "agree", 15],
    ["requests 1.1% apart disagree", "requests", figures({ requests: 1517 }), figures({ requests: 1500 }), "disagree", 15],
    ["20 vs 21 requests: at small counts one request is the floor", "requests", figures({ requests: 20 }), figures({ requests: 21 }), "agree", 1],
    ["achieved rate 2% apart agrees", "rate", figures({ ratePerS: 300 }), figures({ ratePerS: 294 }), "agree", 8.82],
    ["error rate 0% on both sides", "error_rate", figures(), figures(), "agree", 0.001],
    [
      "1% vs 1.5% of 1000 requests each: within 3 standard errors",
      "error_rate",
      figures({ requests: 1000, errorRate: 0.01 }),
      figures({ requests: 1000, errorRate: 0.015 }),
      "agree",
      3 * Math.sqrt(0.0125 * 0.9875 * (2 / 1000)),
    ],
    [
      "1% vs 1.5% of 10000 requests each: beyond sampling noise",
      "error_rate",
      figures({ requests: 10_000, errorRate: 0.01 }),
      figures({ requests: 10_000, errorRate: 0.015 }),
      "disagree",
      3 * Math.sqrt(0.0125 * 0.9875 * (2 / 10_000)),
    ],
  ] as const)("%s", (_meaning, metric, edge, k6, verdict, tolerance) => {
    const row = rowOf(edge, k6, metric);
    expect(row.verdict).toBe(verdict);
    expect(row.tolerance).toBeCloseTo(tolerance, 9);
    expect(row.difference).toBeCloseTo((row.edge ?? 0) - (row.k6 ?? 0), 9);
  });

  it("calls a figure k6 does not report n/a, says why, and does not let it decide the verdict", () => {
    const result = crosscheck(figures(), figures({ latency: latency(22, { p99: null }) }));
    expect(result.rows.find((r) => r.metric === "p99")).toMatchObject({ verdict: "n/a", k6: null, difference: null });
    expect(result.verdict).toBe("agree");
    expect(result.notes.join("\n")).toMatch(/no p99 of http_req_duration: set summaryTrendStats/);
  });

  it("passes a comparison whose every row agrees, even with a row k6 has no figure for", () => {
    expect(crosscheck(figures(), figures()).outcome).toEqual({ kind: "passed" });
    expect(crosscheck(figures(), figures({ latency: latency(22, { p99: null }) })).outcome.kind).toBe("passed");
  });

  it.each([
    // [what was compared, edge figures, k6 figures, why]
    [
      "two empty readings",
      figures({ requests: 0, ratePerS: 0, latency: latency(0, { p50: null, p90: null, p95: null, p99: null, max: null }) }),
      figures({ requests: 0, ratePerS: 0, latency: latency(0, { p50: null, p90: null, p95: null, p99: null, max: null }) }),
      "0 = 0 agrees about nothing",
    ],
    [
      "k6 read nothing",
      figures(),
      figures({ requests: 0, ratePerS: 0, latency: latency(0, { p50: null, p90: null, p95: null, p99: null, max: null }) }),
      "a k6 run that sent nothing",
    ],
  ] as const)("is inconclusive, never agree, for %s", (_what, edge, k6, _why) => {
    const result = crosscheck(edge, k6);
    if (result.outcome.kind === "failed") return; // a disagreement is established as well: not a pass either
    expect(result.outcome.kind).toBe("inconclusive");
    expect(result.verdict).not.toBe("agree");
  });

  it("compares the steps both tools name, with requests and p50/p95/p99 each", () => {
    const edge = figures({ steps: { authorize: { requests: 100, latency: latency(10) }, verify: { requests: 100, latency: latency(30) } } });
    const k6 = figures({ steps: { verify: { requests: 100, latency: latency(40) }, token: { requests: 100, latency: latency(5) } } });
    const result = crosscheck(edge, k6);
    expect(result.rows.filter((r) => r.step !== null).map((r) => `${r.step}:${r.metric}:${r.verdict}`)).toEqual([
      "verify:requests:agree",
      "verify:p50:disagree",
      "verify:p95:disagree",
      "verify:p99:disagree",
    ]);
    expect(result.verdict).toBe("disagree");
  });

  it("warns that a p99 of a few hundred requests rests on a handful of samples", () => {
    expect(crosscheck(figures({ requests: 500 }), figures({ requests: 501 })).notes).toContain(
      "p99 rests on the slowest 5 of 500 requests: its row says little; run longer or faster to judge the tail",
    );
    expect(crosscheck(figures(), figures()).notes.join()).not.toMatch(/p99 rests/);
  });

  it("notes iterations either tool dropped: it sent less load than planned", () => {
    const result = crosscheck(figures({ dropped: 3 }), figures({ dropped: 7 }));
    expect(result.notes).toEqual(expect.arrayContaining([expect.stringMatching(/^edgeload dropped 3/), expect.stringMatching(/^k6 dropped 7/)]));
  });

  it("names every rule it used with its reason, once", () => {
    const result = crosscheck(figures(), figures());
    expect(result.rules.map((r) => r.rule)).toEqual(Object.values(TOLERANCES).map((t) => t.rule));
    expect(result.rules.every((r) => r.reason.length > 40)).toBe(true);
  });

  it("agrees with itself whatever the figures (property)", () => {
    const ms = fc.double({ min: 0.1, max: 10_000, noNaN: true });
    const load = fc.record({
      requests: fc.integer({ min: 1, max: 10_000_000 }),
      ratePerS: fc.double({ min: 0.1, max: 100_000, noNaN: true }),
      errorRate: fc.double({ min: 0, max: 1, noNaN: true }),
      latency: fc.record({ p50: ms, p90: ms, p95: ms, p99: ms, max: ms }),
    });
    fc.assert(
      fc.property(load, (l) => {
        const f = figures({ ...l, failed: Math.round(l.errorRate * l.requests) });
        return crosscheck(f, f).rows.every((r) => r.verdict === "agree" && r.difference === 0);
      }),
    );
  });
});

describe("edgeFigures", () => {
  it("reads the run summary's k6 metrics and per-step breakdown", () => {
    const trend = { avg: 23, min: 20, med: 22.98, max: 40, "p(90)": 25, "p(95)": 26.05, "p(99)": 32.9 };
    const summary = {
      metrics: {
        http_reqs: { count: 1500, rate: 300 },
        http_req_failed: { passes: 3, fails: 1497, value: 0.002 },
        http_req_duration: trend,
        dropped_iterations: { count: 0, rate: 0 },
      },
      edgeload: { durationS: 5, steps: { default: { requests: 1500, http_req_duration: trend } } },
    } as unknown as Summary;
    expect(edgeFigures(summary)).toEqual({
      requests: 1500,
      ratePerS: 300,
      errorRate: 0.002,
      failed: 3,
      durationS: 5,
      dropped: 0,
      latency: { p50: 22.98, p90: 25, p95: 26.05, p99: 32.9, max: 40 },
      steps: { default: { requests: 1500, latency: { p50: 22.98, p90: 25, p95: 26.05, p99: 32.9, max: 40 } } },
      clockResolutionMs: null,
    });
  });
});

describe("clock steps in the tolerances", () => {
  it.each([
    // [edgeload's clock ms, edge p50, k6 p50, verdict, why]
    [1, 3.9, 1.0, "agree", "3 ms floor: 2.9 ms apart agrees, the clocks do not matter"],
    [10, 12, 1.0, "disagree", "a 10 ms clock raises the floor to 10.001 ms: 11 ms apart still disagrees"],
    [10, 10.9, 1.0, "agree", "a 10 ms clock: 9.9 ms apart is within one step of each clock"],
    [null, 3.9, 1.0, "agree", "an old summary without a detected clock keeps the floors"],
  ])("edge clock %s ms, p50 %d vs %d → %s (%s)", (clockMs, edgeP50, k6P50, verdict, _why) => {
    const edge = { ...figures({ latency: { ...latency(edgeP50), p50: edgeP50 } }), clockResolutionMs: clockMs };
    const k6 = figures({ latency: { ...latency(k6P50), p50: k6P50 } });
    const p50 = crosscheck(edge, k6).rows.find((r) => r.metric === "p50" && r.step === null)!;
    expect(p50.verdict).toBe(verdict);
  });

  it("says how closely the two clocks let latencies agree", () => {
    const notes = crosscheck({ ...figures({}), clockResolutionMs: 1 }, figures({})).notes;
    expect(notes).toContain("clocks: edgeload timed with 1 ms steps, k6 with 1 µs: no latency row can agree more closely than 1.001 ms");
  });
});

describe("renderCrosscheck", () => {
  it("prints a row per figure with both readings, the difference, the tolerance and the verdict", () => {
    const text = renderCrosscheck(crosscheck(figures({ latency: latency(26) }), figures({ latency: latency(22) })));
    expect(text).toMatch(/^\s+edgeload\s+k6\s+Δ \(edge − k6\)\s+tolerance\s+verdict$/m);
    expect(text).toMatch(/^p50\s+26\.00 ms\s+22\.00 ms\s+\+4\.00 ms\s+±3\.00 ms max\(3 ms, 10% of k6's\)\s+disagree$/m);
    expect(text).toMatch(/^requests\s+1500\s+1500\s+0\s+±15 max\(1 request, 1%\)\s+agree$/m);
    expect(text).toMatch(/^verdict: disagree \(\d+ of \d+ rows outside their tolerance\)$/m);
    expect(text).toContain(`  ${TOLERANCES.median.rule}: ${TOLERANCES.median.reason}`);
  });
});
