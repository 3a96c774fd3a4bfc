/**
 * The target refuses what Authrim v0.1.15 refuses when a load test's setup is missing a
 * step (docs/authrim.md), each refusal switched off by the admin call or client flag that
 * fixes it on Authrim: token exchange off by default, a client not allowed for the
 * subject, a client that is not trusted or asks consent, a user with too many live codes,
 * a token signed by a key the provider does not have, an opaque refresh token registered,
 * a session cookie sent URL-encoded, mail-OTP challenge shards split between the worker that
 * issues codes and the one that verifies them.
 */
import { generateKeyPair, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { fnv1a32 } from "../../core/data/fnv1a.ts";
import { accessToken, admin, basic, call, ISSUER, newClient, newUser, s256Challenge, signingKey, type TestClient } from "./target-calls.ts";

const EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS = "urn:ietf:params:oauth:token-type:access_token";
const REDIRECT = "https://app.test/cb";

let signer: { kid: string; key: CryptoKey };
let user: { id: string; email: string };

beforeAll(async () => {
  signer = await signingKey();
  user = await newUser("switches@test.authrim.internal");
});

const put = (path: string, body: unknown) => admin(path, { method: "PUT", body: JSON.stringify(body) });

describe("token exchange", () => {
  let exchanger: TestClient;
  const exchange = async (subject: string, by: TestClient = exchanger) => {
    const response = await call("/token", {
      method: "POST",
      headers: { authorization: basic(by.client_id, by.client_secret) },
      body: new URLSearchParams({ grant_type: EXCHANGE, subject_token: subject, subject_token_type: ACCESS, requested_token_type: ACCESS }),
    });
    return { status: response.status, body: (await response.json()) as { error?: string; error_description?: string; access_token?: string } };
  };
  const subjectOf = (clientId: string, aud?: string[]) => accessToken(signer, { sub: user.id, client_id: clientId, ...(aud ? { aud } : {}) });

  beforeAll(async () => {
    exchanger = await newClient({ token_exchange_allowed: true });
  });

  it("is off by default, as on Authrim: 400 unsupported_grant_type until the admin call turns it on", async () => {
    expect(await exchange(await subjectOf(exchanger.client_id, [exchanger.client_id]))).toEqual({
      status: 400,
      body: { error: "unsupported_grant_type", error_description: "Token Exchange is not enabled" },
    });
    expect((await put("/api/admin/settings/token-exchange", { enabled: true })).status).toBe(200);
    expect(await (await admin("/api/admin/settings/token-exchange")).json()).toMatchObject({ settings: { enabled: true } });
    expect((await exchange(await subjectOf(exchanger.client_id, [exchanger.client_id]))).status).toBe(200);
  });

  it("refuses a subject whose aud is only the issuer unless its client is in allowed_subject_token_clients (403 invalid_target)", async () => {
    await put("/api/admin/settings/token-exchange", { enabled: true });
    const subject = await subjectOf(exchanger.client_id); // aud = issuer, as the seeder makes them
    expect(await exchange(subject)).toEqual({
      status: 403,
      body: { error: "invalid_target", error_description: "Client is not authorized to exchange this token" },
    });
    // An expired subject is refused for that first, as Authrim checks expiry before the target.
    const expired = await accessToken(signer, { sub: user.id, client_id: exchanger.client_id, exp: Math.floor(Date.now() / 1000) - 60 });
    expect((await exchange(expired)).body.error).toBe("invalid_grant");
    expect((await put(`/api/admin/clients/${exchanger.client_id}`, { allowed_subject_token_clients: [exchanger.client_id] })).status).toBe(200);
    expect((await exchange(subject)).status).toBe(200);
  });

  it("refuses a client without token_exchange_allowed (403 unauthorized_client)", async () => {
    await put("/api/admin/settings/token-exchange", { enabled: true });
    const plain = await newClient();
    expect(await exchange(await subjectOf(plain.client_id, [plain.client_id]), plain)).toMatchObject({ status: 403, body: { error: "unauthorized_client" } });
  });
});

describe("silent authentication", () => {
  const verifier = "a-code-verifier-that-is-long-enough-for-pkce-0123456789";
  const sessionFor = async () =>
    (
      (await (await admin("/api/admin/test/sessions", { method: "POST", body: JSON.stringify({ user_id: user.id, ttl_seconds: 600 }) })).json()) as {
        session_id: string;
      }
    ).session_id;
  const silent = async (client: TestClient, cookie: string) => {
    const url = `/authorize?${new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      scope: "openid",
      state: "s1",
      prompt: "none",
      code_challenge: await s256Challenge(verifier),
      code_challenge_method: "S256",
    })}`;
    const response = await call(url, { headers: { cookie }, redirect: "manual" });
    expect(response.status).toBe(302);
    return new URL(response.headers.get("location")!).searchParams;
  };

  it("answers error=consent_required unless the client is trusted and skips consent", async () => {
    const client = await newClient({ skip_consent: true });
    const session = await sessionFor();
    expect((await silent(client, `authrim_session=${session}`)).get("error")).toBe("consent_required");
    await put(`/api/admin/clients/${client.client_id}`, { is_trusted: true, skip_consent: false });
    expect((await silent(client, `authrim_session=${session}`)).get("error")).toBe("consent_required");
    await put(`/api/admin/clients/${client.client_id}`, { skip_consent: true });
    expect((await silent(client, `authrim_session=${session}`)).get("code")).toBeTruthy();
  });

  it("reads the session cookie raw, as Authrim: sent URL-encoded it is no session (login_required)", async () => {
    const client = await newClient({ is_trusted: true, skip_consent: true });
    const session = await sessionFor();
    expect(session).toContain(":");
    expect((await silent(client, `authrim_session=${encodeURIComponent(session)}`)).get("error")).toBe("login_required");
    expect((await silent(client, `authrim_session=${session}`)).get("code")).toBeTruthy();
  });

  it("gives a user at most MAX_CODES_PER_USER live codes (error=server_error), a redeemed code freeing its place", async () => {
    const client = await newClient({ is_trusted: true, skip_consent: true });
    const limited = await newUser("limited@test.authrim.internal");
    const session = (
      (await (await admin("/api/admin/test/sessions", { method: "POST", body: JSON.stringify({ user_id: limited.id }) })).json()) as {
        session_id: string;
      }
    ).session_id;
    expect((await put("/api/admin/settings/oauth-config/MAX_CODES_PER_USER", { value: 2 })).status).toBe(200);
    try {
      const first = (await silent(client, `authrim_session=${session}`)).get("code")!;
      expect((await silent(client, `authrim_session=${session}`)).get("code")).toBeTruthy();
      expect((await silent(client, `authrim_session=${session}`)).get("error")).toBe("server_error");
      const redeemed = await call("/token", {
        method: "POST",
        headers: { authorization: basic(client.client_id, client.client_secret) },
        body: new URLSearchParams({ grant_type: "authorization_code", code: first, redirect_uri: REDIRECT, code_verifier: verifier }),
      });
      expect(redeemed.status).toBe(200);
      expect((await silent(client, `authrim_session=${session}`)).get("code")).toBeTruthy();
    } finally {
      await put("/api/admin/settings/oauth-config/MAX_CODES_PER_USER", { value: 100 });
    }
    expect((await put("/api/admin/settings/oauth-config/MAX_CODES_PER_USER", { value: 0 })).status).toBe(400);
    expect((await put("/api/admin/settings/oauth-config/CODE_TTL", { value: 5 })).status).toBe(400);
  });

  it("takes TOKEN_EXPIRY, how long a revocation is kept, within Authrim's 60–86400 s, beside MAX_CODES_PER_USER", async () => {
    const settings = async () => {
      const { configs } = (await (await admin("/api/admin/settings/oauth-config")).json()) as { configs: Record<string, { value: number }> };
      return { maxCodes: configs.MAX_CODES_PER_USER?.value, tokenExpiry: configs.TOKEN_EXPIRY?.value };
    };
    expect((await put("/api/admin/settings/oauth-config/MAX_CODES_PER_USER", { value: 7 })).status).toBe(200);
    try {
      for (const value of [59, 86_401, 600.5]) expect((await put("/api/admin/settings/oauth-config/TOKEN_EXPIRY", { value })).status).toBe(400);
      expect((await put("/api/admin/settings/oauth-config/TOKEN_EXPIRY", { value: 60 })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1100)); // the target rereads its settings once a second
      expect(await settings()).toEqual({ maxCodes: 7, tokenExpiry: 60 });
    } finally {
      await put("/api/admin/settings/oauth-config/MAX_CODES_PER_USER", { value: 100 });
      await put("/api/admin/settings/oauth-config/TOKEN_EXPIRY", { value: 3600 });
    }
    // A revocation made now holds within its lifetime.
    const client = await newClient({});
    const token = await accessToken(signer, { sub: user.id, client_id: client.client_id });
    await call("/revoke", { method: "POST", headers: { authorization: basic(client.client_id, client.client_secret) }, body: new URLSearchParams({ token }) });
    expect((await call("/userinfo", { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
  });
});

describe("keys and refresh-token registration", () => {
  it("answers userinfo 500 'no public key available' for a token signed by a key it does not have", async () => {
    const foreign = { kid: "kid-of-another-provider", key: (await generateKeyPair("RS256")).privateKey };
    const response = await call("/userinfo", { headers: { authorization: `Bearer ${await accessToken(foreign, { sub: user.id, client_id: "x" })}` } });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: "server_error", error_description: "Server configuration error: no public key available" });
  });

  it("registers only JWT refresh tokens with a jti, as Authrim v0.1.15", async () => {
    const client = await newClient();
    const register = async (token: string) =>
      admin("/api/admin/test/tokens", { method: "POST", body: JSON.stringify({ token, userId: user.id, clientId: client.client_id, scope: "openid" }) });
    const opaque = await register("an-opaque-refresh-token-of-sixty-four-characters-0123456789abcd");
    expect(opaque.status).toBe(400);
    expect(await opaque.json()).toEqual({ error: "invalid_request", error_description: "Invalid JWT format" });
    const noJti = await new SignJWT({ sub: user.id }).setProtectedHeader({ alg: "RS256", kid: signer.kid }).setIssuer(ISSUER).sign(signer.key);
    expect(await (await register(noJti)).json()).toMatchObject({ error_description: "JWT must contain a jti claim" });
    const jwt = await new SignJWT({ sub: user.id, client_id: client.client_id, rtv: 1 })
      .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: signer.kid })
      .setJti("v1_3_abc")
      .sign(signer.key);
    const ok = await register(jwt);
    expect(ok.status).toBe(201);
    expect(await ok.json()).toMatchObject({ success: true, version: 1, jti: "v1_3_abc" });
  });

  it("answers the reference suite's older verify path 404, as v0.1.15", async () => {
    expect((await call("/api/auth/email-code/verify", { method: "POST", body: "{}" })).status).toBe(404);
  });
});

describe("test endpoints", () => {
  const ENDPOINTS: ReadonlyArray<readonly [string, string, unknown]> = [
    ["POST", "/api/admin/test/email-codes", { email: "switches@test.authrim.internal" }],
    ["POST", "/api/admin/test/sessions", { user_id: "u" }],
    ["GET", "/api/admin/test/signing-key", undefined],
    ["POST", "/api/admin/test/tokens", { token: "x" }],
  ];
  const callAs = (method: string, path: string, body: unknown) => admin(path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

  it("answers 403 access_denied (Authrim's AR050001) when off, after the admin secret, and serves them again when on", async () => {
    expect((await put("/api/admin/settings/test-endpoints", { enabled: false })).status).toBe(200);
    try {
      for (const [method, path, body] of ENDPOINTS) {
        const response = await callAs(method, path, body);
        expect(response.status, path).toBe(403);
        expect(await response.json()).toMatchObject({ error: "access_denied", error_code: "AR050001" });
      }
      // A wrong secret is refused first, as Authrim's admin middleware runs before the guard.
      expect((await call("/api/admin/test/email-codes", { method: "POST", headers: { authorization: "Bearer wrong" }, body: "{}" })).status).toBe(401);
      // The request ledger is this target's own, not one of Authrim's test endpoints.
      expect((await admin("/api/admin/test/request-ledger?run=r-switches-0000abcd")).status).toBe(200);
    } finally {
      expect((await put("/api/admin/settings/test-endpoints", { enabled: true })).status).toBe(200);
    }
    const issued = await callAs("POST", "/api/admin/test/email-codes", { email: user.email });
    expect(issued.status).toBe(201);
  });

  it("refuses a switch that is not a boolean", async () => {
    expect((await put("/api/admin/settings/test-endpoints", { enabled: "no" })).status).toBe(400);
  });
});

describe("challenge shards", () => {
  /** Issues a mail code (the management worker's count) and verifies it (the auth worker's). */
  const issueAndVerify = async () => {
    const issued = (await (await admin("/api/admin/test/email-codes", { method: "POST", body: JSON.stringify({ email: user.email }) })).json()) as {
      code: string;
      otpSessionId: string;
    };
    const verified = await call("/api/auth/email-codes/verify", {
      method: "POST",
      headers: { cookie: `authrim_otp_session=${issued.otpSessionId}`, "content-type": "application/json" },
      body: JSON.stringify({ email: user.email, code: issued.code }),
    });
    const error = ((await verified.json()) as { error?: string }).error ?? null;
    return { otpSessionId: issued.otpSessionId, status: verified.status, error };
  };

  it("are split as Authrim's setup leaves them (issuing 4, verifying 16): a code is found only where both counts pick its shard", async () => {
    expect((await admin("/api/admin/settings/challenge-shards", { method: "DELETE" })).status).toBe(200);
    expect(await (await admin("/api/admin/settings/challenge-shards")).json()).toEqual({
      current: 4,
      source: "default",
      kv_value: null,
      env_value: null,
      default_value: 4,
    });
    const tries = [];
    for (let i = 0; i < 16; i++) tries.push(await issueAndVerify());
    for (const t of tries) {
      const agree = fnv1a32(t.otpSessionId) % 4 === fnv1a32(t.otpSessionId) % 16;
      expect({ status: t.status, error: t.error }, t.otpSessionId).toEqual(
        agree ? { status: 200, error: null } : { status: 400, error: "interaction_required" },
      );
    }
    // About one in four agree: sixteen all agreeing would be a 4^-16 chance.
    expect(tries.filter((t) => t.status === 400).length).toBeGreaterThan(0);
  });

  it("agree once one count is stored for every worker, as Authrim's KV setting makes them", async () => {
    expect((await put("/api/admin/settings/challenge-shards", { shards: 16 })).status).toBe(200);
    expect(await (await admin("/api/admin/settings/challenge-shards")).json()).toMatchObject({ current: 16, source: "kv", kv_value: 16 });
    for (let i = 0; i < 8; i++) expect(await issueAndVerify()).toMatchObject({ status: 200, error: null });
  });

  it("refuses a count outside 1 to 256", async () => {
    for (const shards of [0, 257, 2.5, "16"]) expect((await put("/api/admin/settings/challenge-shards", { shards })).status, String(shards)).toBe(400);
  });
});
