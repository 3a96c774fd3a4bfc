/**
 * The capacity model and the cost pre-flight: the 35,000/s, six-region, ten-minute run the
 * product is built for stays within every documented platform limit, through a tree of six
 * region roots, and keeps its figures when planned flat; a run that breaks a limit is told
 * which; the cost is the usage priced line by line; a budget refuses a run above it. The
 * tree at 100,000/s and 1,000,000/s is in run-usage.test.ts.
 */
import { describe, expect, it } from "vitest";
import { PRICES } from "./cloudflare-pricing.ts";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { DEFAULT_LIMITS, planRun, type Limits } from "./plan.ts";
import { preflight } from "./preflight.ts";
import { renderPreflight } from "./preflight-text.ts";
import { estimateCost, k6CloudVus } from "./run-cost.ts";
import { estimateUsage } from "./run-usage.ts";
import { parseRunSpec } from "../spec/run-spec.ts";

const SCALE: Limits = { ...DEFAULT_LIMITS, maxRatePerS: 40_000 };

/** The model run: 35,000/s from six regions, 1 m ramp up, 8 m steady, 1 m ramp down. */
const RUN_35K = {
  target: "https://auth.example.com",
  steps: [{ path: "/userinfo" }],
  executor: "ramping-arrival-rate",
  stages: [
    { target: 35_000, duration: "1m" },
    { target: 35_000, duration: "8m" },
    { target: 0, duration: "1m" },
  ],
  regions: ["wnam", "enam", "weur", "eeur", "apac", "oc"],
  expectedLatency: "30ms",
  maxVUs: 2000,
};

function planned(raw: Record<string, unknown>, limits: Limits = SCALE) {
  const parsed = parseRunSpec(raw);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const r = planRun(parsed.spec, new ArrivalSchedule(parsed.spec.stages).total, limits);
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return { spec: parsed.spec, plan: r.plan };
}

