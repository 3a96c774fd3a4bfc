/**
 * The capacity model with an aggregation tree, level by level: the example runs at
 * 100,000/s and 1,000,000/s stay within every documented platform limit, no object takes
 * more than 200 requests a second whatever the run's size, the coordinator's D1 batches are
 * bounded by its reporters rather than its shards, and the cost per request does not grow
 * with the rate. (The 35,000/s reference run, flat and with its tree, is in preflight.test.ts.)
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { parseRunSpec } from "../spec/run-spec.ts";
import { DEFAULT_LIMITS, planRun, type Limits } from "./plan.ts";
import { ITERATIONS_PER_SCRIPT_SESSION } from "../schedule/shard-assignment.ts";
import { preflight } from "./preflight.ts";
import { renderPreflight, reportingLine } from "./preflight-text.ts";
import { DYNAMIC_WORKER_CPU_MS_PER_ITERATION } from "./dynamic-worker-usage.ts";

/** The caps a deployment sets to run the examples (`edgeload plan` prints the commands). */
const RAISED: Limits = { ...DEFAULT_LIMITS, maxRatePerS: 1_000_000, maxShards: 8_000, maxTotalRequests: 600_000_000 };

const example = (name: string) => JSON.parse(readFileSync(join(import.meta.dirname, "../../examples", name), "utf8")) as Record<string, unknown>;

function planned(raw: Record<string, unknown>, limits: Limits = RAISED) {
  const parsed = parseRunSpec(raw);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const r = planRun(parsed.spec, new ArrivalSchedule(parsed.spec.stages).total, limits);
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return { spec: parsed.spec, plan: r.plan, p: preflight(parsed.spec, r.plan) };
}

const figure = (p: ReturnType<typeof preflight>, limit: string) => p.limits.find((l) => l.limit === limit)?.value;

describe.each([
  // [example, shards, aggregators (level 1 + roots), levels]
  // 720 shards, 120 a region: 2 groups under a root per region.
  ["edge-100k.json", 720, 12 + 6, 2],
  // 7,146 shards, 1,191 a region: 12 groups under a root per region.
  ["edge-1m.json", 7_146, 72 + 6, 2],
])("examples/%s", (file, shards, aggregators, depth) => {
  const { spec, plan, p } = planned(example(file));

  it(`plans ${shards} shards under ${aggregators} aggregators in ${depth} levels`, () => {
    expect(plan.shards).toHaveLength(shards);
    expect(plan.tree?.aggregators).toHaveLength(aggregators);
    expect(plan.tree?.depth).toBe(depth);
    expect(plan.tree?.roots).toHaveLength(6);
  });

  it("stays within every documented platform limit", () => {
    expect(p.limits.filter((l) => !l.ok)).toEqual([]);
  });

  it("lets no object take more than 200 requests a second", () => {
    expect(figure(p, "requests/s into the coordinator object")).toBe(8); // 6 region roots + a tick + a status poll
    expect(figure(p, "requests/s into the busiest aggregator")).toBeLessThanOrEqual(101); // ≤ 100 children + its tick
    for (const limit of ["requests/s into the coordinator object", "requests/s into the busiest aggregator", "requests/s per shard"])
      expect(figure(p, limit)).toBeLessThanOrEqual(200);
  });

  it("keeps the coordinator's D1 batches bounded: its end batch is the run's row, the aggregators write the shards'", () => {
    expect(figure(p, "D1 statements per coordinator end batch")).toBe(1);
    expect(figure(p, "D1 statements per aggregator end batch")).toBeLessThanOrEqual(100);
    expect(figure(p, "D1 statements per coordinator create batch")).toBe(1 + Math.ceil(shards / 25));
  });

  it("prints the tree and is within its budget (maxCost)", () => {
    const text = renderPreflight(spec, plan, p);
    expect(text).toContain(
      `tree: ${shards.toLocaleString("en-US")} shards → ${(aggregators - 6).toLocaleString("en-US")} aggregators (≤ 100 children each) → 6 region roots`,
    );
    expect(p.overBudget).toBeNull();
  });
});

