import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareRuns, parseCompareOptions, type Comparison, type MetricComparison } from "./compare.ts";
import { proportionDifference, seededRandom } from "./comparison-statistics.ts";
import { Histogram } from "../metrics/histogram.ts";
import type { HistogramRow, QueryInput, WindowRow } from "./query.ts";

interface Synthetic {
  readonly requests: number;
  readonly seed: number;
  /** Latency multiplier: 1.2 is a run 20% slower throughout. */
  readonly scale?: number;
  readonly errorRate?: number;
  readonly droppedShare?: number;
  readonly regions?: readonly string[];
}

const SECONDS = 10;

/**
 * A run's stored rows, drawn from seeded random samples: lognormal latency (median 20 ms,
 * σ 0.3, a typical API's shape), Bernoulli failures and drops, spread over 10 one-second
 * windows and the regions.
 */
function syntheticRun({ requests, seed, scale = 1, errorRate = 0.01, droppedShare = 0.005, regions = ["weur", "wnam"] }: Synthetic): QueryInput {
  const rng = seededRandom(seed);
  const windows: WindowRow[] = [];
  const histograms: HistogramRow[] = [];
  const cells = SECONDS * regions.length;
  for (let cell = 0; cell < cells; cell++) {
    const region = regions[cell % regions.length]!;
    const windowS = Math.floor(cell / regions.length);
    const due = Math.floor(requests / cells) + (cell < requests % cells ? 1 : 0);
    const h = new Histogram();
    let sent = 0;
    let failed = 0;
    let dropped = 0;
    for (let i = 0; i < due; i++) {
      if (rng.next() < droppedShare) {
        dropped++;
        continue;
      }
      sent++;
      h.record(scale * 20_000 * Math.exp(0.3 * rng.normal()));
      if (rng.next() < errorRate) failed++;
    }
    windows.push({
      window_s: windowS,
      region,
      step: "GET /",
      requests: sent,
      iterations: sent,
      failed,
      dropped,
      timeouts: 0,
      connection_errors: 0,
      status_4xx: 0,
      status_5xx: failed,
      statuses_json: JSON.stringify({ 200: sent - failed, 500: failed }),
    });
    histograms.push({
      window_s: windowS,
      region,
      step: "GET /",
      metric: "http_req_duration",
      count: h.count,
      sum_us: Math.round(h.sum),
      min_us: h.min,
      max_us: h.max,
      buckets: JSON.stringify(h.buckets()),
    });
  }
  return { windows, histograms, shards: [], durationS: SECONDS };
}

const metric = (c: Comparison, name: MetricComparison["metric"], region = "all") => c.metrics.find((m) => m.metric === name && m.region === region)!;
const verdicts = (c: Comparison) => Object.fromEntries(c.metrics.map((m) => [`${m.region} ${m.metric}`, m.verdict]));

