import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseRunSpec } from "../core/spec/run-spec.ts";
import { applyLoadFlags, parseLoadFlags, type LoadFlags } from "./load-overrides.ts";
import { PROJECT_ROOT } from "./paths.ts";

const target = "http://127.0.0.1:9090";
const steps = [{ path: "/" }];
const constantRate = { target, steps, executor: "constant-arrival-rate", rate: 50, timeUnit: "1s", duration: "1m", maxVUs: 80 };
const rampingRate = {
  target,
  steps,
  executor: "ramping-arrival-rate",
  startRate: 10,
  timeUnit: "1m",
  stages: [
    { target: 600, duration: "30s" },
    { target: 0, duration: "30s" },
  ],
};
const constantVus = { target, steps, executor: "constant-vus", vus: 20, duration: "1m" };
const rampingVus = {
  target,
  steps,
  executor: "ramping-vus",
  startVUs: 5,
  stages: [
    { target: 40, duration: "30s" },
    { target: 0, duration: "30s" },
  ],
  gracefulRampDown: "5s",
};
const preset = { target, scenario: { name: "userinfo", seed: "tokens", clientId: "c", clientSecret: "s" }, preset: "rps100" };

/** The decoded spec after the flags, or the problems of either step. */
function decoded(spec: Record<string, unknown>, load: LoadFlags) {
  const applied = applyLoadFlags(spec, load);
  if (!applied.ok) return { refused: applied.problems.join("\n") };
  const parsed = parseRunSpec(applied.value);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const s = parsed.spec;
  return {
    executor: s.executor,
    durationMs: s.durationMs,
    peakRatePerS: s.peakRatePerS,
    vus: s.vus ? Math.max(s.vus.startVUs, ...s.vus.stages.map((st) => st.target)) : null,
    iterations: s.vus?.iterations?.count ?? null,
  };
}

