/**
 * The cost of a run at the latency its target really has (issue 49): a shard sustains its
 * connection slots over the target's time to first byte, so the shard count and the bill
 * grow with latency. The 1,000,000/s example, planned at the spec's 30 ms, needs
 * 11,910 shards at 50 ms and 23,814 at 100 ms, where its plan passes D1's 2 MB row.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseRunSpec } from "../spec/run-spec.ts";
import { atLatency, costsAtLatencies } from "./latency-costs.ts";
import { DEFAULT_LIMITS } from "./plan.ts";
import { renderLatencyCosts } from "./preflight-text.ts";

const UNCAPPED = { ...DEFAULT_LIMITS, maxRatePerS: Infinity, maxShards: Infinity, maxTotalRequests: Infinity, maxDurationMs: Infinity, maxVUs: Infinity };

const spec = (raw: Record<string, unknown>) => {
  const parsed = parseRunSpec(raw);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.spec;
};
const edge1m = spec(JSON.parse(readFileSync(join(import.meta.dirname, "../../examples/edge-1m.json"), "utf8")));

describe("the 1,000,000/s example at 30, 50, 100 and 200 ms", () => {
  const costs = costsAtLatencies(edge1m, UNCAPPED);

  it.each([
    // [latency ms, shards: 1,000,000/s over 6 slots / latency at 70 %, in whole regions]
    [30, 7_146],
    [50, 11_910],
    [100, 23_814],
    [200, 47_622],
  ])("%d ms: %d shards", (latencyMs, shards) => {
    expect(costs.find((c) => c.latencyMs === latencyMs)?.shards).toBe(shards);
  });

  it("costs more the slower the target, about in step with its shards (their duration is most of the bill)", () => {
    const usd = costs.map((c) => c.totalUsd);
    expect(usd).toEqual([...usd].sort((a, b) => a - b));
    expect(costs[2]!.totalUsd / costs[0]!.totalUsd).toBeGreaterThan(2.8); // 3.3× the shards
    expect(costs.every((c) => c.requests === 240_000_000)).toBe(true);
    expect(costs[1]!.usdPerMillionRequests).toBeCloseTo(costs[1]!.totalUsd / 240, 9);
  });

  it("names the platform limits a slower target breaks: D1's 2 MB row at 100 ms", () => {
    expect(costs.map((c) => [c.latencyMs, c.limitsBroken])).toEqual([
      [30, []],
      [50, []],
      [100, ["bytes of the run's D1 row"]],
      [200, ["D1 statements per coordinator create batch", "bytes of the run's D1 row"]],
    ]);
  });

  it("prints them in a table, the planned latency marked, and what each breaks under it", () => {
    const text = renderLatencyCosts(costs, 30, "the spec's expectedLatency");
    expect(text).toContain("cost by the target's time to first byte (the plan above is at 30 ms: the spec's expectedLatency)");
    expect(text).toMatch(new RegExp(`→ 30 ms +7,146 +240,000,000 +\\$${costs[0]!.totalUsd.toFixed(2)} `));
    expect(text).toMatch(/ {4}100 ms +23,814 /);
    expect(text).toContain("at 100 ms the run breaks: bytes of the run's D1 row");
  });
});

describe("costsAtLatencies", () => {
  const base = { target: "http://127.0.0.1:9", steps: [{ path: "/" }], executor: "constant-arrival-rate", rate: 1000, duration: "1m" };

  it("adds the spec's own latency, in order, once", () => {
    expect(costsAtLatencies(spec({ ...base, expectedLatency: "80ms" }), UNCAPPED).map((c) => c.latencyMs)).toEqual([30, 50, 80, 100, 200]);
    expect(costsAtLatencies(spec({ ...base, expectedLatency: "50ms" }), UNCAPPED).map((c) => c.latencyMs)).toEqual([30, 50, 100, 200]);
  });

  it("a latency the deployment's caps cannot plan says why instead of a price", () => {
    const costs = costsAtLatencies(spec({ ...base, rate: 30_000, expectedLatency: "30ms" }), { ...DEFAULT_LIMITS, maxRatePerS: 40_000, maxShards: 256 });
    expect(costs.find((c) => c.latencyMs === 30)?.problem).toBeNull();
    // A closed model's VUs and rate follow latency; an open model's shard count past the cap is a note, not a problem.
    expect(costs.every((c) => c.problem === null)).toBe(true);
    const overRate = costsAtLatencies(spec({ ...base, rate: 50_000 }), { ...DEFAULT_LIMITS, maxRatePerS: 40_000 });
    expect(overRate[0]!.problem).toContain("peak rate 50000/s exceeds this deployment's cap of 40000/s");
    expect(renderLatencyCosts(overRate, 50, "x")).toContain("at 30 ms: not planned: peak rate 50000/s exceeds");
  });

  it("a closed model's requests follow the latency (its VUs wait for each response)", () => {
    const vus = spec({ target: "http://127.0.0.1:9", steps: [{ path: "/" }], executor: "constant-vus", vus: 50, duration: "1m" });
    const costs = costsAtLatencies(vus, UNCAPPED);
    expect(costs[0]!.requests).toBeGreaterThan(costs.at(-1)!.requests);
  });
});

describe("atLatency", () => {
  it("sets the expected latency of the run and of each named scenario, rounded up to whole ms", () => {
    const named = spec({
      target: "http://127.0.0.1:9",
      scenarios: {
        a: { executor: "constant-arrival-rate", rate: 10, duration: "10s", steps: [{ path: "/a" }] },
        b: { executor: "constant-arrival-rate", rate: 10, duration: "10s", steps: [{ path: "/b" }] },
      },
    });
    const at = atLatency(named, 82.4);
    expect(at.expectedLatencyMs).toBe(83);
    expect(at.scenarios?.map((s) => s.spec.expectedLatencyMs)).toEqual([83, 83]);
    expect(named.expectedLatencyMs).toBe(50); // the spec given is not changed
  });
});
