import { describe, expect, it } from "vitest";
import { parseRunSpec } from "../core/spec/run-spec.ts";
import { applyK6Flags } from "./k6-option-overrides.ts";
import { applyRunFlags, type RunFlags } from "./run-overrides.ts";

const target = "http://127.0.0.1:9090";
const constantRate = {
  target,
  steps: [{ path: "/" }],
  executor: "constant-arrival-rate",
  rate: 5,
  duration: "5s",
  thresholds: { http_req_failed: ["rate<0.01"], checks: ["rate>0.9"] },
};
const named = {
  target,
  regions: ["wnam"],
  thresholds: { http_req_failed: ["rate<0.01"] },
  scenarios: {
    a: { executor: "constant-vus", vus: 1, duration: "2s", steps: [{ path: "/" }], regions: ["weur"], thresholds: { http_req_duration: ["p(95)<300"] } },
  },
};
/** Two named scenarios: shards and the in-flight cap have no single scenario to go to. */
const twoNamed = { ...named, scenarios: { ...named.scenarios, b: { ...named.scenarios.a, regions: ["enam"] } } };
const soleArrival = {
  target,
  scenarios: { only: { executor: "constant-arrival-rate", rate: 5, duration: "2s", steps: [{ path: "/" }], maxVUs: 3 } },
};
const preset = { target, scenario: { name: "userinfo", seed: "tokens", clientId: "c", clientSecret: "s" }, preset: "rps100", durationScale: 0.1 };

function decoded(spec: Record<string, unknown>, flags: RunFlags) {
  const applied = applyRunFlags(spec, flags);
  if (!applied.ok) return { refused: applied.problems.join("\n") };
  const parsed = parseRunSpec(applied.value);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.spec;
}

describe("run flags on a spec", () => {
  it.each<[string, Record<string, unknown>, RunFlags, Record<string, unknown>]>([
    // The command line's target, name and placement win over the spec's.
    [
      "--target --name --shards --regions --timeout",
      constantRate,
      { target: "https://example.com/", name: "n", shards: "3", regions: "wnam,weur", timeout: "2s" },
      { target: "https://example.com", name: "n", shards: 3, regions: ["wnam", "weur"], timeoutMs: 2_000 },
    ],
    // --max-vus caps an arrival-rate run's iterations in flight.
    ["--max-vus", constantRate, { maxVUs: "7" }, { maxInFlight: 7 }],
    // --tag adds to the run's tags.
    ["--tag", { ...constantRate, tags: { team: "a", env: "x" } }, { tags: ["env=staging", "build=42"] }, { tags: { team: "a", env: "staging", build: "42" } }],
    // --threshold replaces the spec's thresholds of its metric and keeps the others.
    [
      "--threshold",
      constantRate,
      { thresholds: ["http_req_failed=rate<0.5", "http_req_duration=p(95)<100"] },
      { thresholds: { http_req_failed: ["rate<0.5"], checks: ["rate>0.9"], http_req_duration: ["p(95)<100"] } },
    ],
    // --no-thresholds leaves none of the spec's.
    ["--no-thresholds", constantRate, { noThresholds: true }, { thresholds: {} }],
    // ...nor of a preset's, whose profile stays.
    ["--no-thresholds on a preset", preset, { noThresholds: true }, { thresholds: {}, executor: "ramping-arrival-rate", peakRatePerS: 100 }],
    // In a spec of named scenarios, --regions replaces each scenario's own, and --no-thresholds drops theirs.
    ["--regions and --no-thresholds on named scenarios", named, { regions: "enam", noThresholds: true }, { regions: ["enam"], thresholds: {} }],
  ])("%s", (_, spec, flags, expected) => {
    expect(decoded(spec, flags)).toMatchObject(expected);
  });

  it("sets --shards and --max-vus on a spec's one named scenario (a k6 script's `scenarios: {one: …}`)", () => {
    const spec = decoded(soleArrival, { shards: "25", maxVUs: "150" });
    expect("scenarios" in spec ? spec.scenarios?.map((s) => [s.name, s.spec.shards, s.spec.maxInFlight]) : spec).toEqual([["only", 25, 150]]);
  });

  it.each<[string, Record<string, unknown>, RunFlags, RegExp]>([
    // Among several named scenarios, each sets its own shards and in-flight cap: no single value to set.
    ["--shards on named scenarios", twoNamed, { shards: "2" }, /--shards: this spec has named scenarios/],
    ["--max-vus on named scenarios", twoNamed, { maxVUs: "2" }, /--max-vus: this spec has named scenarios/],
    // A VU run's in-flight count is its VUs, in a named scenario too.
    ["--max-vus on a VU spec", { ...named.scenarios.a, target }, { maxVUs: "2" }, /--max-vus: caps iterations in flight in an arrival-rate run/],
    ["--max-vus on a named VU scenario", named, { maxVUs: "2" }, /--max-vus: caps iterations in flight in an arrival-rate run; a constant-vus run/],
    ["a bad --target", constantRate, { target: "example.com" }, /--target: "example.com" is not an absolute http or https URL/],
    ["a bad --regions", constantRate, { regions: "mars" }, /--regions: "mars" must be location hints/],
    ["a bad --threshold", constantRate, { thresholds: ["p(95)<300"] }, /--threshold: "p\(95\)<300" must look like/],
    ["--no-thresholds with --threshold", constantRate, { noThresholds: true, thresholds: ["checks=rate>0.5"] }, /--no-thresholds and --threshold: give one/],
  ])("refuses %s, naming the flag", (_, spec, flags, message) => {
    expect((decoded(spec, flags) as { refused?: string }).refused).toMatch(message);
  });
});