describe("the capacity model at 35,000/s across 6 regions for 10 minutes", () => {
  const { spec, plan } = planned(RUN_35K);
  const p = preflight(spec, plan);

  it("plans 252 shards, 42 per region, each asked for less than its slots allow", () => {
    expect(plan.shards).toHaveLength(252);
    expect(new Set(plan.shards.map((s) => s.region)).size).toBe(6);
    expect(plan.peakPerShardPerS).toBeLessThan(plan.capacityPerShardPerS);
  });

  it("reports through one aggregator per region: 252 shards are more than one fan-in of 100", () => {
    expect(plan.tree?.aggregators.map((a) => a.children.length)).toEqual([42, 42, 42, 42, 42, 42]);
    expect(plan.tree?.depth).toBe(1);
  });

  it("stays within every documented platform limit", () => {
    expect(p.limits.filter((l) => !l.ok)).toEqual([]);
    const byName = Object.fromEntries(p.limits.map((l) => [l.limit, l.value]));
    expect(byName["subrequests per shard invocation"]).toBe(10_000);
    expect(byName["requests/s into the busiest aggregator"]).toBe(43); // 42 shard flushes + its tick
    expect(byName["requests/s into the coordinator object"]).toBe(8); // 6 region roots + a tick + a status poll
    expect(byName["D1 statements per aggregator end batch"]).toBe(42); // its shards' rows
    expect(byName["D1 statements per coordinator end batch"]).toBe(1); // the run's row
    expect(byName["D1 rows written per second"]).toBe(42); // 6 regions × (1 window + 6 histograms)
  });

  it("counts every flush as sent, at the object that receives it (issue 49)", () => {
    // A tree's shard sends every fourth of the 599 windows it closes before its last second,
    // then its last with the done flag, and one flush per hand-over (8 invocations: 7).
    const shardFlushes = 252 * (599 / 4 + 1 + 7);
    expect(p.usage.reporting.shardFlushes).toBeCloseTo(shardFlushes, 6);
    // Each aggregator ticks from t0 until its children are done, 1.12 s after the schedule (its
    // rows 5 × 100 ms after the first's, the last answers and flushes 0.5 s + 4 × 30 ms): 602
    // ticks; start, clean-up and the alarm it waits for its rows with.
    expect(p.usage.aggregators.requests).toBeCloseTo(shardFlushes + 6 * 602 + 6 * 2 + 6, 6);
    expect(p.usage.requestsByKind.aggregators).toBe(p.usage.aggregators.requests);
    // Shards: start, 8 alarms, clean-up. The coordinator: create; each root's windows every
    // other second from the second one closed, then its done; a tick a second from its
    // creation 3 s before t0 until the last done (605); its clean-up alarm; a status poll a
    // second as long, and the summary. An abort is not counted (a stopped run costs less).
    const coordinator = 1 + 6 * (599 / 2 + 1) + 605 + 1 + 605 + 1;
    expect(p.usage.requestsByKind).toMatchObject({ shards: 252 * (1 + 8 + 1), coordinator });
    expect(p.usage.durableObjectRequests).toBe(252 * 10 + coordinator);
  });

  it("counts the requests of the schedule and the shard invocations that send them", () => {
    expect(p.usage.requests).toBe(new ArrivalSchedule(spec.stages).total);
    expect(p.usage.requests).toBe(18_900_000);
    // 75,000 requests a shard at 9,500 per invocation: 8 invocations, the first warming up before t0.
    expect(p.usage.shardInvocations).toBe(252 * 8);
  });

  it("costs under $0.40 to run, at most $0.02 a million requests (issue 41), plus its results kept 90 days in D1 (issue 49); well under k6 Cloud", () => {
    // A tree's shard writes its state every fourth window; an aggregator logs its intake a
    // quarter-second at a time. Before both: $0.82, $0.043 a million.
    const storage = p.cost.lines.filter((l) => l.unit === "GB-months").reduce((a, l) => a + l.usd, 0);
    const running = p.cost.totalUsd - storage;
    expect(running).toBeGreaterThan(0.3);
    expect(running).toBeLessThan(0.4);
    expect(running / 18.9).toBeLessThanOrEqual(0.02);
    // 600 s × 36 histogram rows of ~5.9 KB (5,833 samples each) and 6 window rows, and 252 shard
    // rows with their whole-run histograms, kept 3 months at $0.75 a GB-month.
    expect(storage).toBeGreaterThan(0.2);
    expect(storage).toBeLessThan(0.35);
    expect(p.cost.k6Cloud.vuh).toBeCloseTo((2000 * 10) / 60, 6);
    expect(p.cost.k6Cloud.usd).toBeGreaterThan(30 * p.cost.totalUsd);
  });

  it("prints shards per region, every limit and every cost line", () => {
    const text = renderPreflight(spec, plan, p);
    expect(text).toContain("shards: 252 (wnam 42, enam 42, weur 42, eeur 42, apac 42, oc 42)");
    expect(text).toContain(
      "tree: 252 shards → 6 region roots (≤ 100 children each) → coordinator; 1 level, the coordinator merges 6 regions × 1 step a second",
    );
    for (const l of p.limits) expect(text).toContain(l.limit);
    expect(text).toContain("k6 Cloud for the same run: 2,000 VUs × 10 min = 333.3 VUh");
    // Past the retention: ten minutes of minute rows, 252 shards' counters and the run's row stay.
    const keptMb = (p.usage.storage.d1BytesAfterRetention / 1e6).toFixed(2);
    expect(text).toContain(`after the 90 days D1 keeps ${keptMb} MB of it (minute rows, shard counters, the run's row):`);
    expect(text).toContain("warm-up: each shard wakes 1 s before t0, builds its flow and opens its connection with one HEAD of https://auth.example.com/");
  });
});

describe("the same run planned flat (AGGREGATOR_FAN_IN 256) reports to the coordinator, as before the tree", () => {
  const { spec, plan } = planned(RUN_35K, { ...SCALE, aggregatorFanIn: 256 });
  const p = preflight(spec, plan);

  it("has every shard report to the coordinator", () => {
    expect(plan.tree).toBeUndefined();
    const byName = Object.fromEntries(p.limits.map((l) => [l.limit, l.value]));
    expect(byName["requests/s into the coordinator object"]).toBe(254); // 252 flushes + a tick + a status poll
    expect(byName["D1 statements per coordinator end batch"]).toBe(253); // the run's row + one per shard
    expect(byName["requests/s into the busiest aggregator"]).toBeUndefined();
    expect(p.limits.filter((l) => !l.ok)).toEqual([]);
  });

  it("counts what it counted, with the clean-up RPC per shard, and the rows a shard-second now writes", () => {
    // Every shard flushes each window it closes before its last second, then its last, and once
    // per hand-over; the coordinator ticks (and is polled) 3 s before t0 to 0.62 s past the
    // schedule (no rows to wait for: 0.5 s + 4 × 30 ms), 604 times; create, clean-up alarm, summary.
    expect(p.usage.durableObjectRequests).toBe(252 * (1 + 8 + 1) + 1 + 252 * (599 + 1 + 7) + 604 + 1 + 604 + 1);
    expect(p.usage.durableObjectGbSeconds).toBeCloseTo(253 * 605 * 0.128, 6);
    // Shards: 1 row a window (its state with the window), 6 at start and end (the final flush's
    // guard alarm among them), 3 per invocation that sends (8 each): 252 × (601 + 6) + 252 × 8 × 3.
    // The coordinator a log row per flush and its trim (all but the last 4 s: it checkpoints from
    // its creation, 3 s before t0), 3 per tick (604, from its creation), 2 per checkpoint, the
    // last progress: 252 × (601 + 597) + 604 × 3 + 121 × 2 + 1.
    expect(p.usage.shardRowsWritten).toBe(159_012);
    expect(p.usage.coordinatorRowsWritten).toBe(303_951);
    expect(p.usage.durableObjectRowsWritten).toBe(159_012 + 303_951);
    expect(p.usage.aggregators.count).toBe(0);
    expect(p.cost.lines.map((l) => l.item)).not.toContain("Aggregator requests");
    // flat: the coordinator logs a row per flush; $0.0414 a million with a row per window and per progress
    const storage = p.cost.lines.filter((l) => l.unit === "GB-months").reduce((a, l) => a + l.usd, 0);
    expect((p.cost.totalUsd - storage) / 18.9).toBeCloseTo(0.0401, 3);
  });

  it("says so in the plan", () => {
    expect(renderPreflight(spec, plan, p, 256)).toContain("reporting: every shard to the coordinator (≤ 256 shards: no aggregator)");
  });
});

