/**
 * The browser planner: which scenarios are browser ones, the ramp spread that keeps new
 * sessions within the account's rate, and a 50-browser 10-minute test priced by hand.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { shardSlices } from "../schedule/shard-slice.ts";
import { ShardVus } from "../schedule/vu-schedule.ts";
import { parseRunSpec } from "../spec/run-spec.ts";
import type { RunSpec } from "../spec/types.ts";
import { browserScenariosOf, planBrowsers, spreadBrowserStarts, VUS_PER_BROWSER } from "./browser-sessions.ts";
import { DEFAULT_LIMITS, planRun } from "./plan.ts";
import { preflight } from "./preflight.ts";
import { shardAssignments } from "../schedule/shard-assignment.ts";

function spec(input: unknown): RunSpec {
  const parsed = parseRunSpec(input);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.spec;
}

function planned(s: RunSpec) {
  const p = planRun(s, new ArrivalSchedule(s.stages).total, DEFAULT_LIMITS);
  if (!p.ok) throw new Error(JSON.stringify(p.problems));
  return p.plan;
}

const BUNDLE = "a".repeat(64);

/** A run of one browser scenario `ui` (and a protocol one beside it when `hybrid`); `browser: false` makes `ui` a protocol one too. */
function uiRun(ui: Record<string, unknown>, hybrid = false, browser = true): RunSpec {
  return spec({
    target: "http://127.0.0.1:9",
    scenarios: {
      ui: { steps: [{ path: "/" }], regions: ["weur"], script: { bundle: BUNDLE, ...(browser ? { browser: true } : {}) }, ...ui },
      ...(hybrid ? { api: { executor: "constant-vus", vus: 5, duration: "1m", steps: [{ path: "/api" }] } } : {}),
    },
  });
}

describe("browserScenariosOf", () => {
  const script = (browser?: boolean) => ({ bundle: BUNDLE, ...(browser === undefined ? {} : { browser }) });
  const one = { executor: "constant-vus", vus: 1, duration: "10s", steps: [{ path: "/" }] };
  it.each([
    // a scenario whose script says browser (k6's options.browser.type chromium, k6-compat/options.ts)
    [{ scenarios: { ui: { ...one, script: script(true) }, api: { ...one, script: script() } } }, ["ui"]],
    // browser: false, and a scenario of steps, drive none
    [{ scenarios: { ui: { ...one, script: script(false) }, api: one } }, []],
    // a run without named scenarios is "default"
    [{ ...one, script: script(true) }, ["default"]],
    // a run of steps
    [one, []],
  ])("%j → %j", (input, names) => {
    expect(browserScenariosOf(spec({ target: "http://127.0.0.1:9", ...input }))).toEqual(names);
  });
});

describe("spreadBrowserStarts", () => {
  it.each([
    // three shards wanting t0 start a second apart at 1 a second
    [[0, 0, 0], 1, [0, 1000, 2000]],
    // at 2 a second, half a second apart
    [[0, 0, 0], 2, [0, 500, 1000]],
    // at 3 a second, a third of a second apart, the fourth a whole second after the first (not 999.99… ms)
    [[0, 0, 0, 0], 3, [0, 1000 / 3, 2000 / 3, 1000]],
    // starts already far apart are kept
    [[0, 5000, 10_000], 1, [0, 5000, 10_000]],
    // order of the input is kept; the earlier wanted goes first
    [[3000, 0, 500], 1, [3000, 0, 1000]],
  ])("%j at %d/s → %j", (wanted, perS, starts) => {
    expect(spreadBrowserStarts(wanted, perS)).toEqual(starts);
  });

  it("never starts early, and no 1,000 ms window holds more starts than the rate", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20_000 }), { maxLength: 60 }), fc.integer({ min: 1, max: 5 }), (wanted, perS) => {
        const starts = spreadBrowserStarts(wanted, perS);
        starts.forEach((s, i) => expect(s).toBeGreaterThanOrEqual(wanted[i]!));
        for (const t of starts) expect(starts.filter((s) => s >= t && s < t + 1000).length).toBeLessThanOrEqual(perS);
      }),
      { numRuns: 500 },
    );
  });

  it("refuses a rate of 0, naming it", () => {
    expect(() => spreadBrowserStarts([0], 0)).toThrow(/new browsers per second must be above 0, got 0/);
  });
});