describe("k6's flags on a script's options", () => {
  it.each<[string, Record<string, unknown>, Parameters<typeof applyK6Flags>[1], Record<string, unknown>]>([
    // -d replaces stages (and scenarios): k6's constant-vus shortcut at the script's vus.
    ["-d over stages", { vus: 4, stages: [{ duration: "1m", target: 50 }] }, { load: { duration: "10s" } }, { vus: 4, duration: "10s" }],
    // -d over scenarios: they go, as in k6.
    [
      "-d over scenarios",
      { scenarios: { s: { executor: "constant-vus", vus: 2, duration: "1m" } } },
      { load: { duration: "5s", vus: 3 } },
      { vus: 3, duration: "5s" },
    ],
    // -i with -d: shared iterations with -d as their maxDuration.
    ["-i -d", { vus: 2, duration: "1m" }, { load: { iterations: 10, duration: "30s" } }, { vus: 2, iterations: 10, duration: "30s" }],
    // --stage replaces a duration shortcut.
    ["--stage", { vus: 2, duration: "1m" }, { load: { stages: [{ duration: "5s", target: 3 }] } }, { vus: 2, stages: [{ duration: "5s", target: 3 }] }],
    // --vus alone sets the shortcut's VUs.
    ["--vus", { vus: 2, duration: "1m" }, { load: { vus: 9 } }, { vus: 9, duration: "1m" }],
    // --tag adds, --threshold replaces its metric's, --no-thresholds drops all.
    [
      "--tag --threshold",
      { tags: { a: "1" }, thresholds: { checks: ["rate>0.9"], http_req_failed: ["rate<0.1"] } },
      { load: {}, tags: ["b=2"], thresholds: ["checks=rate>0.5"] },
      { tags: { a: "1", b: "2" }, thresholds: { checks: ["rate>0.5"], http_req_failed: ["rate<0.1"] } },
    ],
    ["--no-thresholds", { thresholds: { checks: ["rate>0.9"] } }, { load: {}, noThresholds: true }, {}],
    // --rps replaces the script's rps (k6-compat/runtime/rps-limit.ts applies it).
    ["--rps", { vus: 2, duration: "1m", rps: 50 }, { load: { rps: 5 } }, { vus: 2, duration: "1m", rps: 5 }],
  ])("%s", (_, options, flags, expected) => {
    expect(applyK6Flags(options, flags)).toEqual({ ok: true, value: expected });
  });

  it.each<[string, Record<string, unknown>, Parameters<typeof applyK6Flags>[1], RegExp]>([
    // k6 would ignore --vus next to the script's scenarios; refused instead.
    [
      "--vus alone over scenarios",
      { scenarios: { s: { executor: "constant-vus", vus: 2, duration: "1m" } } },
      { load: { vus: 3 } },
      /--vus: the script's scenarios set their own VUs/,
    ],
    ["-d with --stage", {}, { load: { duration: "5s", stages: [{ duration: "1s", target: 1 }] } }, /-d and --stage: give one/],
    // k6's --rps is a whole number.
    ["--rps 2.5", {}, { load: { rps: 2.5 } }, /--rps: k6 takes a whole number of requests per second, got 2.5/],
  ])("refuses %s", (_, options, flags, message) => {
    const r = applyK6Flags(options, flags);
    expect(r.ok ? "" : r.problems.join("\n")).toMatch(message);
  });
});
