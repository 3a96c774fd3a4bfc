/**
 * k6's VU numbering (vu-ids.ts): every VU of every scenario and shard of a run gets an id no
 * other VU has, as `exec.vu.idInTest` and `__VU` are in k6, and every iteration of a
 * scenario a number (`exec.scenario.iterationInTest`) no other iteration of it has.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { validSpec } from "../../test/support/run-spec-fixtures.ts";
import { DEFAULT_LIMITS, planRun } from "../plan/plan.ts";
import { shardAssignments } from "./shard-assignment.ts";
import { ShardVus, VuSchedule } from "./vu-schedule.ts";
import { scenarioVuOffsets, segmentedIndex, shardVuPool } from "./vu-ids.ts";
import { shardSliceOf } from "./shard-slice.ts";

const step = [{ name: "get", path: "/" }];

/** Every id each shard of the run may give a VU, by scenario, from its assignment alone. */
function idsByScenario(scenarios: Record<string, unknown>): Map<string, number[]> {
  const spec = validSpec({ target: "http://127.0.0.1:9090", regions: ["wnam"], scenarios });
  const planned = planRun(spec, 0, DEFAULT_LIMITS);
  if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
  const out = new Map<string, number[]>();
  for (const a of shardAssignments({ runId: "r", spec, plan: planned.plan, t0Ms: 0, mode: "local", flushGraceMs: 0 })) {
    const offset = a.part?.vuIdOffset ?? 0;
    const ids = a.spec.vus
      ? new ShardVus(a.slice).owned(new VuSchedule(a.spec.vus).peak).map((j) => offset + j + 1)
      : (({ first, size }) => Array.from({ length: size }, (_, i) => first + i))(
          shardVuPool({ offset, shard: a.shard, slice: a.slice, preAllocatedVUs: a.spec.preAllocatedVUs }),
        );
    out.set(a.part!.scenario, [...(out.get(a.part!.scenario) ?? []), ...ids]);
  }
  return out;
}

describe("VU ids in the test", () => {
  it.each([
    // The reported case: two constant-vus scenarios at once; k6 gives them VUs 1-2 and 3-4,
    // where numbering each scenario from 1 made their VU 2 one object.
    [
      { a: { executor: "constant-vus", vus: 2, duration: "3s", steps: step }, b: { executor: "constant-vus", vus: 2, duration: "3s", steps: step } },
      { a: [1, 2], b: [3, 4] },
    ],
    // Shards of one scenario share out its VUs; the next scenario starts after its peak.
    [
      {
        a: { executor: "ramping-vus", startVUs: 0, stages: [{ duration: "2s", target: 5 }], shards: 2, steps: step },
        b: { executor: "constant-vus", vus: 1, duration: "2s", steps: step },
      },
      { a: [1, 2, 3, 4, 5], b: [6] },
    ],
    // Arrival-rate shards each hold their in-flight cap (maxVUs 5 over 2 shards: 3 each),
    // so a VU executor after them starts at 7.
    [
      {
        a: { executor: "constant-arrival-rate", rate: 10, duration: "2s", preAllocatedVUs: 2, maxVUs: 5, shards: 2, steps: step },
        b: { executor: "constant-vus", vus: 2, duration: "2s", steps: step },
      },
      { a: [1, 2, 3, 4, 5, 6], b: [7, 8] },
    ],
  ])("gives each scenario its own VUs %#", (scenarios, expected) => {
    const ids = idsByScenario(scenarios);
    expect(Object.fromEntries([...ids].map(([name, list]) => [name, [...list].sort((x, y) => x - y)]))).toEqual(expected);
  });

  it("never gives two VUs the same id, whatever the scenarios and their shards", () => {
    const scenario = fc.oneof(
      fc.record({ executor: fc.constant("constant-vus"), vus: fc.integer({ min: 1, max: 40 }), shards: fc.integer({ min: 1, max: 5 }) }),
      fc.record({
        executor: fc.constant("constant-arrival-rate"),
        rate: fc.integer({ min: 1, max: 50 }),
        maxVUs: fc.integer({ min: 1, max: 40 }),
        shards: fc.integer({ min: 1, max: 5 }),
      }),
    );
    fc.assert(
      fc.property(fc.array(scenario, { minLength: 1, maxLength: 4 }), (list) => {
        const scenarios = Object.fromEntries(list.map((s, i) => [`s${i}`, { ...s, duration: "2s", steps: step }]));
        const all = [...idsByScenario(scenarios).values()].flat();
        expect(new Set(all).size).toBe(all.length);
        expect(Math.min(...all)).toBe(1);
      }),
      { numRuns: 60 },
    );
  });

  it("offsets each scenario by the ids of those before it", () => {
    expect(scenarioVuOffsets([2, 2])).toEqual([0, 2]);
    expect(scenarioVuOffsets([3, 0, 5])).toEqual([0, 3, 3]);
    expect(scenarioVuOffsets([])).toEqual([]);
  });

  it.each([
    // preAllocatedVUs shared by weight: parts sum to the whole, and never exceed a shard's cap.
    [7, [1, 1, 1], 4, [2, 2, 3]],
    [2, [1, 1, 1], 4, [0, 1, 1]],
    [40, [1, 1], 4, [4, 4]],
    // Unweighted equal parts; no preAllocatedVUs given: the whole pool is pre-allocated.
    [undefined, [1, 1], 4, [4, 4]],
  ])("shares preAllocatedVUs %s over shards weighted %j with caps of %i", (preAllocatedVUs, weights, cap, parts) => {
    const pools = weights.map((_, index) =>
      shardVuPool({
        offset: 10,
        shard: { index, maxInFlight: cap },
        slice: shardSliceOf(weights, index),
        ...(preAllocatedVUs === undefined ? {} : { preAllocatedVUs }),
      }),
    );
    expect(pools.map((p) => p.preAllocated)).toEqual(parts);
    expect(pools.map((p) => p.first)).toEqual(weights.map((_, i) => 10 + i * cap + 1));
  });
});

describe("iterationInTest", () => {
  it("numbers a shard's k-th iteration by the slots it owns", () => {
    const first = segmentedIndex(shardSliceOf([1, 1], 0));
    const second = segmentedIndex(shardSliceOf([1, 1], 1));
    expect([0, 1, 2].map(first)).toEqual([0, 2, 4]);
    expect([0, 1, 2].map(second)).toEqual([1, 3, 5]);
  });

  it("gives every iteration of a scenario its own number, and the first N of them 0 … N−1 over whole cycles", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 5 }), (weights, cycles) => {
        const seen = weights.flatMap((w, shard) => Array.from({ length: w * cycles }, (_, k) => segmentedIndex(shardSliceOf(weights, shard))(k)));
        const total = weights.reduce((a, w) => a + w, 0) * cycles;
        expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i));
      }),
    );
  });
});