describe("compareRuns on synthetic runs", () => {
  it.each([
    // [requests, what the row shows]
    [200, "small runs: p99 rests on two requests, its interval is wide and never crosses the minimum"],
    [200_000, "large runs: intervals are tight, and the same distribution stays inside them"],
  ])("two runs from the same distribution are unchanged (%i requests; %s)", (requests) => {
    const result = compareRuns(syntheticRun({ requests, seed: 1 }), syntheticRun({ requests, seed: 2 }));
    expect(result.verdict).toBe("unchanged");
    expect(new Set(Object.values(verdicts(result)))).toEqual(new Set(["unchanged"]));
    expect(result.regions.map((r) => r.region)).toEqual(["all", "weur", "wnam"]);
    expect(result.metrics).toHaveLength(3 * 6);
  });

  it.each([
    // [requests, latency scale, expected overall verdict, metrics of "all" that must carry it]
    [200, 1.2, "regressed", ["p50", "mean"]], // 20% slower: clear even on 200 requests at the median and mean
    [200_000, 1.2, "regressed", ["p50", "p95", "p99", "mean"]], // and at every percentile on a large run
    [200, 0.8, "improved", ["p50", "mean"]], // 20% faster
    [200_000, 0.8, "improved", ["p50", "p95", "p99", "mean"]],
  ] as const)("%i requests at ×%d latency: %s", (requests, scale, verdict, metrics) => {
    const result = compareRuns(syntheticRun({ requests, seed: 1 }), syntheticRun({ requests, seed: 2, scale }));
    expect(result.verdict).toBe(verdict);
    for (const m of metrics) {
      const row = metric(result, m);
      expect(row.verdict, m).toBe(verdict);
      expect(row.relativeChange!, m).toBeCloseTo(scale - 1, 1);
      // The whole interval lies beyond the practical minimum, on the verdict's side.
      if (verdict === "regressed") expect(row.interval![0], m).toBeGreaterThan(row.minEffect);
      else expect(row.interval![1], m).toBeLessThan(-row.minEffect);
    }
    // Rates did not move, so nothing there may take the blame.
    expect(metric(result, "error_rate").verdict).toBe("unchanged");
  });

  it.each([
    // [requests, baseline error rate, candidate error rate, verdict, test used]
    [2_000, 0.01, 0.01, "unchanged", "z-test"], // 1% vs 1%: same rate, different draws
    [200_000, 0.01, 0.01, "unchanged", "z-test"],
    [2_000, 0.01, 0.05, "regressed", "z-test"], // 1% vs 5% is clear on 2 000 requests
    [200_000, 0.01, 0.05, "regressed", "z-test"],
    [200_000, 0.05, 0.01, "improved", "z-test"],
    [200, 0, 0.05, "regressed", "fisher-exact"], // 0 vs ~10 failures: few counts, exact test
    [200, 0.01, 0.01, "unchanged", "fisher-exact"],
  ] as const)("%i requests, error rate %d → %d: %s", (requests, before, after, verdict, method) => {
    const result = compareRuns(syntheticRun({ requests, seed: 3, errorRate: before }), syntheticRun({ requests, seed: 4, errorRate: after }));
    const row = metric(result, "error_rate");
    expect(row.verdict).toBe(verdict);
    expect(row.method).toBe(method);
    expect(result.verdict).toBe(verdict);
  });

  it("calls a real but tiny shift on a huge run unchanged, because of the practical minimum", () => {
    const baseline = syntheticRun({ requests: 200_000, seed: 5 });
    const candidate = syntheticRun({ requests: 200_000, seed: 6, scale: 1.005 });
    const result = compareRuns(baseline, candidate);
    const mean = metric(result, "mean");
    // Statistically it is there: the whole interval is above zero…
    expect(mean.interval![0]).toBeGreaterThan(0);
    expect(mean.relativeChange!).toBeCloseTo(0.005, 2);
    // …but 0.5% of 20 ms is far below max(5%, 1 ms): nobody should be paged for it.
    expect(result.verdict).toBe("unchanged");
    // Without the minimum, the same data is a regression: the minimum is what decided.
    const strict = compareRuns(baseline, candidate, { minRelative: 0, minLatencyMs: 0 });
    expect(metric(strict, "mean").verdict).toBe("regressed");
  });

  it("does not count a latency change smaller than a step of the runs' clock", () => {
    // 20 ms runs 5% apart (1 ms): beyond max(5%, 1 ms) with a microsecond clock…
    const baseline = syntheticRun({ requests: 50_000, seed: 5 });
    const candidate = syntheticRun({ requests: 50_000, seed: 6, scale: 1.08 });
    const fine = compareRuns({ ...baseline, clockResolutionMs: 0.001 }, { ...candidate, clockResolutionMs: 0.001 }, { minRelative: 0 });
    expect(metric(fine, "mean").verdict).toBe("regressed");
    expect(fine.notes).toContain("the runs were timed with a 0.001 ms clock: the latency minimum of 1 ms is at least one step of it");
    // …but not when one run's clock moved in 10 ms steps: the change is inside one step.
    const coarse = compareRuns({ ...baseline, clockResolutionMs: 1 }, { ...candidate, clockResolutionMs: 10 }, { minRelative: 0 });
    expect(metric(coarse, "mean").verdict).toBe("unchanged");
    expect(metric(coarse, "mean").minEffect).toBe(10);
    expect(coarse.notes).toContain("the runs were timed with a 10 ms clock: latency changes under 10 ms are not counted (asked: 1 ms)");
  });

  it("flags a rise in the dropped share like one in the error rate", () => {
    const result = compareRuns(
      syntheticRun({ requests: 20_000, seed: 7, droppedShare: 0.005 }),
      syntheticRun({ requests: 20_000, seed: 8, droppedShare: 0.03 }),
    );
    expect(metric(result, "dropped_share").verdict).toBe("regressed");
    expect(metric(result, "dropped_share").baseline!).toBeCloseTo(0.005, 2);
  });

  it("is reproducible: the same runs and seed give the same figures", () => {
    const a = syntheticRun({ requests: 5_000, seed: 9 });
    const b = syntheticRun({ requests: 5_000, seed: 10, scale: 1.03 });
    expect(compareRuns(a, b)).toEqual(compareRuns(a, b));
    // Another seed moves the interval a little (percentiles move by whole buckets; the mean does not).
    expect(metric(compareRuns(a, b, { seed: 2 }), "mean").interval).not.toEqual(metric(compareRuns(a, b), "mean").interval);
  });

  it("compares only the regions both runs have, says which it left out, and cannot pass without them", () => {
    const result = compareRuns(syntheticRun({ requests: 2_000, seed: 11 }), syntheticRun({ requests: 2_000, seed: 12, regions: ["weur", "apac"] }));
    expect(result.regions.map((r) => r.region)).toEqual(["all", "weur"]);
    expect(result.notes).toEqual(["region wnam is only in the baseline: not compared", "region apac is only in the candidate: not compared"]);
    expect(result.outcome).toEqual({ kind: "inconclusive", reasons: result.notes });
    expect(result.verdict).toBe("no-data");
  });

  it.each([
    // [baseline requests, candidate requests, why]
    [0, 0, "two runs with no rows: nothing to compare"],
    [2_000, 0, "a candidate that measured nothing"],
    [0, 2_000, "a baseline that measured nothing"],
  ])("is inconclusive, never unchanged, for %i against %i requests (%s)", (a, b) => {
    const empty: QueryInput = { windows: [], histograms: [], shards: [], durationS: SECONDS };
    const run = (n: number, seed: number) => (n ? syntheticRun({ requests: n, seed }) : empty);
    const result = compareRuns(run(a, 31), run(b, 32));
    expect(result.outcome.kind).toBe("inconclusive");
    expect(result.verdict).toBe("no-data");
  });

  it("passes a comparison in which every metric of every region was compared", () => {
    const result = compareRuns(syntheticRun({ requests: 2_000, seed: 41 }), syntheticRun({ requests: 2_000, seed: 42 }));
    expect(result.outcome).toEqual({ kind: "passed" });
  });

  // The cost is per bucket: resampling 2 × 5 million requests 1 000 times, one by one, is
  // 10^10 draws, far past the test's timeout; per bucket it is ~1 800 per resample. The
  // generous timeout is the bound: a timing figure belongs in a bench on a shared machine.
  it("stays fast for millions of requests: the cost is per bucket, not per request", { timeout: 60_000 }, () => {
    // 5 million requests per run over ~1 800 buckets (1 ms to 10 s), one region.
    const wide = (seed: number): QueryInput => {
      const rng = seededRandom(seed);
      const h = new Histogram();
      for (let i = 0; i < 50_000; i++) h.record(1000 * Math.exp(rng.next() * Math.log(10_000)));
      const buckets = h.buckets().map(([v, c]) => [v, c * 100]);
      const row = { window_s: 0, region: "wnam", step: "GET /" };
      return {
        windows: [
          {
            ...row,
            requests: h.count * 100,
            iterations: h.count * 100,
            failed: 0,
            dropped: 0,
            timeouts: 0,
            connection_errors: 0,
            status_4xx: 0,
            status_5xx: 0,
            statuses_json: "{}",
          },
        ],
        histograms: [
          { ...row, metric: "http_req_duration", count: h.count * 100, sum_us: h.sum * 100, min_us: h.min, max_us: h.max, buckets: JSON.stringify(buckets) },
        ],
        shards: [],
        durationS: 1,
      };
    };
    const a = wide(13);
    const b = wide(14);
    expect(JSON.parse(a.histograms[0]!.buckets).length).toBeGreaterThan(1500);
    const result = compareRuns(a, b);
    expect(result.regions[0]!.baselineRequests).toBe(5_000_000);
    expect(result.verdict).toBe("unchanged");
  });

  it("finds nothing between a run and itself, whatever the run (property)", { timeout: 60_000 }, () => {
    const run = fc.record({
      requests: fc.integer({ min: 1, max: 3_000 }),
      seed: fc.integer({ min: 0, max: 2 ** 31 }),
      scale: fc.double({ min: 0.01, max: 50, noNaN: true }),
      errorRate: fc.double({ min: 0, max: 1, noNaN: true }),
      droppedShare: fc.double({ min: 0, max: 0.5, noNaN: true }),
    });
    fc.assert(
      fc.property(run, (spec) => {
        const input = syntheticRun(spec);
        const result = compareRuns(input, input, { resamples: 200 });
        // Never a change; a region whose every request was dropped has no latency, which is
        // not comparable (no-data, inconclusive), never unchanged.
        const gaps = result.metrics.some((m) => m.verdict === "no-data");
        expect(result.metrics.filter((m) => m.verdict === "regressed" || m.verdict === "improved")).toEqual([]);
        expect(result.verdict).toBe(gaps ? "no-data" : "unchanged");
        expect(result.outcome.kind).toBe(gaps ? "inconclusive" : "passed");
        for (const m of result.metrics) {
          if (m.interval) {
            expect(m.interval[0]).toBeLessThanOrEqual(0);
            expect(m.interval[1]).toBeGreaterThanOrEqual(0);
          }
        }
      }),
      // The case CI found: two requests, one per region, one dropped — a region with no latency.
      { numRuns: 40, examples: [[{ requests: 2, seed: 0, scale: 0.01, errorRate: 0, droppedShare: 0.09012765903025867 }]] },
    );
  });
});

