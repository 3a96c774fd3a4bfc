/**
 * Queries against exact answers computed from the same synthetic samples: per region and
 * per minute percentiles within the histogram's relative bound, totals exact.
 */
import { describe, expect, it } from "vitest";
import { Histogram, RELATIVE_ERROR } from "../metrics/histogram.ts";
import { parseQuery, runQuery, toCsv, type HistogramRow, type Query, type QueryInput, type WindowRow } from "./query.ts";

/** A seeded run: 3 regions × 180 s; latency depends on region and minute. */
function syntheticRun() {
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const regions = ["apac", "weur", "wnam"];
  const samples = new Map<string, number[]>(); // "region|minute" → µs
  const windows: WindowRow[] = [];
  const histograms: HistogramRow[] = [];
  for (let t = 0; t < 180; t++) {
    for (const [ri, region] of regions.entries()) {
      const n = 20 + ((t * 7 + ri) % 13);
      const h = new Histogram();
      let failed = 0;
      for (let i = 0; i < n; i++) {
        const us = Math.round((5_000 + ri * 3_000 + Math.floor(t / 60) * 2_000) * (0.5 + random() * random() * 4));
        h.record(us);
        const key = `${region}|${Math.floor(t / 60)}`;
        (samples.get(key) ?? samples.set(key, []).get(key)!).push(us);
        if (random() < 0.02) failed++;
      }
      windows.push({
        window_s: t,
        region,
        step: "default",
        requests: n,
        iterations: n,
        failed,
        dropped: t % 50 === 0 ? 1 : 0,
        timeouts: 0,
        connection_errors: 0,
        status_4xx: 0,
        status_5xx: failed,
        statuses_json: JSON.stringify({ 200: n - failed, ...(failed ? { 503: failed } : {}) }),
      });
      histograms.push({
        window_s: t,
        region,
        step: "default",
        metric: "http_req_duration",
        count: h.count,
        sum_us: h.sum,
        min_us: h.min,
        max_us: h.max,
        buckets: JSON.stringify(h.buckets()),
      });
    }
  }
  const input: QueryInput = { windows, histograms, shards: [], durationS: 180 };
  return { input, samples, windows };
}

const exactQuantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
};

function query(params: Parameters<typeof parseQuery>[0]): Query {
  const r = parseQuery(params);
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.query;
}

describe("runQuery", () => {
  const { input, samples, windows } = syntheticRun();

  it("gives p50/p95/p99 per region per minute within the histogram's bound of the exact values", () => {
    const rows = runQuery(input, query({ by: "region", every: "1m", metrics: "requests,p50,p95,p99,max" }));
    expect(rows).toHaveLength(9);
    for (const row of rows) {
      const exact = samples.get(`${row.region}|${(row.t as number) / 60}`)!;
      expect(row.requests).toBe(exact.length);
      for (const [metric, q] of [
        ["p50", 0.5],
        ["p95", 0.95],
        ["p99", 0.99],
      ] as const) {
        const want = exactQuantile(exact, q) / 1000;
        expect(Math.abs((row[metric] as number) - want) / want, `${row.region} ${row.t} ${metric}`).toBeLessThanOrEqual(RELATIVE_ERROR + 1e-3);
      }
      expect(row.max).toBe(Math.max(...exact) / 1000);
    }
  });

  it("keeps totals exact: requests, failures, drops and the whole-run rate", () => {
    const [row] = runQuery(input, query({ metrics: "requests,failed,dropped,rps,error_rate" }));
    const requests = windows.reduce((a, w) => a + w.requests, 0);
    const failed = windows.reduce((a, w) => a + w.failed, 0);
    expect(row).toEqual({
      requests,
      failed,
      dropped: windows.reduce((a, w) => a + w.dropped, 0),
      rps: Math.round((requests / 180) * 1000) / 1000,
      error_rate: Math.round((failed / requests) * 1e6) / 1e6,
    });
  });

  it("merges regions bucket by bucket: the global p99 is not the maximum of the regions' p99s", () => {
    const all = runQuery(input, query({ metrics: "p99" }))[0]!.p99 as number;
    const perRegion = runQuery(input, query({ by: "region", metrics: "p99" })).map((r) => r.p99 as number);
    const exact = exactQuantile([...samples.values()].flat(), 0.99) / 1000;
    expect(Math.abs(all - exact) / exact).toBeLessThanOrEqual(RELATIVE_ERROR + 1e-3);
    expect(all).toBeLessThan(Math.max(...perRegion));
  });

  it("groups by status class with counts, and by 10 s buckets in time order", () => {
    const classes = runQuery(input, query({ by: "status_class", metrics: "requests" }));
    expect(classes.map((r) => r.status_class)).toEqual(["2xx", "5xx"]);
    expect(classes.reduce((a, r) => a + (r.requests as number), 0)).toBe(windows.reduce((a, w) => a + w.requests, 0));
    const series = runQuery(input, query({ every: "10s", metrics: "rps" }));
    expect(series.map((r) => r.t)).toEqual(Array.from({ length: 18 }, (_, i) => i * 10));
  });

  it("refuses what the data cannot answer, naming the field", () => {
    const bad = (p: Parameters<typeof parseQuery>[0]) => {
      const r = parseQuery(p);
      return r.ok ? [] : r.problems.map((x) => `${x.field}: ${x.detail}`);
    };
    expect(bad({ by: "shard", every: "1m" })[0]).toMatch(/^every: shard are whole-run groupings/);
    expect(bad({ by: "status_class", metrics: "p95" })[0]).toMatch(/latency is not split by status class/);
    expect(bad({ by: "country" })[0]).toMatch(/"country" is not one of region, step/);
    expect(bad({ every: "1.5s" })[0]).toMatch(/whole seconds/);
    expect(bad({ metrics: "p42" })[0]).toMatch(/"p42" is not one of/);
  });

  it("writes CSV with a header and quoted cells", () => {
    expect(
      toCsv([
        { region: "a,b", p95: 1.5 },
        { region: "c", p95: null },
      ]),
    ).toBe('region,p95\n"a,b",1.5\nc,\n');
  });
});
