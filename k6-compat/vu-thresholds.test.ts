/**
 * A script's thresholds on gauges before any load: on k6's vus and vus_max, accepted where the
 * plan fixes them and refused, naming why, where it does not (vu-thresholds.ts); on its own
 * Gauge, declared as a gauge so `value` is what they read.
 */
import { describe, expect, it } from "vitest";
import { parseRunSpec } from "../core/spec/run-spec.ts";
import { specFromOptions } from "./options.ts";

const ctx = { name: "s.js", target: "http://127.0.0.1:9090", bundle: "a".repeat(64), env: {}, metrics: {}, exports: ["default"] };

describe("thresholds on gauges in a script's options", () => {
  it.each([
    // A constant level: vus is the level, vus_max the VUs initialised.
    [{ vus: 5, duration: "10s", thresholds: { vus: ["value==5"], vus_max: ["value<=5"] } }],
    // A ramp still fixes vus_max (its peak).
    [{ stages: [{ duration: "10s", target: 8 }], thresholds: { vus_max: ["value==8"] } }],
  ])("accepts %j", (options) => {
    const r = specFromOptions(options, ctx);
    expect(r.ok ? [] : r.problems).toEqual([]);
    expect(r.ok && parseRunSpec(r.spec).ok).toBe(true);
  });

  it.each([
    [{ stages: [{ duration: "10s", target: 8 }], thresholds: { vus: ["value>0"] } }],
    [{ scenarios: { open: { executor: "constant-arrival-rate", rate: 5, duration: "10s", preAllocatedVUs: 2 } }, thresholds: { vus: ["value<3"] } }],
  ])("refuses vus where the plan leaves it to timing: %j", (options) => {
    const r = specFromOptions(options, ctx);
    expect(r.ok ? [] : r.problems).toEqual([expect.stringMatching(/^options.thresholds.vus: edgeload's shards do not count their VUs.*depends on timing$/)]);
  });

  it("declares the script's Gauge as a gauge, so `value` is its threshold and `max` is refused as k6 refuses it", () => {
    const metrics = { depth: "gauge", latency: "gauge" } as const;
    const ok = specFromOptions({ vus: 1, duration: "1s", thresholds: { depth: ["value<10"] } }, { ...ctx, metrics, timeTrends: ["latency"] });
    expect(ok.ok && ok.spec.metrics).toEqual({ depth: { type: "gauge", time: false }, latency: { type: "gauge" } });
    expect(ok.ok && parseRunSpec(ok.spec).ok).toBe(true);
    const max = specFromOptions({ vus: 1, duration: "1s", thresholds: { depth: ["max<10"] } }, { ...ctx, metrics });
    const parsed = max.ok ? parseRunSpec(max.spec) : null;
    expect(parsed?.ok ? [] : parsed?.problems.map((p) => p.detail)).toEqual([expect.stringContaining('"max" does not apply to a gauge metric; use value')]);
  });
});
