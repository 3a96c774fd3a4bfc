/**
 * Run specs naming a built-in scenario and a preset; thresholds and summaries over the
 * scenario's custom metrics.
 */
import { describe, expect, it } from "vitest";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { planRun } from "../plan/plan.ts";
import { expandPreset, presetNames } from "./presets.ts";
import { redactSpec, REDACTED } from "./redact.ts";
import { specProblems, validSpec } from "../../test/support/run-spec-fixtures.ts";
import { RunTotals } from "../run/run-totals.ts";
import { MetricStats } from "../metrics/metric-stats.ts";
import { buildSummary } from "../run/summary.ts";
import { renderSummary } from "../run/summary-text.ts";

const introspect = {
  target: "http://127.0.0.1:9090",
  scenario: { name: "introspect", seed: "tokens-3k", clientId: "cid", clientSecret: "s3cret" },
};

const ok = validSpec;
const problems = specProblems;

describe("presets", () => {
  it("ramps 15 s, holds 180 s, ramps down 15 s; rps100 is the short shape", () => {
    const rps300 = expandPreset("introspect", "rps300");
    expect(rps300.ok && rps300.value.stages).toEqual([
      { target: 300, duration: "15000ms" },
      { target: 300, duration: "180000ms" },
      { target: 0, duration: "15000ms" },
    ]);
    const rps100 = expandPreset("introspect", "rps100");
    expect(rps100.ok && rps100.value.stages.map((s) => s.duration)).toEqual(["10000ms", "60000ms", "10000ms"]);
  });

  it("shortens every stage by durationScale, keeping each at least a second", () => {
    const r = expandPreset("userinfo", "rps500", 0.01);
    expect(r.ok && r.value.stages.map((s) => s.duration)).toEqual(["1000ms", "1800ms", "1000ms"]);
  });

  it("offers each scenario's ladder from AUTHRIM.md, and names them when one is unknown", () => {
    expect(presetNames("introspect")).toEqual(["rps100", "rps300", "rps600", "rps800", "rps1000"]);
    expect(presetNames("userinfo")).toContain("rps5000");
    const r = expandPreset("introspect", "rps250");
    expect(!r.ok && r.error).toMatch(/unknown preset "rps250" for introspect; use one of rps100, rps300/);
  });
});