describe("planBrowsers", () => {
  it("prices a 50-browser, 10-minute test by hand: 50 sessions a second apart, 7.99 browser-hours, 50 at once", () => {
    // 50 VUs on 50 shards: one session each, every VU at t0, so the starts are spread 0…49 s.
    const s = uiRun({ executor: "constant-vus", vus: 50, duration: "10m", shards: 50 });
    const result = preflight(s, planned(s));
    const b = result.browsers!;
    expect(b.sessions.map((x) => x.startsAtMs)).toEqual(Array.from({ length: 50 }, (_, i) => i * 1000));
    // Σ (600 − i) s for i = 0…49 = 30,000 − 1,225 = 28,775 s = 7.9931 h.
    expect(b.browserHours).toBeCloseTo(28_775 / 3600, 9);
    expect(b.peakConcurrent).toBe(50);
    expect(b.mostNewPerS).toBe(1);
    const line = (item: string) => result.cost.lines.find((l) => l.item === item)!.usd;
    // 7.9931 h × $0.09 = $0.7194; 50 browsers × $2 / 30 days = $3.3333.
    expect(line("Browser Run browser hours")).toBeCloseTo((28_775 / 3600) * 0.09, 9);
    expect(line("Browser Run concurrent browsers")).toBeCloseTo((50 * 2) / 30, 9);
    const protocol = uiRun({ executor: "constant-vus", vus: 50, duration: "10m", shards: 50 }, false, false);
    const without = preflight(protocol, planned(protocol));
    // To the micro-dollar: the browser run's stored spec is 15 bytes longer ("browser":true), a few nano-dollars of storage.
    expect(result.cost.totalUsd - without.cost.totalUsd).toBeCloseTo((28_775 / 3600) * 0.09 + 100 / 30, 6);
    expect(result.limits.filter((l) => l.level === "Browser Run").every((l) => l.ok)).toBe(true);
  });

  it("opens a shard's session when the ramp reaches its first VU, and never for a shard with none", () => {
    // 0 → 4 VUs over 40 s on 6 shards: VU i starts at 10·i s (shard i's first), shards 4 and 5 get none.
    const s = uiRun({
      executor: "ramping-vus",
      startVUs: 0,
      stages: [
        { duration: "40s", target: 4 },
        { duration: "20s", target: 4 },
      ],
      shards: 6,
    });
    const b = planBrowsers(s, planned(s), ["ui"]);
    expect(b.sessions.map((x) => [x.shard, x.wantedAtMs, x.startsAtMs])).toEqual([
      [0, 10_000, 10_000],
      [1, 20_000, 20_000],
      [2, 30_000, 30_000],
      [3, 40_000, 40_000],
    ]);
    expect(b.browserHours).toBeCloseTo((50 + 40 + 30 + 20) / 3600, 9);
  });

  it("takes shard i's first VU to be VU i, as equal-weight shards are dealt VUs", () => {
    for (const n of [1, 4, 7, 50]) {
      const firsts = shardSlices(Array.from({ length: n }, () => 1)).map((slice) => new ShardVus(slice).owned(n)[0]);
      expect(firsts).toEqual(Array.from({ length: n }, (_, i) => i));
    }
  });

  it("counts only the browser scenarios of a hybrid run, numbered as the run's shards", () => {
    const s = uiRun({ executor: "constant-vus", vus: 4, duration: "1m", shards: 2 }, true);
    const plan = planned(s);
    const b = planBrowsers(s, plan, ["ui"]);
    const ui = plan.scenarios!.find((x) => x.name === "ui")!;
    expect(b.sessions.map((x) => x.shard)).toEqual([ui.firstShard, ui.firstShard + 1]);
    expect(b.sessions.map((x) => x.vus)).toEqual([2, 2]);
    expect(planBrowsers(s, plan, []).sessions).toEqual([]);
  });

  it("is over the account's concurrent browsers past 120, and over a browser's VUs past VUS_PER_BROWSER, naming the shards to give", () => {
    const many = uiRun({ executor: "constant-vus", vus: 130, duration: "5m", shards: 130 });
    const over = preflight(many, planned(many)).limits.find((l) => l.limit === "concurrent browsers (account)")!;
    expect([over.value, over.max, over.ok]).toEqual([130, 120, false]);
    const full = uiRun({ executor: "constant-vus", vus: 50, duration: "5m", shards: 2 });
    const vus = preflight(full, planned(full)).limits.find((l) => l.limit === "VUs per browser (contexts)")!;
    expect([vus.value, vus.max, vus.ok]).toEqual([25, VUS_PER_BROWSER, false]);
    expect(vus.note).toContain("at least 5 shards");
  });

  it("adds nothing to a run without browser scenarios", () => {
    const s = uiRun({ executor: "constant-vus", vus: 5, duration: "1m" }, true, false);
    const r = preflight(s, planned(s));
    expect(r.browsers).toBeNull();
    expect(r.cost.lines.some((l) => l.item.startsWith("Browser Run"))).toBe(false);
    expect(r.limits.some((l) => l.level === "Browser Run")).toBe(false);
  });
});