describe("load flags on a spec", () => {
  it.each<[string, Record<string, unknown>, LoadFlags, Record<string, unknown>]>([
    // An arrival-rate spec keeps its rate and takes the new duration.
    ["-d on constant-arrival-rate", constantRate, { duration: "10s" }, { executor: "constant-arrival-rate", durationMs: 10_000, peakRatePerS: 50 }],
    // A ramp held at its peak (600 per minute = 10/s) for -d.
    ["-d on ramping-arrival-rate", rampingRate, { duration: "5s" }, { executor: "constant-arrival-rate", durationMs: 5_000, peakRatePerS: 10 }],
    // --rate picks the level instead of the peak.
    ["-d --rate on ramping-arrival-rate", rampingRate, { duration: "5s", rate: 3 }, { executor: "constant-arrival-rate", peakRatePerS: 3 }],
    // --rate alone replaces a constant rate, duration kept.
    ["--rate on constant-arrival-rate", constantRate, { rate: 7 }, { executor: "constant-arrival-rate", durationMs: 60_000, peakRatePerS: 7 }],
    // --stage: a new ramp whose targets are rates per second.
    [
      "--stage on constant-arrival-rate",
      constantRate,
      {
        stages: [
          { duration: "2s", target: 20 },
          { duration: "3s", target: 20 },
        ],
      },
      { executor: "ramping-arrival-rate", durationMs: 5_000, peakRatePerS: 20 },
    ],
    // --rps caps every rate of the profile.
    ["--rps on ramping-arrival-rate", rampingRate, { rps: 4 }, { executor: "ramping-arrival-rate", durationMs: 60_000, peakRatePerS: 4 }],
    // A preset is written out, then held at its rung for -d; its thresholds stay.
    ["-d on a preset", preset, { duration: "5s" }, { executor: "constant-arrival-rate", durationMs: 5_000, peakRatePerS: 100 }],
    // A VU spec keeps its VUs for the new duration (k6's constant-vus shortcut).
    ["-d on constant-vus", constantVus, { duration: "10s" }, { executor: "constant-vus", durationMs: 10_000, vus: 20 }],
    // A VU ramp: k6's shortcut at the VUs it starts from (where k6's stages shortcut puts `vus`).
    ["-d on ramping-vus", rampingVus, { duration: "10s" }, { executor: "constant-vus", durationMs: 10_000, vus: 5 }],
    // --vus picks the level instead.
    ["-d --vus on ramping-vus", rampingVus, { duration: "10s", vus: 3 }, { executor: "constant-vus", vus: 3 }],
    // -i: k6's shared-iterations over the spec's VUs, -d as its maxDuration.
    [
      "-i -d on constant-vus",
      constantVus,
      { iterations: 100, duration: "20s" },
      { executor: "shared-iterations", durationMs: 20_000, vus: 20, iterations: 100 },
    ],
    // --stage: a new VU ramp from the spec's start.
    ["--stage on ramping-vus", rampingVus, { stages: [{ duration: "4s", target: 8 }] }, { executor: "ramping-vus", durationMs: 4_000, vus: 8 }],
    // --vus alone sets a constant-vus spec's VUs.
    ["--vus on constant-vus", constantVus, { vus: 2 }, { executor: "constant-vus", durationMs: 60_000, vus: 2 }],
  ])("%s", (_, spec, load, expected) => {
    expect(decoded(spec, load)).toMatchObject(expected);
  });

  it.each<[string, Record<string, unknown>, LoadFlags, RegExp]>([
    // An arrival-rate run has no VU count or iteration count to set.
    ["--vus on an arrival-rate spec", constantRate, { vus: 5 }, /--vus: a constant-arrival-rate run's load is its arrival rate/],
    ["-i on an arrival-rate spec", rampingRate, { iterations: 5 }, /-i: a ramping-arrival-rate run has no iteration count/],
    // A ramp has no single rate to replace.
    ["--rate alone on a ramp", rampingRate, { rate: 5 }, /--rate: a ramping-arrival-rate profile has no single rate/],
    // A VU run's rate is not the CLI's to set, nor to cap.
    ["--rate on a VU spec", constantVus, { rate: 5 }, /--rate: a constant-vus run's rate follows from its VUs/],
    ["--rps on a VU spec", rampingVus, { rps: 5 }, /--rps: edgeload does not throttle a ramping-vus run's VUs/],
    ["--vus alone on a VU ramp", rampingVus, { vus: 5 }, /--vus: a ramping-vus spec has no single VU count/],
    // Pairs k6 refuses too.
    ["-d with --stage", constantVus, { duration: "5s", stages: [{ duration: "1s", target: 1 }] }, /-d and --stage: give one/],
    ["-i with --stage", constantVus, { iterations: 5, stages: [{ duration: "1s", target: 1 }] }, /-i and --stage: give one/],
  ])("refuses %s, naming the flag", (_, spec, load, message) => {
    expect(decoded(spec, load).refused).toMatch(message);
  });

  it("gives each named scenario -d, holding it at its level from its own start, and refuses the other load flags", () => {
    const { target: _a, ...browse } = constantRate;
    const { target: _b, ...admin } = rampingVus;
    const spec = { target, scenarios: { browse, admin: { ...admin, startTime: "5s" } } };
    const applied = applyLoadFlags(spec, { duration: "10s" });
    if (!applied.ok) throw new Error(applied.problems.join());
    const parsed = parseRunSpec(applied.value);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    expect(parsed.spec.scenarios!.map((s) => [s.name, s.spec.executor, s.startMs, s.spec.durationMs])).toEqual([
      ["browse", "constant-arrival-rate", 0, 10_000],
      ["admin", "constant-vus", 5_000, 10_000],
    ]);
    expect(parsed.spec.durationMs).toBe(15_000);
    const refused = applyLoadFlags(spec, { vus: 3, rps: 2 });
    expect(refused.ok ? "" : refused.problems.join("\n")).toMatch(/--vus: this spec has named scenarios[\s\S]*--rps: this spec has named scenarios/);
  });

  it("runs examples/crud-hot-keys.json for exactly -d: k6's 1 VU (its ramp starts from 0), or --vus", () => {
    const crud = JSON.parse(readFileSync(join(PROJECT_ROOT, "examples/crud-hot-keys.json"), "utf8")) as Record<string, unknown>;
    expect(decoded(crud, { duration: "10s" })).toMatchObject({ executor: "constant-vus", durationMs: 10_000, vus: 1 });
    expect(decoded(crud, { duration: "10s", vus: 50 })).toMatchObject({ executor: "constant-vus", durationMs: 10_000, vus: 50 });
  });

  it("leaves a spec without load flags as it is", () => {
    expect(applyLoadFlags(rampingVus, {})).toEqual({ ok: true, value: rampingVus });
  });
});

describe("parseLoadFlags", () => {
  it("reads k6's forms: -d as written, --stage as DURATION:TARGET, repeated or comma-separated", () => {
    expect(parseLoadFlags({ vus: "10", duration: "1m30s", stage: ["10s:5,20s:0", "5s:1"], rps: "2.5" })).toEqual({
      ok: true,
      value: {
        vus: 10,
        duration: "1m30s",
        stages: [
          { duration: "10s", target: 5 },
          { duration: "20s", target: 0 },
          { duration: "5s", target: 1 },
        ],
        rps: 2.5,
      },
    });
  });

  it("names every bad flag at once", () => {
    const r = parseLoadFlags({ vus: "0", duration: "soon", iterations: "1.5", stage: ["30s"], rate: "-1", rps: "0" });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect([...r.problems].sort()).toEqual(
        [
          '--stage: "30s" is not DURATION:TARGET like "30s:100"',
          '--vus: "0" is not a whole number of at least 1',
          '--duration: "soon" is not a duration above 0 like "30s" or "1m30s"',
          '--iterations: "1.5" is not a whole number of at least 1',
          '--rate: "-1" is not a number of 0 or more per second',
          '--rps: "0" is not a number of more than 0 per second',
        ].sort(),
      );
    }
  });
});