describe("scenario specs", () => {
  it("takes steps, seed and options from the scenario and the profile and thresholds from the preset", () => {
    const spec = ok({ ...introspect, preset: "rps300", durationScale: 0.1 });
    expect(spec.steps.map((s) => s.name)).toEqual(["introspect"]);
    expect(spec.scenario).toEqual({ name: "introspect", seed: "tokens-3k", options: { clientId: "cid", clientSecret: "s3cret", scope: "openid profile" } });
    expect(spec.preset).toBe("rps300");
    expect(spec.executor).toBe("ramping-arrival-rate");
    expect(spec.peakRatePerS).toBe(300);
    expect(spec.durationMs).toBe(1500 + 18_000 + 1500);
    expect(spec.thresholds.false_positives).toEqual(["count==0"]);
    expect(spec.thresholds.active_correct).toEqual(["rate>0.999"]);
  });

  it.each([
    // [the spec's load and thresholds, the correctness thresholds the run carries, why]
    [
      { executor: "constant-arrival-rate", rate: 20, duration: "20s" },
      { false_positives: ["count==0"], false_negatives: ["count==0"], active_correct: ["rate>0.999"] },
      "a --rate run: no preset, yet false positives fail it",
    ],
    [
      { executor: "constant-arrival-rate", rate: 20, duration: "20s", thresholds: { false_positives: ["count<5"] } },
      { false_positives: ["count<5"], false_negatives: ["count==0"], active_correct: ["rate>0.999"] },
      "the spec's own threshold on a metric wins",
    ],
    [{ executor: "constant-arrival-rate", rate: 20, duration: "20s", correctnessThresholds: false }, {}, "what --no-thresholds sets: none"],
  ])("applies the scenario's correctness thresholds by default: %j", (load, expected, _why) => {
    const spec = ok({ ...introspect, ...load });
    const correctness = Object.fromEntries(
      Object.entries(spec.thresholds).filter(([m]) => ["false_positives", "false_negatives", "active_correct"].includes(m)),
    );
    expect(correctness).toEqual(expected);
    expect(spec.thresholds.http_req_duration).toBeUndefined(); // latency stays the preset's business
  });

  it.each([
    // [scenario, its success rate and threshold]
    ["userinfo", "userinfo_success", "rate>0.999"],
    ["introspect", "introspect_success", "rate>0.99"],
    ["token-exchange", "token_exchange_success", "rate>0.99"],
    ["silent-auth", "silent_auth_success", "rate>0.98"],
    ["refresh", "rotation_success", "rate>0.99"],
    ["otp-login", "otp_login_success", "rate>0.99"],
    // Answers only a provider set up wrongly gives are bounded at zero (issue 40).
    ["token-exchange", "valid_token_rejected", "count==0"],
    ["silent-auth", "login_required", "count==0"],
    ["silent-auth", "consent_required", "count==0"],
  ])("makes success part of a %s run's verdict in every path, --rate included: %s %s", (name, metric, threshold) => {
    const scenario = { ...introspect.scenario, name, redirectUri: "http://127.0.0.1:9091/cb", adminSecret: "admin" };
    const spec = ok({ ...introspect, scenario, executor: "constant-arrival-rate", rate: 20, duration: "20s" });
    // A provider that refused what it should accept (a 500 for an unknown key, exchange
    // off, consent required) fails the run on its success rate, never passes it.
    expect(spec.thresholds[metric]).toEqual([threshold]);
  });

  it("lets the spec's own thresholds replace the preset's for the same metric", () => {
    const spec = ok({ ...introspect, preset: "rps100", thresholds: { http_req_duration: ["p(95)<50"] } });
    expect(spec.thresholds.http_req_duration).toEqual(["p(95)<50"]);
    expect(spec.thresholds.false_negatives).toEqual(["count==0"]);
  });

  it("names what a scenario is missing, and refuses steps together with a scenario", () => {
    const p = problems({
      target: "http://127.0.0.1:9090",
      scenario: { name: "otp-login" },
      steps: [{ path: "/" }],
      executor: "constant-arrival-rate",
      rate: 1,
      duration: "1s",
    });
    expect(p.map((x) => x.field).sort()).toEqual(
      ["scenario", "scenario.adminSecret", "scenario.clientId", "scenario.clientSecret", "scenario.redirectUri", "scenario.seed"].sort(),
    );
    expect(
      problems({ target: "http://127.0.0.1:9090", scenario: { name: "nope" }, executor: "constant-arrival-rate", rate: 1, duration: "1s" })[0]!.detail,
    ).toMatch(/userinfo, introspect, token-exchange, refresh, silent-auth, otp-login/);
  });

  it("refuses a preset with its own profile, an unknown preset, and durationScale alone", () => {
    expect(problems({ ...introspect, preset: "rps300", rate: 10 }).map((p) => p.field)).toContain("preset");
    expect(problems({ ...introspect, preset: "rps7" })[0]!.detail).toMatch(/use one of rps100/);
    expect(problems({ ...introspect, executor: "constant-arrival-rate", rate: 1, duration: "1s", durationScale: 0.5 })[0]!.field).toBe("durationScale");
  });

  it("accepts thresholds on the scenario's custom metrics, with {type:…}, and not on another scenario's", () => {
    ok({
      ...introspect,
      executor: "constant-arrival-rate",
      rate: 1,
      duration: "1s",
      thresholds: { "false_positives{type:revoked}": ["count==0"], introspect_duration: ["p(95)<300"] },
    });
    const p = problems({
      ...introspect,
      executor: "constant-arrival-rate",
      rate: 1,
      duration: "1s",
      thresholds: { rotation_success: ["rate>0.99"], "http_req_duration{type:valid}": ["p(95)<1"] },
    });
    // A `type` tag on a built-in metric is any k6 tag filter (a recorded sub-metric), as k6 accepts it.
    expect(p.map((x) => x.field)).toEqual(["thresholds.rotation_success"]);
  });

  it("redacts the scenario's client and admin secrets", () => {
    const spec = redactSpec(
      ok({
        ...introspect,
        scenario: { ...introspect.scenario, name: "otp-login", seed: "users", adminSecret: "adm", redirectUri: "http://127.0.0.1/cb" },
        executor: "constant-arrival-rate",
        rate: 1,
        duration: "1s",
      }),
    );
    expect(spec.scenario!.options).toMatchObject({ clientId: "cid", clientSecret: REDACTED, adminSecret: REDACTED });
    expect(JSON.stringify(spec)).not.toMatch(/s3cret|"adm"/);
  });
});

