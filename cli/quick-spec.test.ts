import { describe, expect, it } from "vitest";
import { parseRunSpec } from "../core/spec/run-spec.ts";
import { DEMO_SCENARIOS, demoSpec, quickSpec, scenarioRunSpec } from "./quick-spec.ts";

describe("quickSpec", () => {
  it("turns vegeta-like flags into a valid constant-arrival-rate spec", () => {
    const spec = quickSpec({
      target: "http://127.0.0.1:9090/delay?ms=20",
      rate: 1000,
      duration: "15s",
      shards: 4,
      regions: "wnam,enam",
      headers: ["X-A: 1"],
      thresholds: ["http_req_duration=p(95)<300"],
    });
    const parsed = parseRunSpec(spec);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) {
      expect(parsed.spec).toMatchObject({ target: "http://127.0.0.1:9090", shards: 4, regions: ["wnam", "enam"], peakRatePerS: 1000 });
      expect(parsed.spec.steps[0]).toMatchObject({ path: "/delay?ms=20", headers: { "X-A": "1" } });
      expect(parsed.spec.thresholds).toEqual({ http_req_duration: ["p(95)<300"] });
    }
  });

  it.each([
    [{ target: "127.0.0.1:9090" }, /not an absolute URL/],
    [{ headers: ["no-colon"] }, /Name: value/],
    [{ thresholds: ["p(95)<300"] }, /http_req_duration=p\(95\)<300/],
  ])("explains bad flags: %j", (change, message) => {
    expect(() => quickSpec({ target: "http://127.0.0.1:1/", rate: 1, duration: "1s", ...change })).toThrow(message);
  });

  it("builds demo specs that validate: each scenario at a shortened rps100 with the preset's thresholds, 4 shards in 4 regions", () => {
    for (const scenario of DEMO_SCENARIOS) {
      const parsed = parseRunSpec(demoSpec(scenario, "http://127.0.0.1:9090", "demo-tokens", { clientId: "c", clientSecret: "s" }));
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
      expect([parsed.spec.peakRatePerS, parsed.spec.shards, parsed.spec.regions, parsed.spec.scenario?.seed]).toEqual([
        100,
        4,
        ["wnam", "enam", "weur", "apac"],
        "demo-tokens",
      ]);
      expect(parsed.spec.durationMs).toBe(12_000);
      expect(Object.keys(parsed.spec.thresholds)).toContain("http_req_duration");
    }
  });

  it("builds scenario specs from flags, leaving out options the scenario does not need", () => {
    const spec = scenarioRunSpec(
      { scenario: "userinfo", target: "http://127.0.0.1:9090/", seed: "t", rate: 10, duration: "5s", clientSecret: "s", adminSecret: "a" },
      [],
    );
    expect(spec).toMatchObject({ target: "http://127.0.0.1:9090", scenario: { name: "userinfo", seed: "t" }, executor: "constant-arrival-rate", rate: 10 });
    expect(JSON.stringify(spec)).not.toMatch(/"s"|"a"/);
    expect(() => scenarioRunSpec({ scenario: "userinfo", target: "http://x", preset: "rps100", rate: 5 }, [])).toThrow(/--preset sets the load profile/);
    expect(() => scenarioRunSpec({ scenario: "userinfo", target: "http://x" }, [])).toThrow(/--preset \(e.g. rps100\), or --rate and --duration/);
  });
});