describe("proportionDifference", () => {
  it.each([
    // [where the figures come from, x1, n1, x2, n2, interval of x2/n2 − x1/n1, p-value, method]
    ["Newcombe 1998, example (a): the published interval; pooled z = 2.65", 48, 80, 56, 70, [0.0524, 0.3339], 0.008, "z-test"],
    ["Newcombe 1998, example (e): no events in either group", 0, 20, 0, 10, [-0.1611, 0.2775], 1, "fisher-exact"],
    ["Fisher's lady tasting tea: the published two-sided p", 1, 4, 3, 4, [-0.1355, 0.7891], 0.4857, "fisher-exact"],
    ["2% vs 4% on 1 000 requests each: pooled z = 2.62", 20, 1000, 40, 1000, [0.005, 0.0357], 0.0088, "z-test"],
  ] as const)("%s", (_source, x1, n1, x2, n2, interval, pValue, method) => {
    const d = proportionDifference(x1, n1, x2, n2, 0.95);
    expect(d.interval[0]).toBeCloseTo(interval[0], 3);
    expect(d.interval[1]).toBeCloseTo(interval[1], 3);
    expect(d.pValue).toBeCloseTo(pValue, 3);
    expect(d.method).toBe(method);
  });
});

describe("parseCompareOptions", () => {
  it.each([
    // [parameters, options read]
    [{}, {}],
    [{ minEffect: "10%" }, { minRelative: 0.1 }],
    [{ minEffect: "0.1" }, { minRelative: 0.1 }], // a bare number is a fraction
    [{ minLatency: "2ms" }, { minLatencyMs: 2 }],
    [{ minLatency: "0.5" }, { minLatencyMs: 0.5 }], // a bare number is ms
    [
      { minRate: "0.5%", confidence: "99%" },
      { minRate: 0.005, confidence: 0.99 },
    ],
    [
      { minEffect: "0%", minLatency: "0ms" },
      { minRelative: 0, minLatencyMs: 0 },
    ], // 0 is a value, not "unset"
  ])("%j", (params, options) => {
    expect(parseCompareOptions(params)).toEqual({ ok: true, options });
  });

  it("reports every bad option, not the first", () => {
    const parsed = parseCompareOptions({ minEffect: "5", minLatency: "soon", minRate: "-1%", confidence: "50%" });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problems.map((p) => p.field)).toEqual(["minEffect", "minRate", "minLatency", "confidence"]);
  });
});
