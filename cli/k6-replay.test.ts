import { describe, expect, it } from "vitest";
import { CliError } from "./connection.ts";
import { k6Invocation, type StoredSpec } from "./k6-replay.ts";

/** A stored spec as D1 keeps it (core/spec/run-spec.ts RunSpec, secrets redacted). */
function spec(over: Partial<StoredSpec> = {}): StoredSpec {
  return {
    target: "http://127.0.0.1:9090",
    executor: "constant-arrival-rate",
    stages: [{ durationMs: 5000, fromPerS: 300, toPerS: 300 }],
    durationMs: 5000,
    maxInFlight: 300,
    timeoutMs: 10_000,
    scenario: null,
    steps: [{ name: "default", method: "GET", path: "/delay?ms=20", headers: {}, body: null, expectedStatuses: null }],
    ...over,
  };
}

describe("k6Invocation", () => {
  it("replays a custom step through http.js at the run's rate, cap and timeout", () => {
    const inv = k6Invocation(spec(), {});
    expect(inv.script).toBe("k6-scripts/http.js");
    expect(inv.vars).toEqual({
      BASE_URL: "http://127.0.0.1:9090",
      PATH: "/delay?ms=20",
      METHOD: "GET",
      STEP: "default",
      RATE: "300",
      DURATION: "5000ms",
      MAX_VUS: "300",
      TIMEOUT: "10000ms",
    });
    // What an operator's shell may have set for the scripts must not steer the replay.
    expect(inv.env).toMatchObject({ PRESET: "", STAGES: "", TOKEN_URL: "", K6_CLOUD_DISTRIBUTION: "" });
  });

  it("replays a ramping run stage by stage, so a shortened preset stays shortened", () => {
    const stages = [
      { durationMs: 1500, fromPerS: 0, toPerS: 300 },
      { durationMs: 18_000, fromPerS: 300, toPerS: 300 },
      { durationMs: 1500, fromPerS: 300, toPerS: 0 },
    ];
    const inv = k6Invocation(spec({ executor: "ramping-arrival-rate", stages, durationMs: 21_000 }), {});
    expect(JSON.parse(inv.vars.STAGES!)).toEqual([
      { target: 300, duration: "1500ms" },
      { target: 300, duration: "18000ms" },
      { target: 0, duration: "1500ms" },
    ]);
    expect(inv.vars).toMatchObject({ START_RATE: "0" });
    expect(inv.vars).not.toHaveProperty("RATE");
  });

  it("gives a scenario its script, the seed's signed URL and the client, secrets only in the environment", () => {
    const scenario = { name: "introspect", seed: "tokens-3k", options: { clientId: "c1", clientSecret: "[redacted]", scope: "openid profile" } };
    const inv = k6Invocation(spec({ scenario, steps: [] }), { tokenUrl: "http://api/seeds/tokens-3k?exp=1&sig=x", clientSecret: "s3cret" });
    expect(inv.script).toBe("k6-scripts/introspect.js");
    expect(inv.env).toMatchObject({ TOKEN_URL: "http://api/seeds/tokens-3k?exp=1&sig=x", CLIENT_ID: "c1", CLIENT_SECRET: "s3cret" });
    expect(JSON.stringify(inv.vars)).not.toContain("s3cret");
    expect(inv.vars).toMatchObject({ SCOPE: "openid profile", RATE: "300" });
  });

  it("never passes a redacted placeholder on as a secret: it asks for the flags instead", () => {
    const scenario = {
      name: "otp-login",
      seed: "users",
      options: { clientId: "c1", clientSecret: "[redacted]", adminSecret: "[redacted]", redirectUri: "http://127.0.0.1/callback" },
    };
    expect(() => k6Invocation(spec({ scenario, steps: [] }), {})).toThrow(/needs --client-secret and --admin-secret/);
    const inv = k6Invocation(spec({ scenario, steps: [] }), { clientSecret: "s", adminSecret: "a" });
    expect(inv.env).toMatchObject({ CLIENT_ID: "c1", CLIENT_SECRET: "s", ADMIN_SECRET: "a", REDIRECT_URI: "http://127.0.0.1/callback" });
  });

  // [why k6 cannot replay it, the spec]
  it.each([
    ["a closed-model run", spec({ executor: "ramping-vus" })],
    ["two steps", spec({ steps: [spec().steps[0]!, { ...spec().steps[0]!, name: "b" }] })],
    ["a templated path", spec({ steps: [{ ...spec().steps[0]!, path: "/items/{{iteration}}" }] })],
    ["a redacted header", spec({ steps: [{ ...spec().steps[0]!, headers: { authorization: "[redacted]" } }] })],
    // Redaction hides a URL's credentials in place: k6 would send the placeholder.
    ["a path with a redacted credential", spec({ steps: [{ ...spec().steps[0]!, path: "/items?api_key=[redacted]" }] })],
    ["a target with redacted userinfo", spec({ target: "http://[redacted]@127.0.0.1:9090" })],
    ["a step that captures values", spec({ steps: [{ ...spec().steps[0]!, capture: { id: { json: "$.id" } } }] })],
  ])("refuses %s as invalid config", (_why, s) => {
    expect(() => k6Invocation(s, {})).toThrow(CliError);
    try {
      k6Invocation(s, {});
    } catch (error) {
      expect((error as CliError).code).toBe(104);
    }
  });
});
