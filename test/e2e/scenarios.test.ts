/**
 * Every built-in scenario end to end at a low rate: seeds made by the real seeders against
 * the Authrim-style target of the local stack, stored in R2 through the API, read by the
 * shards, and the scenario's correctness metrics checked in the run summary. Load goes only
 * to the loopback target.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { EdgeloadClient } from "../../cli/client.ts";
import type { LocalStack } from "../../cli/local-stack.ts";
import { seedAccessTokens } from "../../seeds/access-tokens.ts";
import { seedRefreshTokens } from "../../seeds/refresh-tokens.ts";
import { seedSessions } from "../../seeds/sessions.ts";
import { seedUsers } from "../../seeds/users.ts";
import { runCli } from "./cli-process.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

const fixture = useLocalStack("edgeload-scenarios-");
let stack: LocalStack;
let client: EdgeloadClient;

beforeAll(async () => {
  ({ stack, client } = fixture);
  const access = { baseUrl: stack.targetUrl, adminSecret: stack.targetAdminSecret, ...stack.targetClient };
  const [tokens, families, sessions, users] = await Promise.all([
    seedAccessTokens({ ...access, count: 120, users: 10 }),
    seedRefreshTokens({ ...access, count: 60, setName: "e2e-refresh" }),
    seedSessions({ ...access, count: 20, users: 10 }),
    seedUsers({ ...access, count: 10 }),
  ]);
  await Promise.all([
    client.uploadSeed("e2e-tokens", tokens),
    client.uploadSeed("e2e-refresh", families),
    client.uploadSeed("e2e-sessions", sessions),
    client.uploadSeed("e2e-users", users),
  ]);
});

/** Runs a scenario at a constant low rate and returns its summary's metrics. */
async function runScenario(name: string, seed: string, rate: number, overrides: Record<string, unknown> = {}) {
  const { clientId, clientSecret, redirectUri } = stack.targetClient;
  const run = await client.createRun({
    name: `e2e ${name}`,
    target: stack.targetUrl,
    scenario: { name, seed, clientId, clientSecret, redirectUri, ...(name === "otp-login" ? { adminSecret: stack.targetAdminSecret } : {}) },
    executor: "constant-arrival-rate",
    rate,
    duration: "3s",
    shards: 2,
    regions: ["wnam", "weur"],
    timeout: "5s",
    ...overrides,
  });
  const view = await client.waitForEnd(run.id, () => {}, 250);
  const summary = await client.summary(run.id);
  return { view, metrics: summary.metrics as Record<string, any>, summary };
}

