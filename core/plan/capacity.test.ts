import { describe, expect, it } from "vitest";
import { breakReasons, deriveCapacity, findKnee, ladderVerdict, renderCapacity, stepFromSummary, type LadderStep } from "./capacity.ts";
import type { Summary } from "../run/summary.ts";

/** A step at `rate` that delivered its load cleanly in 10 s; `over` changes what a row needs. */
function step(rate: number, over: Partial<LadderStep> = {}): LadderStep {
  return {
    label: `${rate}/s`,
    ratePerS: rate,
    runId: `run-${rate}`,
    status: "passed",
    targetRatePerS: rate,
    achievedRatePerS: rate,
    p95Ms: 10,
    p99Ms: 20,
    errorRate: 0,
    iterations: rate * 10,
    dropped: 0,
    failedThresholds: [],
    ...over,
  };
}

const RULES = { errorLimit: 0.01 };
const rates = (t: ReturnType<typeof deriveCapacity>) => [t.recommended?.ratePerS ?? null, t.peak?.ratePerS ?? null, t.hardLimit?.ratePerS ?? null];

describe("deriveCapacity", () => {
  it.each([
    // [why, steps, [recommended, peak, hard limit]]
    ["every step passes: the top step is both recommended and peak, no hard limit", [step(100), step(200), step(400)], [400, 400, null]],
    [
      "400/s has 25% errors: it is the hard limit, 200/s the peak and recommended",
      [step(100), step(200), step(400, { errorRate: 0.25, failedThresholds: ["http_req_failed rate<0.01"] })],
      [200, 200, 400],
    ],
    [
      "200/s fails p95 but errs only 0.5%: it is the peak, 100/s is recommended; 400/s breaks",
      [step(100), step(200, { errorRate: 0.005, failedThresholds: ["http_req_duration p(95)<200"] }), step(400, { errorRate: 0.02 })],
      [100, 200, 400],
    ],
    ["exactly at the error limit still counts as under it", [step(100), step(200, { errorRate: 0.01 })], [200, 200, null]],
    ["the generator delivered 150 of 200/s: 200/s is the hard limit though nothing failed", [step(100), step(200, { achievedRatePerS: 150 })], [100, 100, 200]],
    ["5% of 200/s dropped (in-flight cap reached): the hard limit", [step(100), step(200, { iterations: 1900, dropped: 100 })], [100, 100, 200]],
    ["the first step breaks: nothing is recommended and there is no peak", [step(100, { errorRate: 0.5 }), step(200)], [null, null, 100]],
    ["a step after the hard limit that happens to pass does not count", [step(100), step(200, { errorRate: 0.3 }), step(400)], [100, 100, 200]],
    [
      "no step passes its thresholds, none breaks: a peak but no recommendation",
      [step(100, { failedThresholds: ["http_req_duration p(99)<1"] }), step(200, { failedThresholds: ["http_req_duration p(99)<1"] })],
      [null, 200, null],
    ],
  ] as const)("%s", (_why, steps, expected) => {
    expect(rates(deriveCapacity(steps, RULES))).toEqual(expected);
  });

  it("gives each figure its evidence, and the hard limit its reasons", () => {
    const table = deriveCapacity([step(100), step(200, { errorRate: 0.25, p99Ms: 30, failedThresholds: ["http_req_failed rate<0.01"] })], RULES);
    expect(table.peak?.evidence).toMatchObject({ ratePerS: 100, achievedRatePerS: 100, p95Ms: 10, p99Ms: 20, errorRate: 0, failedThresholds: [] });
    expect(table.hardLimit?.evidence).toMatchObject({ ratePerS: 200, p99Ms: 30, errorRate: 0.25, failedThresholds: ["http_req_failed rate<0.01"] });
    expect(table.hardLimit?.reasons).toEqual(["error rate 25.00% over the 1.00% limit"]);
    expect(table.peak?.reasons).toEqual([]);
  });
});

describe("ladderVerdict", () => {
  it.each([
    // [why, steps, verdict]
    ["every step held: the capacity is at least the top step", [step(100), step(200)], "passed"],
    ["200/s broke after 100/s held: a capacity between them", [step(100), step(200, { errorRate: 0.2 })], "passed"],
    ["the first step already broke: the capacity is below the ladder, not a figure", [step(100, { errorRate: 0.2 }), step(200)], "inconclusive"],
    ["no step measured", [], "inconclusive"],
  ] as const)("%s → %s", (_why, steps, kind) => {
    expect(ladderVerdict(deriveCapacity(steps, RULES)).kind).toBe(kind);
  });
});

describe("breakReasons", () => {
  it.each([
    // [why, step, how many reasons]
    ["a clean step holds", step(100), 0],
    ["99.5% delivered with no drops holds (elapsed time includes the drain)", step(100, { achievedRatePerS: 99.5 }), 0],
    ["89% delivered breaks", step(100, { achievedRatePerS: 89 }), 1],
    ["errors and drops over the limit are two reasons", step(100, { errorRate: 0.2, dropped: 500, iterations: 500 }), 2],
  ] as const)("%s", (_why, s, count) => {
    expect(breakReasons(s, RULES)).toHaveLength(count);
  });

  it("takes a zero error limit literally: one failure breaks", () => {
    expect(breakReasons(step(100, { errorRate: 0.001 }), { errorLimit: 0 })).toHaveLength(1);
  });
});

