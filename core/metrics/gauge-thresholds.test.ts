/**
 * Thresholds on gauges, as k6 has them: `value` (the last one set) alone; a custom Gauge's
 * last value merged across windows and shards (gauge-last.ts), k6's vus and vus_max read off
 * the plan where it fixes them (core/run/vu-gauges.ts).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseRunSpec } from "../spec/run-spec.ts";
import { RunTotals } from "../run/run-totals.ts";
import { thresholdOutcomes } from "../run/run-thresholds.ts";
import { k6Metrics } from "../run/summary-k6-metrics.ts";
import { laterGauge, recordedGauge, type GaugeLast } from "./gauge-last.ts";
import { MetricStats } from "./metric-stats.ts";
import { parseThresholds, type ThresholdInput } from "./thresholds.ts";

describe("a gauge's last value", () => {
  it.each([
    // Set later wins, whichever side it is on.
    [
      [1_000, 5],
      [1_002, 3],
      [1_002, 3],
    ],
    [
      [1_002, 3],
      [1_000, 5],
      [1_002, 3],
    ],
    // Two shards in the same millisecond: the larger.
    [
      [1_000, 5],
      [1_000, 3],
      [1_000, 5],
    ],
    [
      [1_000, -1],
      [1_000, 2],
      [1_000, 2],
    ],
  ] as Array<[GaugeLast, GaugeLast, GaugeLast]>)("merges %j and %j into %j", (a, b, merged) => {
    expect(laterGauge(a, b)).toEqual(merged);
  });

  it("within a shard, a sample replaces the kept value unless that was set later (k6 keeps the last sample)", () => {
    expect(recordedGauge([1_000, 5], 1_000, 3)).toEqual([1_000, 3]);
    expect(recordedGauge([1_001, 5], 1_000, 3)).toEqual([1_001, 5]);
    expect(recordedGauge(undefined, 1_000, 3)).toEqual([1_000, 3]);
  });

  it("merges in any order and grouping to the same value", () => {
    const gauge = fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: -3, max: 3 }));
    fc.assert(
      fc.property(gauge, gauge, gauge, (a, b, c) => {
        expect(laterGauge(laterGauge(a, b), c)).toEqual(laterGauge(a, laterGauge(b, c)));
        expect(laterGauge(a, b)).toEqual(laterGauge(b, a));
      }),
    );
  });

  it("travels with MetricStats' wire form and merges there as in memory", () => {
    const a = new MetricStats();
    a.custom.gauge("depth", 7, 2_000);
    const b = new MetricStats();
    b.custom.gauge("depth", 9, 1_000);
    const merged = MetricStats.fromWire(b.toWire()).mergeWire(a.toWire());
    expect(merged.custom.gauges.get("depth")).toEqual([2_000, 7]);
    expect(new MetricStats().merge(b).merge(a).custom.gauges.get("depth")).toEqual([2_000, 7]);
    expect(merged.isEmpty).toBe(false);
  });
});

describe("parsing thresholds on gauges", () => {
  const custom = { depth: "gauge", waited: "trend" } as const;
  const parse = (input: Record<string, ThresholdInput[]>) => parseThresholds(input, custom);

  it.each([
    [{ depth: ["value<100"] }],
    [{ vus: ["value>=10"], vus_max: ["value==10"] }],
    // A gauge's last value per step, region or scenario: the run's cells.
    [{ "depth{step:login}": ["value<100"], "depth{scenario:default}": ["value<5"] }],
  ])("accepts %j", (input) => {
    expect(parse(input)).toMatchObject({ ok: true });
  });

  it.each([
    // k6 refuses at start an aggregation its gauges do not have ...
    [{ depth: ["max<100"] }, 'thresholds.depth[0]: "max" does not apply to a gauge metric; use value'],
    // ... and `value` on anything but a gauge.
    [{ waited: ["value<100"] }, 'thresholds.waited[0]: "value" does not apply to a trend metric; use avg, min, max, med, p(N)'],
    [{ vus: ["p(95)<3"] }, 'thresholds.vus[0]: "p(95)" does not apply to a gauge metric; use value'],
    // The plan's VU counts have no tags; a custom gauge keeps no value per any other tag.
    [{ "vus{scenario:a}": ["value>0"] }, "thresholds.vus{scenario:a}: vus: the run's VU count has no tags here"],
    [{ "depth{name:home}": ["value<1"] }, "thresholds.depth{name:home}: depth: a gauge's last value is kept per step, region and scenario only"],
  ])("refuses %j, naming why", (input, message) => {
    const r = parse(input);
    expect(r.ok ? [] : r.errors).toEqual([expect.stringContaining(message)]);
  });
});

describe("evaluating thresholds on gauges", () => {
  function spec(load: Record<string, unknown>, thresholds: Record<string, string[]>) {
    const r = parseRunSpec({
      target: "http://127.0.0.1:9090",
      steps: [{ path: "/" }],
      metrics: { depth: { type: "gauge", time: false } },
      thresholds,
      ...load,
    });
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    return r.spec;
  }
  const constant = { executor: "constant-vus", vus: 5, duration: "10s" };

  it("judges a custom gauge on the value set last across shards, not its largest or first", () => {
    const totals = new RunTotals();
    const shard = (index: number, sets: Array<[atMs: number, value: number]>) => {
      const s = new MetricStats();
      for (const [atMs, value] of sets) s.custom.gauge("depth", value, atMs);
      totals.add(index, "wnam", 0, s);
    };
    shard(0, [
      [1_000, 50],
      [3_000, 20],
    ]);
    shard(1, [[2_000, 90]]);
    const s = spec(constant, { depth: ["value<30", "value>25"] });
    const { outcomes } = thresholdOutcomes(s, totals, 10);
    expect(outcomes.map((o) => [o.source, o.observed, o.state])).toEqual([
      ["value<30", 20, "passed"],
      ["value>25", 20, "failed"],
    ]);
  });

  it("has no data for a gauge never set: neither passed nor failed", () => {
    const { outcomes } = thresholdOutcomes(spec(constant, { depth: ["value<30"] }), new RunTotals(), 10);
    expect(outcomes[0]!.state).toBe("no-data");
  });

  it.each([
    // A constant level fixes both.
    [constant, { vus: ["value==5"], vus_max: ["value<5"] }, [5, "passed", 5, "failed"]],
    // A ramp leaves vus to timing: no data (a script's is refused before any load, k6-compat/vu-thresholds.ts).
    [{ executor: "ramping-vus", stages: [{ duration: "10s", target: 8 }] }, { vus: ["value>0"], vus_max: ["value==8"] }, [null, "no-data", 8, "passed"]],
  ])("judges vus and vus_max of %j on the plan", (load, thresholds, expected) => {
    const { outcomes } = thresholdOutcomes(spec(load, thresholds), new RunTotals(), 10);
    expect(outcomes.flatMap((o) => [o.observed, o.state])).toEqual(expected);
  });

  it("shows vus and vus_max in the summary with their thresholds' verdicts, as k6's summary-export does", () => {
    const s = spec(constant, { vus: ["value==5"], vus_max: ["value<5"] });
    const { outcomes } = thresholdOutcomes(s, new RunTotals(), 10);
    const metrics = k6Metrics(s, new RunTotals(), new MetricStats(), 10, outcomes, {});
    expect([metrics.vus, metrics.vus_max]).toEqual([
      { value: 5, min: 5, max: 5, thresholds: { "value==5": false } },
      { value: 5, min: 5, max: 5, thresholds: { "value<5": true } },
    ]);
  });
});