describe("limits a run breaks are named", () => {
  it.each([
    // [overrides, the limit, why]
    [{ connectionSlots: 10 }, "connections per invocation", "production lets 6 requests wait for headers"],
    [{ shards: 60 }, "requests/s per shard", "60 shards would each be asked for 583/s, over 200/s"],
  ])("%j → %s (%s)", (overrides, limit, _why) => {
    const { spec, plan } = planned({ ...RUN_35K, ...overrides });
    expect(
      preflight(spec, plan)
        .limits.filter((l) => !l.ok)
        .map((l) => l.limit),
    ).toEqual([limit]);
  });

  it("flags the coordinator of a flat run when more shards flush than one object takes per second", () => {
    const { spec, plan } = planned({ ...RUN_35K, shards: 1200 }, { ...SCALE, maxShards: 2000, aggregatorFanIn: 2000 });
    const over = preflight(spec, plan)
      .limits.filter((l) => !l.ok)
      .map((l) => l.limit);
    expect(over).toContain("requests/s into the coordinator object");
    // …and its end batch: one UPDATE per shard, over D1's 1,000 queries per invocation.
    expect(over).toContain("D1 statements per coordinator end batch");
  });

  it("flags the aggregators when AGGREGATOR_FAN_IN lets one take more than an object can", () => {
    // 7,200 shards, 1,200 a region, each region under one aggregator of 1,200 children.
    const { spec, plan } = planned({ ...RUN_35K, shards: 7200 }, { ...SCALE, maxShards: 8000, aggregatorFanIn: 1500 });
    expect(
      preflight(spec, plan)
        .limits.filter((l) => !l.ok)
        .map((l) => l.limit),
    ).toEqual(["requests/s into the busiest aggregator", "D1 statements per aggregator end batch"]);
  });
});