describe("findKnee", () => {
  it.each([
    // [why, steps (rate, p99 ms), knee rate]
    [
      "p99 flat while the rate doubles: no knee",
      [
        [100, 20],
        [200, 21],
        [400, 22],
      ],
      null,
    ],
    [
      "p99 ×3 while the rate ×2 at 400/s: the knee is 400/s",
      [
        [100, 20],
        [200, 24],
        [400, 72],
      ],
      400,
    ],
    [
      "p99 grows as fast as the rate, not faster: no knee",
      [
        [100, 20],
        [200, 40],
      ],
      null,
    ],
    [
      "the first step that qualifies wins",
      [
        [100, 10],
        [150, 30],
        [200, 90],
      ],
      150,
    ],
    [
      "sub-millisecond p99s tripling are timer jitter, not a knee",
      [
        [50, 0.3],
        [100, 0.9],
      ],
      null,
    ],
    [
      "a step without latency samples is skipped: 100 → 400/s compared directly",
      [
        [100, 20],
        [200, null],
        [400, 100],
      ],
      400,
    ],
  ] as const)("%s", (_why, points, knee) => {
    const steps = points.map(([rate, p99]) => step(rate, { p99Ms: p99 }));
    expect(findKnee(steps)?.ratePerS ?? null).toBe(knee);
  });

  it("records the growth it saw", () => {
    expect(findKnee([step(100, { p99Ms: 20 }), step(200, { p99Ms: 60 })])).toMatchObject({
      previousRatePerS: 100,
      previousP99Ms: 20,
      p99Ms: 60,
      p99Growth: 3,
      rateGrowth: 2,
    });
  });
});

describe("stepFromSummary", () => {
  it("reads the figures of a run summary", () => {
    const summary = {
      metrics: {
        http_req_duration: { "p(95)": 12.5, "p(99)": 30.25 },
        http_req_failed: { value: 0.02 },
        iterations: { count: 990 },
        dropped_iterations: { count: 10 },
      },
      edgeload: {
        runId: "r1",
        status: "failed",
        targetRatePerS: 100,
        achievedRatePerS: 99,
        clock: { resolutionMs: 1 },
        thresholds: [
          { metric: "http_req_failed", threshold: "rate<0.01", observed: 0.02, ok: false, abortOnFail: false },
          { metric: "http_req_duration", threshold: "p(95)<200", observed: 12.5, ok: true, abortOnFail: false },
        ],
      },
    } as unknown as Summary;
    expect(stepFromSummary("rps100", 100, summary)).toEqual({
      label: "rps100",
      ratePerS: 100,
      runId: "r1",
      status: "failed",
      targetRatePerS: 100,
      achievedRatePerS: 99,
      p95Ms: 12.5,
      p99Ms: 30.25,
      errorRate: 0.02,
      iterations: 990,
      dropped: 10,
      failedThresholds: ["http_req_failed rate<0.01"],
      clockResolutionMs: 1,
    });
  });

  it("has no latency figures when nothing completed", () => {
    const summary = {
      metrics: { http_req_failed: { value: 0 } },
      edgeload: { runId: "r2", status: "error", targetRatePerS: 100, achievedRatePerS: 0, thresholds: [] },
    } as unknown as Summary;
    expect(stepFromSummary("100/s", 100, summary)).toMatchObject({ p95Ms: null, p99Ms: null, iterations: 0, dropped: 0 });
  });
});

describe("renderCapacity", () => {
  it("names each figure with its rate and says why the hard limit broke", () => {
    const text = renderCapacity(deriveCapacity([step(100), step(200, { errorRate: 0.25 })], RULES));
    expect(text).toMatch(/recommended\s+100\s/);
    expect(text).toMatch(/peak\s+100\s/);
    expect(text).toMatch(/hard limit\s+200\s.*run-200/);
    expect(text).toMatch(/200\/s\s+200\s.*error rate 25\.00% over the 1\.00% limit/);
    expect(text).toContain("knee      none within the ladder");
  });

  it("prints latencies to the step of the clock that timed them", () => {
    const timed = (clockResolutionMs: number | null) => renderCapacity(deriveCapacity([step(100, { p95Ms: 13.024, p99Ms: 21.504, clockResolutionMs })], RULES));
    // workerd's 1 ms clock: 13.024 ms was "13 ms".
    expect(timed(1)).toMatch(/100\/s\s+100\s+100\.0\s+13ms\s+22ms\s/);
    // A clock not detected: the digits as measured.
    expect(timed(null)).toMatch(/100\/s\s+100\s+100\.0\s+13\.0ms\s+21\.5ms\s/);
  });

  it("says when a figure has no step", () => {
    const text = renderCapacity(deriveCapacity([step(100, { errorRate: 0.5 })], RULES));
    expect(text).toMatch(/recommended\s+none/);
    expect(text).toMatch(/hard limit\s+100\s/);
    expect(renderCapacity(deriveCapacity([step(100)], RULES))).toMatch(/hard limit\s+not reached/);
  });
});