describe("the tree bounds what grows with the shards", () => {
  it("keeps the coordinator's end batch under D1's 1,000 queries at 7,000 shards, which a flat run would break", () => {
    const raw = { ...example("edge-1m.json"), shards: 7_000 };
    expect(figure(planned(raw).p, "D1 statements per coordinator end batch")).toBe(1);
    const flat = planned(raw, { ...RAISED, aggregatorFanIn: 8_000 }).p;
    expect(flat.limits.find((l) => l.limit === "D1 statements per coordinator end batch")).toMatchObject({ value: 7_001, ok: false });
  });

  it("costs no more per request at 1,000,000/s than at 35,000/s with the same stages", () => {
    const stages = (target: number) => [
      { target, duration: "1m" },
      { target, duration: "8m" },
      { target: 0, duration: "1m" },
    ];
    const at = (rate: number) => planned({ ...example("edge-1m.json"), stages: stages(rate), maxCost: 100 }).p.cost.usdPerMillionRequests;
    expect(at(1_000_000)).toBeLessThanOrEqual(at(35_000) * 1.02);
  });

  it("prices examples/edge-1m.json below the $0.047 a million requests the 35,000/s run cost before the tree", () => {
    expect(planned(example("edge-1m.json")).p.cost.usdPerMillionRequests).toBeLessThan(0.047);
  });

  it("flags the seed reads of a seeded 1,000,000/s run: every shard reads the same object within its warm-up second", () => {
    const { p } = planned({ ...example("edge-1m.json"), steps: [{ path: "/userinfo?u={{data.email}}" }], data: { seed: "users-1k" } });
    expect(p.limits.filter((l) => !l.ok)).toEqual([expect.objectContaining({ limit: "R2 reads/s at start (seed set, script)", value: 7_146 })]);
  });
});

describe("reportingLine", () => {
  it.each([
    // A run within one fan-in is flat: no aggregator.
    [{ shards: 100, regions: ["wnam"] }, "reporting: every shard to the coordinator (≤ 100 shards: no aggregator)"],
    // 101 shards in wnam need 2 groups and a root; weur's 100 fit one aggregator, its root at level 1.
    [
      { shards: 201, regions: ["wnam", "weur"] },
      "tree: 201 shards → 3 aggregators (≤ 100 children each) → 1 aggregator → coordinator (from 2 region roots); 2 levels, the coordinator merges 2 regions × 1 step a second",
    ],
  ])("%j → %s", (over, line) => {
    const raw = { target: "http://127.0.0.1:9", steps: [{ path: "/" }], executor: "constant-arrival-rate", rate: 100, duration: "10s", ...over };
    const { spec, plan } = planned(raw);
    expect(reportingLine(plan, spec.steps.length)).toBe(line);
  });
});

describe("a k6 script the size of examples/edge-1m.json", () => {
  // The same load as a script: its shards run a thousand iterations on each session they open
  // in the script's Dynamic Worker, and only the call that opens one is billed as a request.
  const asScript = { ...example("edge-1m.json"), script: { bundle: "a".repeat(64) }, maxCost: 200 };
  const spec = planned(example("edge-1m.json")).p.cost;
  const { p } = planned(asScript);
  const script = p.cost;
  const line = (item: string) => script.lines.find((l) => l.item === item);

  it("prices its Dynamic Worker calls (a session per thousand iterations), their CPU and the Dynamic Worker", () => {
    const sessions = 240_000_000 / ITERATIONS_PER_SCRIPT_SESSION;
    const calls = line("Dynamic Worker calls (k6 script)")!.quantity;
    // A session per thousand iterations and one more per shard invocation; no setup() or teardown().
    expect(calls).toBe(sessions + p.usage.shardInvocations);
    expect(calls).toBeLessThan(300_000);
    expect(line("Dynamic Worker calls (k6 script)")?.usd).toBeCloseTo((calls * 0.3) / 1e6, 9); // $0.30 a million
    expect(line("Dynamic Worker CPU")?.usd).toBeCloseTo((240_000_000 * DYNAMIC_WORKER_CPU_MS_PER_ITERATION * 0.02) / 1e6, 6);
    // The shards' one Dynamic Worker, for the two UTC days a 5-minute run may touch (one started before midnight).
    expect(line("Dynamic Workers (an ID a day each)")?.quantity).toBe(2);
    expect(line("Dynamic Workers (an ID a day each)")?.usd).toBeCloseTo(2 * 0.002, 9);
    expect(spec.lines.some((l) => l.item.startsWith("Dynamic Worker"))).toBe(false);
  });

  it("prices setup() and teardown() as a call and a Dynamic Worker each: they load under IDs of their own (issue 49)", () => {
    const withPhases = planned({ ...asScript, script: { bundle: "a".repeat(64), setup: true, teardown: true } }).p;
    const item = (name: string) => withPhases.cost.lines.find((l) => l.item === name);
    expect(item("Dynamic Worker calls (k6 script)")?.quantity).toBe(line("Dynamic Worker calls (k6 script)")!.quantity + 2);
    expect(item("Dynamic Workers (an ID a day each)")?.quantity).toBe(3 * 2);
    expect(item("Dynamic Workers (an ID a day each)")?.usd).toBeCloseTo(3 * 2 * 0.002, 9);
  });

  it("costs within 1.5× the spec run's (it was ×15 with a call per iteration)", () => {
    expect(script.totalUsd).toBeGreaterThan(spec.totalUsd);
    expect(script.totalUsd / spec.totalUsd).toBeLessThanOrEqual(1.5);
  });
});