describe("built-in scenarios against the Authrim-style target", () => {
  it("introspect: every token type judged correctly, zero false positives and negatives", async () => {
    const { metrics } = await runScenario("introspect", "e2e-tokens", 40);
    expect(metrics.http_reqs.count).toBe(120);
    expect(metrics.active_correct).toMatchObject({ passes: 120, fails: 0 });
    expect(metrics.false_positives.count).toBe(0);
    expect(metrics.false_negatives.count).toBe(0);
    // A fixed shuffle spreads the set's mix over the run: every type was exercised.
    for (const type of ["valid", "valid_exchanged", "expired", "revoked", "wrong_audience", "wrong_client"]) {
      expect(metrics[`active_correct{type:${type}}`].passes, type).toBeGreaterThan(0);
    }
    expect(metrics.wrong_audience_rejected.value).toBe(1);
    expect(metrics.wrong_client_rejected.value).toBe(1);
    expect(metrics.exchanged_token_correct.value).toBe(1);
  });

  it("userinfo: every valid token answers with its subject", async () => {
    const { metrics } = await runScenario("userinfo", "e2e-tokens", 40);
    expect(metrics.userinfo_success).toMatchObject({ passes: 120, fails: 0 });
    expect(metrics.http_req_failed.passes).toBe(0);
  });

  it("token-exchange: valid subjects exchanged, no expired or revoked subject accepted, revocation reported", async () => {
    const { metrics } = await runScenario("token-exchange", "e2e-tokens", 40, {
      thresholds: { invalid_token_accepted: ["count==0"], revoked_token_accepted: ["count==0"] },
    });
    expect(metrics.token_exchange_success).toMatchObject({ passes: 120, fails: 0 });
    expect(metrics.invalid_token_accepted).toMatchObject({ count: 0, thresholds: { "count==0": false } });
    expect(metrics.revoked_token_accepted.count).toBe(0);
    expect(metrics.revoked_reason_reported.value).toBe(1);
    expect(metrics.http_req_failed.passes).toBe(0);
  });

  it("refresh: four shards keep rotating their own families without a single reuse", async () => {
    // 60 families over 4 shards, each rotated about 3 times.
    const { metrics, view } = await runScenario("refresh", "e2e-refresh", 60, { shards: 4, regions: ["wnam", "enam", "weur", "apac"] });
    expect(view.status).toBe("passed");
    expect(metrics.rotation_success).toMatchObject({ passes: 180, fails: 0 });
    expect(metrics.families_lost.count).toBe(0);
    expect(metrics.families_busy.count).toBe(0);
  });

  it("silent-auth: a 302 with a code and the same state for every session", async () => {
    const { metrics } = await runScenario("silent-auth", "e2e-sessions", 40);
    expect(metrics.silent_auth_success).toMatchObject({ passes: 120, fails: 0 });
    expect(metrics.login_required.count).toBe(0);
  });

  it("otp-login: five steps per login, each tagged, and the flow's own latency", async () => {
    const { metrics, summary } = await runScenario("otp-login", "e2e-users", 8);
    expect(metrics.otp_login_success).toMatchObject({ passes: 24, fails: 0 });
    expect(metrics.iterations.count).toBe(24);
    expect(metrics.http_reqs.count).toBe(120);
    expect(Object.keys(summary.edgeload.steps)).toEqual(["authorize", "email_code", "verify", "authorize_silent", "token"]);
    for (const step of Object.values(summary.edgeload.steps) as Array<{ requests: number; failed: number }>)
      expect(step).toMatchObject({ requests: 24, failed: 0 });
    expect(metrics.otp_login_duration["p(95)"]).toBeGreaterThanOrEqual(metrics.http_req_duration.med);
    expect(summary.edgeload.achievedRatePerS).toBeCloseTo(8, 0);
  });
});

describe("a provider without strict introspection validation, as Authrim by default", () => {
  it("refuses the introspect run before any load, saying how to turn strict validation on (exit 104); with --no-preflight it fails with false positives (exit 99)", async () => {
    const setStrict = async (strictValidation: boolean) => {
      const response = await fetch(`${stack.targetUrl}/api/admin/settings/introspection-validation`, {
        method: "PUT",
        headers: { authorization: `Bearer ${stack.targetAdminSecret}`, "content-type": "application/json" },
        body: JSON.stringify({ strictValidation }),
      });
      expect(response.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1100)); // the target rereads its settings once a second
    };
    const { clientId, clientSecret } = stack.targetClient;
    await setStrict(false);
    try {
      // A --rate run: no preset, yet the scenario's correctness thresholds apply.
      const run = (extra: string[]) =>
        runCli(
          [
            "run",
            "--scenario",
            "introspect",
            "--rate",
            "20",
            "--duration",
            "2s",
            "--seed",
            "e2e-tokens",
            "--target",
            stack.targetUrl,
            "--client-id",
            clientId,
            "--client-secret",
            clientSecret,
            "--regions",
            "wnam",
            "--quiet",
            ...extra,
          ],
          { EDGELOAD_URL: stack.apiUrl, EDGELOAD_TOKEN: stack.token },
        );
      const refused = await run([]);
      expect(refused.code, refused.stderr).toBe(104);
      expect(refused.stderr).toMatch(/✗ pre-flight \(introspect, strict-validation-off\): .* answered active=true for a token minted for another audience/);
      expect(refused.stderr).toContain(`"strictValidation": true`);
      const result = await run(["--no-preflight"]);
      expect(result.code, result.stderr).toBe(99);
      expect(result.stdout).toMatch(/✗ false_positives 'count==0' observed [1-9]/);
    } finally {
      await setStrict(true);
    }
  }, 60_000);
});
