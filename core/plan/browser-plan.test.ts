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
import { browserScenarioNames, planBrowsers, spreadBrowserStarts, VUS_PER_BROWSER } from "./browser-plan.ts";
import { DEFAULT_LIMITS, planRun } from "./plan.ts";
import { preflight } from "./preflight.ts";

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

/** A run of one browser scenario `ui` of constant VUs (and a protocol one beside it when `hybrid`). */
function uiRun(ui: Record<string, unknown>, hybrid = false): RunSpec {
  return spec({
    target: "http://127.0.0.1:9",
    scenarios: {
      ui: { steps: [{ path: "/" }], regions: ["weur"], ...ui },
      ...(hybrid ? { api: { executor: "constant-vus", vus: 5, duration: "1m", steps: [{ path: "/api" }] } } : {}),
    },
  });
}

describe("browserScenarioNames", () => {
  it.each([
    // k6's browser scenario: options.browser.type chromium
    [{ scenarios: { ui: { options: { browser: { type: "chromium" } } }, api: {} } }, ["ui"]],
    // a scenario without the option drives no browser
    [{ scenarios: { api: { executor: "constant-vus" } } }, []],
    // no scenarios at all (k6 requires them for a browser)
    [{ vus: 5 }, []],
    // null options (a script with none)
    [null, []],
  ])("%j → %j", (options, names) => {
    expect(browserScenarioNames(options)).toEqual(names);
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
    const result = preflight(s, planned(s), { browserScenarios: ["ui"] });
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
    const without = preflight(s, planned(s));
    expect(result.cost.totalUsd - without.cost.totalUsd).toBeCloseTo((28_775 / 3600) * 0.09 + 100 / 30, 9);
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
    const over = preflight(many, planned(many), { browserScenarios: ["ui"] }).limits.find((l) => l.limit === "concurrent browsers (account)")!;
    expect([over.value, over.max, over.ok]).toEqual([130, 120, false]);
    const full = uiRun({ executor: "constant-vus", vus: 50, duration: "5m", shards: 2 });
    const vus = preflight(full, planned(full), { browserScenarios: ["ui"] }).limits.find((l) => l.limit === "VUs per browser (contexts)")!;
    expect([vus.value, vus.max, vus.ok]).toEqual([25, VUS_PER_BROWSER, false]);
    expect(vus.note).toContain("at least 5 shards");
  });

  it("adds nothing to a run without browser scenarios", () => {
    const s = uiRun({ executor: "constant-vus", vus: 5, duration: "1m" });
    const r = preflight(s, planned(s));
    expect(r.browsers).toBeNull();
    expect(r.cost.lines.some((l) => l.item.startsWith("Browser Run"))).toBe(false);
    expect(r.limits.some((l) => l.level === "Browser Run")).toBe(false);
  });
});
