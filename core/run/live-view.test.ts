import { describe, expect, it } from "vitest";
import { livePoint, shardHealthRows, shardWindowHealth, windowPoints, withLatePortion } from "./live-view.ts";
import { parseRunSpec } from "../spec/run-spec.ts";
import { MetricStats } from "../metrics/metric-stats.ts";

/** Stats of `n` requests of `durationMs` each (one iteration per request), `failed` of them failed. */
function stats(n: number, durationMs: number, { failed = 0, dropped = 0, lagMs = 1 } = {}): MetricStats {
  const s = new MetricStats();
  for (let i = 0; i < n; i++) {
    s.trends.duration.record(durationMs * 1000);
    s.trends.lag.record(lagMs * 1000);
  }
  Object.assign(s.counters, { sent: n, completed: n, iterations: n, failed, dropped });
  return s;
}

describe("livePoint", () => {
  it("gives a window's totals, percentiles from the merged histograms, and each region's own", () => {
    const point = livePoint(
      3,
      [
        { region: "wnam", stats: stats(90, 10) },
        { region: "wnam", stats: stats(10, 200, { failed: 2 }) }, // a second step of the same region
        { region: "enam", stats: stats(100, 20, { dropped: 5 }) },
      ],
      { ratePerS: 200, vus: null },
    );
    expect(point).toMatchObject({ t: 3, targetRate: 200, targetVUs: null, iterations: 200, requests: 200, failed: 2, dropped: 5 });
    // Merged, not averaged: 90 at 10 ms, 100 at 20 ms, 10 at 200 ms.
    expect(point.p50).toBeCloseTo(20, 0);
    expect(point.p99).toBeCloseTo(200, -1);
    expect(point.regions.wnam).toMatchObject({ requests: 100, failed: 2 });
    expect(point.regions.wnam!.p50).toBeCloseTo(10, 0);
    expect(point.regions.wnam!.p99).toBeCloseTo(200, -1);
    expect(point.regions.enam!.p95).toBeCloseTo(20, 0);
    expect(Object.keys(point.regions)).toEqual(["enam", "wnam"]);
    // Little's law: 90×10 + 10×200 + 100×20 ms of requests in flight over a 1 s window.
    expect(point.inFlight).toBeCloseTo(4.9, 1);
  });

  it("has no percentiles for an empty window", () => {
    const point = livePoint(0, [], { ratePerS: null, vus: 10 });
    expect(point).toMatchObject({ requests: 0, p50: null, p95: null, p99: null, lagP95: null, inFlight: 0, targetVUs: 10, regions: {} });
  });
});

describe("withLatePortion", () => {
  it("adds a late portion's counts exactly and keeps the larger portion's percentiles", () => {
    const target = { ratePerS: 100, vus: null };
    const early = livePoint(5, [{ region: "wnam", stats: stats(95, 10) }], target);
    const late = livePoint(
      5,
      [
        { region: "wnam", stats: stats(5, 500, { failed: 5 }) },
        { region: "weur", stats: stats(3, 30) },
      ],
      target,
    );
    const merged = withLatePortion(early, late);
    expect(merged).toMatchObject({ t: 5, requests: 103, iterations: 103, failed: 5, p95: early.p95 });
    expect(merged.regions.wnam).toMatchObject({ requests: 100, failed: 5, p95: early.regions.wnam!.p95 });
    expect(merged.regions.weur).toEqual(late.regions.weur);
  });
});

describe("shardWindowHealth", () => {
  it("flags a shard that dropped iterations or sent late", () => {
    const toSteps = (s: MetricStats) => [[0, s.toWire()] as const];
    expect(shardWindowHealth(toSteps(stats(50, 10)))).toEqual({ lagP95: 1, dropped: 0, saturated: false, reasons: [] });
    const dropping = shardWindowHealth(toSteps(stats(50, 10, { dropped: 3 })));
    expect(dropping).toMatchObject({ dropped: 3, saturated: true });
    expect(dropping.reasons[0]).toContain("3 iterations dropped");
    const late = shardWindowHealth(toSteps(stats(50, 10, { lagMs: 40 })));
    expect(late.saturated).toBe(true);
    expect(late.lagP95).toBeCloseTo(40, 0);
  });
});

describe("windowPoints", () => {
  it("groups written cells by window and asks the schedule for each window's own second", () => {
    const parsed = parseRunSpec({
      target: "http://127.0.0.1:9",
      steps: [{ path: "/" }],
      executor: "ramping-arrival-rate",
      stages: [{ target: 100, duration: "2s" }],
    });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const points = windowPoints(parsed.spec, [
      { windowS: 1, region: "wnam", stats: stats(10, 5) },
      { windowS: 0, region: "wnam", stats: stats(3, 5) },
      { windowS: 1, region: "enam", stats: stats(20, 5) },
    ]);
    expect(points.map((p) => [p.t, p.requests, Object.keys(p.regions).length])).toEqual([
      [1, 30, 2],
      [0, 3, 1],
    ]);
    // A 0 → 100/s ramp over 2 s asks for 25 in its first second and 75 in its second.
    expect(points.map((p) => p.targetRate)).toEqual([75, 25]);
  });

  it("gives a window past the run's end (its last answers) the rate of the run's last second", () => {
    const parsed = parseRunSpec({ target: "http://127.0.0.1:9", steps: [{ path: "/" }], executor: "constant-arrival-rate", rate: 40, duration: "3s" });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const points = windowPoints(
      parsed.spec,
      [0, 1, 2, 3].map((windowS) => ({ windowS, region: "wnam", stats: stats(windowS === 3 ? 1 : 40, 5) })),
    );
    expect(points.map((p) => p.targetRate)).toEqual([40, 40, 40, 40]);
  });

  it("shows a script's console lines and errors with the run's secrets hidden (issue 48)", () => {
    const parsed = parseRunSpec({
      target: "http://127.0.0.1:9",
      steps: [{ name: "default", path: "/" }],
      executor: "constant-vus",
      vus: 1,
      duration: "1s",
      script: { bundle: "a".repeat(64), env: { API_KEY: "marker-live-1234" } },
    });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const said = stats(1, 5);
    said.script.log("info", "key is marker-live-1234", 1);
    said.script.error("GET http://u:pw@h/x failed with marker-live-1234", "script.js:3");
    const [point] = windowPoints(parsed.spec, [{ windowS: 0, region: "wnam", stats: said }]);
    expect(point!.script!.logSamples.map((l) => l.message)).toEqual(["key is [redacted]"]);
    expect(point!.script!.errorSamples.map((e) => [e.message, e.at])).toEqual([["GET http://[redacted]@h/x failed with [redacted]", "script.js:3"]]);
  });
});

describe("shardHealthRows", () => {
  it("has a row for every planned shard, empty until its first flush", () => {
    const rows = shardHealthRows(
      [
        { index: 0, region: "wnam" },
        { index: 1, region: "enam" },
      ],
      new Map([[1, { lastWindowS: 4, lagP95: 2, dropped: 0, saturated: false, reasons: [] }]]),
      [1],
    );
    expect(rows).toEqual([
      { index: 0, region: "wnam", lastWindowS: null, done: false, lagP95: null, dropped: 0, saturated: false, reasons: [] },
      { index: 1, region: "enam", lastWindowS: 4, done: true, lagP95: 2, dropped: 0, saturated: false, reasons: [] },
    ]);
  });
});