describe("cost", () => {
  it("prices every line as quantity × list price, and the total is their sum", () => {
    const { spec, plan } = planned({ target: "http://127.0.0.1:9", steps: [{ path: "/" }], executor: "constant-arrival-rate", rate: 100, duration: "1m" });
    const usage = estimateUsage(spec, plan);
    const cost = estimateCost(usage, spec);
    const line = (item: string) => cost.lines.find((l) => l.item === item)!;
    expect(line("Durable Object requests").usd).toBeCloseTo((usage.durableObjectRequests / 1e6) * PRICES.durableObjectRequestPerMillion, 12);
    expect(line("Durable Object duration").usd).toBeCloseTo((usage.durableObjectGbSeconds / 1e6) * PRICES.durableObjectGbSecondPerMillion, 12);
    expect(line("D1 rows written").usd).toBeCloseTo((usage.d1RowsWritten / 1e6) * PRICES.d1RowsWrittenPerMillion, 12);
    expect(cost.totalUsd).toBeCloseTo(
      cost.lines.reduce((a, l) => a + l.usd, 0),
      12,
    );
    expect(cost.usdPerMillionRequests).toBeCloseTo(cost.totalUsd / (6000 / 1e6), 9);
  });

  it("prices the aggregators of a tree at Durable Object prices, on lines of their own", () => {
    const { spec, plan } = planned(RUN_35K);
    const usage = estimateUsage(spec, plan);
    const cost = estimateCost(usage, spec);
    const line = (item: string) => cost.lines.find((l) => l.item === item)!;
    expect(line("Aggregator requests").usd).toBeCloseTo((usage.aggregators.requests / 1e6) * PRICES.durableObjectRequestPerMillion, 12);
    expect(line("Aggregator duration").usd).toBeCloseTo((usage.aggregators.gbSeconds / 1e6) * PRICES.durableObjectGbSecondPerMillion, 12);
    expect(line("Aggregator storage rows written").usd).toBeCloseTo((usage.aggregators.rowsWritten / 1e6) * PRICES.durableObjectRowsWrittenPerMillion, 12);
    expect(line("Aggregator storage rows read").usd).toBeCloseTo((usage.aggregators.rowsRead / 1e6) * PRICES.durableObjectRowsReadPerMillion, 12);
    expect(cost.totalUsd).toBeCloseTo(
      cost.lines.reduce((a, l) => a + l.usd, 0),
      12,
    );
  });

  it("bills k6 Cloud VUh as k6 documents it: 100 VUs for 10 minutes is 16.67 VUh, at least 1 VUh a test", () => {
    const { spec, plan } = planned({
      target: "http://127.0.0.1:9",
      steps: [{ path: "/" }],
      executor: "constant-arrival-rate",
      rate: 50,
      duration: "10m",
      maxVUs: 100,
    });
    expect(estimateCost(estimateUsage(spec, plan), spec).k6Cloud.vuh).toBeCloseTo(16.67, 2);
    const short = planned({ target: "http://127.0.0.1:9", steps: [{ path: "/" }], executor: "constant-arrival-rate", rate: 5, duration: "30s", maxVUs: 10 });
    expect(estimateCost(estimateUsage(short.spec, short.plan), short.spec).k6Cloud.vuh).toBe(1);
  });

  it.each([
    // A k6 user at 500/s against a 50 ms endpoint sets ~25 VUs (Little's law), not 500.
    [{ rate: 500, expectedLatency: "50ms" }, 25, /Little's law: 500\/s × 50 ms/],
    // The spec's own figures win: maxVUs, then preAllocatedVUs.
    [{ rate: 500, maxVUs: 80, preAllocatedVUs: 40 }, 80, /the spec's maxVUs/],
    [{ rate: 500, preAllocatedVUs: 40 }, 40, /the spec's preAllocatedVUs/],
    // A trickle still needs one VU.
    [{ rate: 1, expectedLatency: "50ms" }, 1, /Little's law/],
  ])("gives k6 Cloud the VUs a k6 user would set: %j → %i", (options, vus, basis) => {
    const { spec } = planned({ target: "http://127.0.0.1:9", steps: [{ path: "/" }], executor: "constant-arrival-rate", duration: "10m", ...options });
    expect(k6CloudVus(spec)).toEqual({ vus, basis: expect.stringMatching(basis) });
  });

  it("reads the seed set from R2 once per shard, and only when the run has one", () => {
    const seeded = planned({
      target: "http://127.0.0.1:9",
      steps: [{ path: "/?u={{data.email}}" }],
      data: { seed: "users-1k" },
      executor: "constant-arrival-rate",
      rate: 100,
      duration: "10s",
    });
    expect(estimateUsage(seeded.spec, seeded.plan).r2Reads).toBe(seeded.plan.shards.length);
    // All of them within the warm-up second before t0.
    expect(estimateUsage(seeded.spec, seeded.plan).peak.r2ReadsPerSAtStart).toBe(seeded.plan.shards.length);
    const plain = planned({ target: "http://127.0.0.1:9", steps: [{ path: "/" }], executor: "constant-arrival-rate", rate: 100, duration: "10s" });
    expect(estimateUsage(plain.spec, plain.plan).r2Reads).toBe(0);
  });
});

describe("budget (maxCost)", () => {
  it.each([
    // [maxCost, refused]
    [5, false],
    [0.1, true],
  ])("maxCost %d → refused: %s", (maxCost, refused) => {
    const { spec, plan } = planned({ ...RUN_35K, maxCost });
    const p = preflight(spec, plan);
    if (refused) {
      expect(p.overBudget?.field).toBe("maxCost");
      expect(p.overBudget?.detail).toMatch(/estimated cost is \$0\.6\d+ .* above its budget of \$0\.10/);
    } else {
      expect(p.overBudget).toBeNull();
    }
  });

  it.each([[0], [-1], ["5"], [Infinity]])("refuses maxCost %j as a budget", (maxCost) => {
    const r = parseRunSpec({ ...RUN_35K, maxCost });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.map((p) => p.field)).toContain("maxCost");
  });

  it("is a run-level field with named scenarios, not a scenario's", () => {
    const scenario = { executor: "constant-arrival-rate", rate: 10, duration: "10s", steps: [{ path: "/" }] };
    const ok = parseRunSpec({ target: "http://127.0.0.1:9", maxCost: 2, scenarios: { a: scenario } });
    expect(ok.ok && ok.spec.maxCostUsd).toBe(2);
    const inside = parseRunSpec({ target: "http://127.0.0.1:9", scenarios: { a: { ...scenario, maxCost: 2 } } });
    expect(!inside.ok && inside.problems.map((p) => p.field)).toContain("scenarios.a.maxCost");
  });
});