describe("summaries of scenario runs", () => {
  const spec = ok({
    ...introspect,
    executor: "constant-arrival-rate",
    rate: 10,
    duration: "10s",
    shards: 2,
    regions: ["wnam", "weur"],
    thresholds: {
      false_positives: ["count==0"],
      "false_positives{type:revoked}": ["count==0"],
      active_correct: ["rate>0.999"],
      introspect_duration: ["p(95)<300"],
    },
  });
  const planned = planRun(spec, new ArrivalSchedule(spec.stages).total);
  if (!planned.ok) throw new Error();
  const region = (revokedAccepted: number) => {
    const s = new MetricStats();
    s.counters.sent = s.counters.completed = 50;
    for (let i = 0; i < 50; i++) {
      s.custom.rate("active_correct", i >= revokedAccepted);
      s.custom.trend("introspect_duration", 20_000);
    }
    if (revokedAccepted) {
      s.custom.count("false_positives", revokedAccepted);
      s.custom.count("false_positives{type:revoked}", revokedAccepted);
    }
    return s;
  };
  const totals = new RunTotals();
  // Merged across regions through the wire form, as the coordinator does.
  totals.addWire(0, "wnam", 0, region(0).toWire());
  totals.addWire(1, "weur", 0, region(2).toWire());
  const summary = buildSummary({
    runId: "r-x",
    status: "failed",
    spec,
    plan: planned.plan,
    t0Ms: 0,
    endMs: 10_000,
    totals,
    shards: planned.plan.shards.map((s) => ({ index: s.index, region: s.region, segment: s.segment, colo: "local", telemetry: null })),
  });
  const m = summary.metrics as Record<string, any>;

  it("shows every declared counter, zero included, and each recorded tagged variant, in k6 shapes", () => {
    // The scenario's correctness thresholds apply by default (core/spec/scenario-schema.ts).
    expect(m.false_negatives).toEqual({ type: "counter", count: 0, rate: 0, thresholds: { "count==0": false } });
    expect(m.false_positives).toMatchObject({ type: "counter", count: 2, thresholds: { "count==0": true } });
    expect(m["false_positives{type:revoked}"]).toMatchObject({ count: 2, thresholds: { "count==0": true } });
    expect(m.active_correct).toMatchObject({ type: "rate", passes: 98, fails: 2, value: 0.98 });
    expect(m.introspect_duration["p(95)"]).toBeCloseTo(20, 0);
    expect(summary.edgeload.scenario).toMatchObject({ name: "introspect", seed: "tokens-3k", preset: null });
  });

  it("evaluates thresholds on custom metrics", () => {
    const byMetric = Object.fromEntries(summary.edgeload.thresholds.map((t) => [t.metric, t]));
    expect(byMetric.false_positives).toMatchObject({ ok: false, observed: 2 });
    expect(byMetric.active_correct).toMatchObject({ ok: false, observed: 0.98 });
    expect(byMetric.introspect_duration!.ok).toBe(true);
  });

  it("prints a scenario block in the text summary", () => {
    const text = renderSummary(summary);
    expect(text).toMatch(/SCENARIO introspect · seed tokens-3k/);
    expect(text).toMatch(/false_positives\{type:revoked\}\.+: 2 /);
    expect(text).toMatch(/✓ introspect_duration 'p\(95\)<300' observed 20\.\dms/);
  });
});