describe("a browser run's budget and assignments", () => {
  it("refuses a run over maxCost naming its Browser Run part, and says nothing of browsers for a protocol run", () => {
    // 10 sessions a second apart to 5 min: Σ (300 − i) s = 2,955 s; 10 at once is 10 × $2 / 30 = $0.67.
    const s = { ...uiRun({ executor: "constant-vus", vus: 10, duration: "5m", shards: 10 }), maxCostUsd: 0.1 };
    expect(preflight(s, planned(s)).overBudget).toEqual({
      field: "maxCost",
      detail: expect.stringMatching(
        /^the run's estimated cost is \$0\.\d+, of which Browser Run \$0\.74 \(10 browsers, 0\.82 browser-hours, 10 at once\) \(prices of \d{4}-\d\d-\d\d\), above its budget of \$0\.10;/,
      ),
    });
    const protocol = { ...uiRun({ executor: "constant-vus", vus: 10, duration: "5m", shards: 10 }, false, false), maxCostUsd: 0.001 };
    expect(preflight(protocol, planned(protocol)).overBudget!.detail).toMatch(/^the run's estimated cost is \$\S+ \(prices of/);
  });

  it("tells each browser shard its start after its scenario's t0, and no other shard", () => {
    // ui starts at 10 s with 3 shards, all wanting its start: 10, 11 and 12 s after the run's t0.
    const s = uiRun({ executor: "constant-vus", vus: 3, duration: "1m", shards: 3, startTime: "10s" }, true);
    const assignments = shardAssignments({ runId: "r", spec: s, plan: planned(s), t0Ms: 1_000_000, mode: "local", flushGraceMs: 0 });
    const of = (name: string) => assignments.filter((a) => a.part!.scenario === name);
    expect(of("ui").map((a) => [a.t0Ms, a.browserStartMs])).toEqual([
      [1_010_000, 0],
      [1_010_000, 1000],
      [1_010_000, 2000],
    ]);
    expect(of("api").length).toBeGreaterThan(0);
    expect(of("api").map((a) => a.browserStartMs)).toEqual(of("api").map(() => undefined));
  });

  it("spreads a flat run's shards by the plan's weights, so an aggregator's trimmed plan gives the same starts", () => {
    const s = spec({
      target: "http://127.0.0.1:9",
      executor: "constant-vus",
      vus: 4,
      duration: "1m",
      shards: 4,
      regions: ["weur"],
      steps: [{ path: "/" }],
      script: { bundle: BUNDLE, browser: true },
    });
    const plan = planned(s);
    const whole = shardAssignments({ runId: "r", spec: s, plan, t0Ms: 0, mode: "local", flushGraceMs: 0 });
    expect(whole.map((a) => a.browserStartMs)).toEqual([0, 1000, 2000, 3000]);
    // An aggregator of the last two shards assigns them from its plan of those two (subtreeStart).
    const trimmed = shardAssignments({ runId: "r", spec: s, plan: { ...plan, shards: plan.shards.slice(2) }, t0Ms: 0, mode: "local", flushGraceMs: 0 });
    expect(trimmed.map((a) => [a.shard.index, a.browserStartMs])).toEqual([
      [2, 2000],
      [3, 3000],
    ]);
  });
});
