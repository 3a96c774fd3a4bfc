/**
 * Issue 40's table, both directions, against the local target (which refuses what Authrim
 * v0.1.15 refuses): for each provider misconfiguration the run is refused by its pre-flight
 * probe with the cause named (exit 104), or with --no-preflight goes ahead and FAILS on its
 * success threshold (exit 99) — never PASSED — and the same scenario against the provider
 * set up as docs/authrim.md says PASSES (the mail-OTP challenge shards split as Authrim's
 * setup leaves them included). The CLI runs as a user runs it; load goes only to
 * the loopback target, 10/s for 2 s.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { decodeJwt, generateKeyPair, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import type { EdgeloadClient } from "../../cli/client.ts";
import type { LocalStack } from "../../cli/local-stack.ts";
import { seedAccessTokens } from "../../seeds/access-tokens.ts";
import { seedSessions } from "../../seeds/sessions.ts";
import { seedUsers } from "../../seeds/users.ts";
import { runCli } from "./cli-process.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

const fixture = useLocalStack("edgeload-provider-setup-");
let stack: LocalStack;
let client: EdgeloadClient;
/** A client registered as a careless operator would: may exchange, but not trusted nor allowed for the subjects. */
let careless: { clientId: string; clientSecret: string };

const admin = (path: string, method: string, body: unknown) =>
  fetch(`${stack.targetUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.targetAdminSecret}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  ({ stack, client } = fixture);
  const access = { baseUrl: stack.targetUrl, adminSecret: stack.targetAdminSecret, ...stack.targetClient };
  const [tokens, sessions, users] = await Promise.all([
    seedAccessTokens({ ...access, count: 40, users: 5 }),
    seedSessions({ ...access, count: 10, users: 5 }),
    seedUsers({ ...access, count: 5 }),
  ]);
  // Tokens as another provider's seeder would sign them: a key (and kid) this target does not have.
  const { privateKey } = await generateKeyPair("RS256");
  const issuer = stack.targetUrl.replace(/^http:/, "https:");
  const now = Math.floor(Date.now() / 1000);
  const foreign = await Promise.all(
    Array.from({ length: 20 }, () =>
      new SignJWT({ client_id: stack.targetClient.clientId, scope: "openid profile email" })
        .setProtectedHeader({ alg: "RS256", typ: "at+jwt", kid: "kid-of-another-provider" })
        .setIssuer(issuer)
        .setSubject("someone")
        .setAudience(issuer)
        .setIssuedAt(now)
        .setExpirationTime(now + 3600)
        .setJti(crypto.randomUUID())
        .sign(privateKey),
    ),
  );
  // A set whose revocations have lapsed at the provider, as Authrim's do TOKEN_EXPIRY (an hour)
  // after they were made while seeded tokens live 30 days: its "revoked" tokens are live ones
  // (every other valid token, relabelled).
  const kept = tokens.tokens.filter((t) => t.type === "valid" || t.type === "wrong_audience");
  const lapsed = { ...tokens, tokens: kept.map((t, i) => (t.type === "valid" && i % 2 ? { ...t, type: "revoked" } : t)) };
  await Promise.all([
    client.uploadSeed("setup-lapsed", lapsed),
    client.uploadSeed("setup-tokens", tokens),
    client.uploadSeed("setup-foreign", foreign),
    client.uploadSeed("setup-sessions", sessions),
    client.uploadSeed("setup-users", users),
  ]);
  const made = await admin("/api/admin/clients", "POST", {
    client_name: "careless",
    redirect_uris: [stack.targetClient.redirectUri],
    skip_consent: true,
    token_exchange_allowed: true,
  });
  const { client: c } = (await made.json()) as { client: { client_id: string; client_secret: string } };
  careless = { clientId: c.client_id, clientSecret: c.client_secret };
});

/** `edgeload run --scenario …` at 10/s for 2 s in one region, with the given client. */
function run(scenario: string, seed: string, extra: string[] = [], who: { clientId: string; clientSecret: string } = stack.targetClient) {
  return runCli(
    [
      "run",
      "--scenario",
      scenario,
      "--rate",
      "10",
      "--duration",
      "2s",
      "--seed",
      seed,
      "--target",
      stack.targetUrl,
      "--client-id",
      who.clientId,
      "--client-secret",
      who.clientSecret,
      "--redirect-uri",
      stack.targetClient.redirectUri,
      ...(scenario === "otp-login" ? ["--admin-secret", stack.targetAdminSecret] : []),
      "--regions",
      "wnam",
      "--quiet",
      ...extra,
    ],
    { EDGELOAD_URL: stack.apiUrl, EDGELOAD_TOKEN: stack.token },
  );
}

/** Runs `check` with one of the provider's switches off, then turns it back on. */
async function withSwitchOff(setting: "token-exchange" | "test-endpoints", check: () => Promise<void>): Promise<void> {
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1100)); // the target rereads its settings once a second
  expect((await admin(`/api/admin/settings/${setting}`, "PUT", { enabled: false })).status).toBe(200);
  try {
    await settle();
    await check();
  } finally {
    await admin(`/api/admin/settings/${setting}`, "PUT", { enabled: true });
    await settle();
  }
}

describe("a misconfigured provider is refused by the probe, or fails with --no-preflight; never passes", () => {
  it.each([
    // [table row, scenario, seed, client, the probe's cause, the fix it prints, the failed threshold]
    [
      "userinfo with tokens signed by a key the provider doesn't have",
      "userinfo",
      "setup-foreign",
      null,
      "unknown-signing-key",
      "edgeload seed access-tokens",
      "userinfo_success",
    ],
    [
      "introspect with a set whose revocations the provider no longer holds",
      "introspect",
      "setup-lapsed",
      null,
      "revocation-lapsed",
      "/api/admin/settings/oauth-config/TOKEN_EXPIRY",
      "introspect_success",
    ],
    [
      "token-exchange with a set whose revocations the provider no longer holds",
      "token-exchange",
      "setup-lapsed",
      null,
      "revocation-lapsed",
      "edgeload seed access-tokens",
      "token_exchange_success",
    ],
    [
      "token-exchange by a client not allowed for the subject",
      "token-exchange",
      "setup-tokens",
      "careless",
      "client-not-allowed-for-subject",
      "allowed_subject_token_clients",
      "token_exchange_success",
    ],
    [
      "silent-auth with a client that is not trusted",
      "silent-auth",
      "setup-sessions",
      "careless",
      "consent-required",
      '{"is_trusted": true, "skip_consent": true}',
      "silent_auth_success",
    ],
    [
      "otp-login with a client that is not trusted",
      "otp-login",
      "setup-users",
      "careless",
      "consent-required",
      '{"is_trusted": true, "skip_consent": true}',
      "otp_login_success",
    ],
  ])(
    "%s",
    async (_row, scenario, seed, who, cause, fix, threshold) => {
      const as = who === "careless" ? careless : stack.targetClient;
      const refused = await run(scenario, seed, [], as);
      expect(refused.code, refused.stdout + refused.stderr).toBe(104);
      expect(refused.stderr).toContain(`✗ pre-flight (${scenario}, ${cause})`);
      expect(refused.stderr).toContain(fix);
      expect(refused.stdout).not.toMatch(/^run /m); // no run was started

      const measured = await run(scenario, seed, ["--no-preflight"], as);
      expect(measured.code, measured.stdout + measured.stderr).toBe(99);
      expect(measured.stdout).toMatch(new RegExp(`✗ ${threshold} 'rate>0\\.9\\d*' observed`));
    },
    90_000,
  );

  it("token-exchange with exchange off (the provider's default)", async () => {
    await withSwitchOff("token-exchange", async () => {
      const refused = await run("token-exchange", "setup-tokens");
      expect(refused.code, refused.stderr).toBe(104);
      expect(refused.stderr).toContain("✗ pre-flight (token-exchange, token-exchange-off)");
      expect(refused.stderr).toContain(`${stack.targetUrl}/api/admin/settings/token-exchange`);
      // A capacity ladder of the scenario is refused the same way, before its first step.
      const ladder = await runCli(
        ["ladder", "--scenario", "token-exchange", "--rates", "10,20", "--duration", "2s", "--seed", "setup-tokens", "--target", stack.targetUrl].concat([
          "--client-id",
          stack.targetClient.clientId,
          "--client-secret",
          stack.targetClient.clientSecret,
          "--regions",
          "wnam",
          "--quiet",
        ]),
        { EDGELOAD_URL: stack.apiUrl, EDGELOAD_TOKEN: stack.token },
      );
      expect(ladder.code, ladder.stdout + ladder.stderr).toBe(104);
      expect(ladder.stderr).toContain("✗ pre-flight (token-exchange, token-exchange-off)");
      expect(ladder.stdout).not.toMatch(/^step 1\/2/m);
      // So is a crosscheck --abba of it, before its first run.
      const specFile = join(fixture.stateDir, "exchange-abba.json");
      const { clientId, clientSecret } = stack.targetClient;
      const scenario = { name: "token-exchange", seed: "setup-tokens", clientId, clientSecret };
      await writeFile(specFile, JSON.stringify({ target: stack.targetUrl, scenario, executor: "constant-arrival-rate", rate: 10, duration: "2s" }));
      const abba = await runCli(["crosscheck", "--abba", specFile], { EDGELOAD_URL: stack.apiUrl, EDGELOAD_TOKEN: stack.token });
      expect(abba.code, abba.stdout + abba.stderr).toBe(104);
      expect(abba.stderr).toContain("✗ pre-flight (token-exchange, token-exchange-off)");
      expect(abba.stdout).not.toMatch(/edgeload run r-/);
      const measured = await run("token-exchange", "setup-tokens", ["--no-preflight"]);
      expect(measured.code, measured.stdout).toBe(99);
      expect(measured.stdout).toMatch(/✗ token_exchange_success 'rate>0\.99' observed/);
      expect(measured.stdout).toMatch(/✗ valid_token_rejected 'count==0' observed [1-9]/);
    });
  }, 90_000);

  it("otp-login with the test endpoints off (the provider's default)", async () => {
    await withSwitchOff("test-endpoints", async () => {
      const refused = await run("otp-login", "setup-users");
      expect(refused.code, refused.stderr).toBe(104);
      expect(refused.stderr).toContain("✗ pre-flight (otp-login, test-endpoints-off)");
      expect(refused.stderr).toContain("ENABLE_TEST_ENDPOINTS=true");
      expect(refused.stdout).not.toMatch(/^run /m);
      const measured = await run("otp-login", "setup-users", ["--no-preflight"]);
      expect(measured.code, measured.stdout).toBe(99);
      expect(measured.stdout).toMatch(/✗ otp_login_success 'rate>0\.9\d*' observed/);
      expect(measured.stdout).toMatch(/otp_login_failed_step\{step:email_code[^}]*\}\.*: [1-9]/);
    });
  }, 90_000);

  it("otp-login with the challenge shards left split (Authrim's setup: 4 issuing codes, 16 verifying them)", async () => {
    const settle = () => new Promise((resolve) => setTimeout(resolve, 1100)); // the target rereads its settings once a second
    // DELETE is this target's own: it forgets the stored count, as deleting Authrim's KV key would.
    expect((await admin("/api/admin/settings/challenge-shards", "DELETE", undefined)).status).toBe(200);
    try {
      await settle();
      const refused = await run("otp-login", "setup-users");
      expect(refused.code, refused.stderr).toBe(104);
      expect(refused.stderr).toContain("✗ pre-flight (otp-login, challenge-shards-split)");
      expect(refused.stderr).toContain("/api/admin/settings/challenge-shards");
      expect(refused.stdout).not.toMatch(/^run /m);
      const measured = await run("otp-login", "setup-users", ["--no-preflight"]);
      expect(measured.code, measured.stdout).toBe(99);
      expect(measured.stdout).toMatch(/✗ otp_login_success 'rate>0\.9\d*' observed/);
      expect(measured.stdout).toMatch(/otp_login_failed_step\{step:verify,error:interaction_required\}\.*: [1-9]/);
      // The users seeder checks the same path and refuses the provider with the same call.
      const access = { baseUrl: stack.targetUrl, adminSecret: stack.targetAdminSecret };
      await expect(seedUsers({ ...access, count: 3 })).rejects.toThrow(/interaction_required.*challenge-shards/);
    } finally {
      await admin("/api/admin/settings/challenge-shards", "PUT", { shards: 16 });
      await settle();
    }
    // Aligned again, the same scenario passes the probe.
    const aligned = await run("otp-login", "setup-users");
    expect(aligned.stderr).not.toContain("challenge-shards-split");
    expect(aligned.code, aligned.stdout).toBe(0);
  }, 90_000);

  it("names the step that failed and the provider's error in the text summary and the JSON (otp-login)", async () => {
    const file = join(fixture.stateDir, "otp-summary.json");
    const measured = await run("otp-login", "setup-users", ["--no-preflight", "--summary-export", file], careless);
    expect(measured.code, measured.stderr).toBe(99);
    expect(measured.stdout).toMatch(/otp_login_failed_step\{step:authorize_silent,error:consent_required\}\.*: [1-9]/);
    const metrics = (JSON.parse(await readFile(file, "utf8")) as { metrics: Record<string, { count?: number }> }).metrics;
    expect(metrics["otp_login_failed_step{step:authorize_silent}"]?.count).toBeGreaterThan(0);
    expect(metrics["otp_login_failed_step{step:authorize_silent,error:consent_required}"]?.count).toBeGreaterThan(0);
  }, 60_000);

  it("says loudly that --no-thresholds leaves the success thresholds out", async () => {
    const result = await run("userinfo", "setup-foreign", ["--no-preflight", "--no-thresholds"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("⚠ --no-thresholds: the userinfo scenario's success and correctness thresholds are left out");
  }, 60_000);
});

describe("the provider set up as docs/authrim.md says passes", () => {
  it.each([
    // [scenario, seed, its success rate: part of the verdict, and met]
    ["userinfo", "setup-tokens", "userinfo_success"],
    ["token-exchange", "setup-tokens", "token_exchange_success"],
    ["silent-auth", "setup-sessions", "silent_auth_success"],
    ["otp-login", "setup-users", "otp_login_success"],
  ])(
    "%s",
    async (scenario, seed, success) => {
      const result = await run(scenario, seed);
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(result.stderr).not.toContain("pre-flight");
      expect(result.stdout).toMatch(new RegExp(`✓ ${success} 'rate>0\\.9\\d*' observed`));
    },
    60_000,
  );

  it("refresh: `edgeload seed refresh-tokens` registers signed JWTs, as Authrim v0.1.15 requires, and the run rotates them", async () => {
    const file = join(fixture.stateDir, "refresh-seed.json");
    const env = { EDGELOAD_URL: stack.apiUrl, EDGELOAD_TOKEN: stack.token };
    const access = ["--base-url", stack.targetUrl, "--admin-secret", stack.targetAdminSecret, "--client-id", stack.targetClient.clientId];
    const seeded = await runCli(
      ["seed", "refresh-tokens", "--count", "30", "--name", "setup-refresh", "--out", file, ...access, "--client-secret", stack.targetClient.clientSecret],
      env,
    );
    expect(seeded.code, seeded.stderr).toBe(0);
    const { refresh_tokens } = JSON.parse(await readFile(file, "utf8")) as { refresh_tokens: Array<{ token: string; jti: string }> };
    for (const t of refresh_tokens) expect(decodeJwt(t.token).jti).toBe(t.jti);
    const result = await run("refresh", "setup-refresh");
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/✓ rotation_success 'rate>0\.99' observed/);
  }, 60_000);
});
