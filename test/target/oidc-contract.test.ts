/**
 * The Authrim-style target against its contract (docs/authrim.md): signing keys and
 * JWKS, userinfo, RFC 7662 introspection and RFC 7009 revocation, for each token type of
 * the reference token mix, with tokens signed the way Authrim's seeder signs them: with
 * the private key from /api/admin/test/signing-key.
 */
import { generateKeyPair, importPKCS8, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { admin, BASE, basic, call, ISSUER } from "./target-calls.ts";

let client: { client_id: string; client_secret: string };
let user: { id: string; email: string };
let signingKey: CryptoKey;
let kid: string;

/** An access token as Authrim's seeder makes one; `over` changes claims for a token type. */
async function token(over: Record<string, unknown> = {}, key: CryptoKey = signingKey, keyId = kid): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ client_id: client.client_id, scope: "openid profile email", ...over })
    .setProtectedHeader({ alg: "RS256", typ: "at+jwt", kid: keyId })
    .setIssuer((over.iss as string) ?? ISSUER)
    .setSubject(user.id)
    .setAudience((over.aud as string) ?? ISSUER)
    .setIssuedAt(now)
    .setExpirationTime((over.exp as number) ?? now + 30 * 86_400)
    .setJti(crypto.randomUUID())
    .sign(key);
}

/** A refresh token as Authrim's refresh seeder makes one: a signed JWT whose jti names its generation and shard. */
function refreshJwt(): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ client_id: client.client_id, scope: "openid", rtv: 1 })
    .setProtectedHeader({ alg: "RS256", typ: "JWT", kid })
    .setIssuer(ISSUER)
    .setSubject(user.id)
    .setAudience(client.client_id)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .setJti(`v1_0_${crypto.randomUUID()}`)
    .sign(signingKey);
}

async function introspect(t: string, auth = basic(client.client_id, client.client_secret)) {
  return call("/introspect", {
    method: "POST",
    headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: t }),
  });
}

beforeAll(async () => {
  expect((await call("/api/admin/signing-keys/rotate", { method: "POST" })).status).toBe(401);
  ({ kid } = (await (await admin("/api/admin/signing-keys/rotate", { method: "POST" })).json()) as { kid: string });
  const key = (await (await admin("/api/admin/test/signing-key")).json()) as { kid: string; privatePEM: string };
  expect(key.kid).toBe(kid);
  signingKey = await importPKCS8(key.privatePEM, "RS256");
  client = (
    (await (
      await admin("/api/admin/clients", {
        method: "POST",
        body: JSON.stringify({
          client_name: "load test",
          redirect_uris: ["https://app.test/cb"],
          grant_types: ["authorization_code", "refresh_token"],
          scope: "openid profile email",
          is_trusted: true,
          skip_consent: true,
        }),
      })
    ).json()) as { client: typeof client }
  ).client; // Authrim's shape: {client: {client_id, client_secret, …}}
  // As on Authrim, /introspect checks audience and client only with strict validation on.
  expect((await admin("/api/admin/settings/introspection-validation", { method: "PUT", body: JSON.stringify({ strictValidation: true }) })).status).toBe(200);
  const created = await admin("/api/admin/users", {
    method: "POST",
    body: JSON.stringify({ email: "otp-bench-00001@test.authrim.internal", name: "Bench", email_verified: true }),
  });
  expect(created.status).toBe(201);
  user = ((await created.json()) as { user: typeof user }).user; // Authrim's shape: {user: {id, …}}
});

describe("discovery and keys", () => {
  it("publishes discovery with the https issuer and the JWKS with the current key", async () => {
    const discovery = (await (await call("/.well-known/openid-configuration")).json()) as Record<string, string>;
    expect(discovery.issuer).toBe(ISSUER);
    expect(discovery.introspection_endpoint).toBe(`${BASE}/introspect`);
    const jwks = (await (await call("/.well-known/jwks.json")).json()) as { keys: Array<{ kid: string; alg: string; d?: string }> };
    expect(jwks.keys.map((k) => [k.kid, k.alg])).toEqual([[kid, "RS256"]]);
    expect(jwks.keys[0]!.d).toBeUndefined(); // never the private part
  });

  it("keeps verifying tokens signed before a rotation", async () => {
    const before = await token();
    await admin("/api/admin/signing-keys/rotate", { method: "POST" });
    expect(await (await introspect(before)).json()).toMatchObject({ active: true });
  });
});

describe("the token mix against /introspect and /userinfo", () => {
  const cases: Array<[string, () => Promise<string>, boolean]> = [
    // [type, how the seeder makes it, active]
    ["valid", () => token(), true],
    ["valid_exchanged", () => token({ act: { sub: "client:svc", client_id: "svc" }, resource: "https://api.test" }), true],
    ["expired", () => token({ exp: Math.floor(Date.now() / 1000) - 3600 }), false],
    ["wrong_audience", () => token({ aud: "https://other-service.test" }), false],
    ["wrong_client", () => token({ client_id: "client_does_not_exist" }), false],
    ["wrong_issuer", () => token({ iss: "https://evil.test" }), false],
    ["foreign_signature", async () => token({}, (await generateKeyPair("RS256")).privateKey, kid), false],
  ];

  it.each(cases)("%s → active %s", async (_type, make, active) => {
    const t = await make();
    const response = await introspect(t);
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body.active).toBe(active);
    if (active) expect(body).toMatchObject({ sub: user.id, client_id: client.client_id, iss: ISSUER });
    else expect(Object.keys(body)).toEqual(["active"]); // nothing disclosed about invalid tokens

    const info = await call("/userinfo", { headers: { authorization: `Bearer ${t}` } });
    expect(info.status).toBe(active ? 200 : 401);
    if (active) expect(await info.json()).toMatchObject({ sub: user.id, email: "otp-bench-00001@test.authrim.internal" });
    else expect(info.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("revokes a token (RFC 7009): afterwards inactive and refused by userinfo", async () => {
    const t = await token();
    const auth = basic(client.client_id, client.client_secret);
    const revoked = await call("/revoke", {
      method: "POST",
      headers: { authorization: auth },
      body: new URLSearchParams({ token: t, token_type_hint: "access_token" }),
    });
    expect(revoked.status).toBe(200);
    expect(await (await introspect(t)).json()).toEqual({ active: false });
    expect((await call("/userinfo", { headers: { authorization: `Bearer ${t}` } })).status).toBe(401);
    // Unknown tokens are answered 200 too, as RFC 7009 asks.
    expect((await call("/revoke", { method: "POST", headers: { authorization: auth }, body: new URLSearchParams({ token: "nonsense" }) })).status).toBe(200);
  });
});

describe("client and admin authentication", () => {
  it.each([
    ["a wrong secret", () => basic(client.client_id, "wrong")],
    ["an unknown client", () => basic("nobody", "x")],
    ["no credentials", () => ""],
  ])("refuses introspection with %s (401 invalid_client)", async (_, auth) => {
    const response = await introspect(await token(), auth());
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: "invalid_client" });
  });

  it("refuses admin calls without the admin secret and duplicate users, as Authrim does", async () => {
    expect((await call("/api/admin/test/signing-key")).status).toBe(401);
    expect((await call("/api/admin/users?search=x", { headers: { authorization: "Bearer nope" } })).status).toBe(401);
    const again = await admin("/api/admin/users", { method: "POST", body: JSON.stringify({ email: "otp-bench-00001@test.authrim.internal" }) });
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ error: "conflict", error_description: "Unable to create user with the provided information" });
  });

  it("lists users as Authrim does: newest first, filtered by search= only, email= ignored", async () => {
    for (const n of [2, 3])
      await admin("/api/admin/users", { method: "POST", body: JSON.stringify({ email: `otp-bench-0000${n}@test.authrim.internal`, name: `Bench ${n}` }) });
    type Page = { users: Array<{ id: string; email: string }>; pagination: Record<string, unknown> };
    const page = async (query: string) => (await (await admin(`/api/admin/users?${query}`)).json()) as Page;
    // email= filters nothing: a client reading users[0] would get the newest user, not its own.
    const byEmail = await page(`email=${encodeURIComponent("otp-bench-00001@test.authrim.internal")}`);
    expect(byEmail.users.map((u) => u.email)).toEqual([
      "otp-bench-00003@test.authrim.internal",
      "otp-bench-00002@test.authrim.internal",
      "otp-bench-00001@test.authrim.internal",
    ]);
    expect(byEmail.pagination).toEqual({ page: 1, limit: 20, total: 3, totalPages: 1, hasNext: false, hasPrev: false });
    // search= is a case-insensitive substring of the email or the name.
    expect((await page("search=BENCH-00002")).users.map((u) => u.email)).toEqual(["otp-bench-00002@test.authrim.internal"]);
    expect((await page("search=bench 3")).users.map((u) => u.email)).toEqual(["otp-bench-00003@test.authrim.internal"]);
    expect((await page("search=nobody")).users).toEqual([]);
    expect((await page("limit=1&page=2")).pagination).toMatchObject({ page: 2, limit: 1, total: 3, totalPages: 3, hasNext: true, hasPrev: true });
  });

  it("reports refresh-token sharding for a client", async () => {
    const response = await admin(`/api/admin/settings/refresh-token-sharding?clientId=${client.client_id}`);
    expect(await response.json()).toEqual({ clientId: client.client_id, generation: 1, shardCount: 8 });
    expect((await admin("/api/admin/settings/refresh-token-sharding?clientId=nobody")).status).toBe(404);
  });

  it("keeps the deterministic knobs on every other path", async () => {
    const response = await call("/delay?ms=1&status=503");
    expect(response.status).toBe(503);
  });
});

describe("/token", () => {
  const form = (auth: string, fields: Record<string, string>) =>
    call("/token", { method: "POST", headers: { authorization: auth }, body: new URLSearchParams(fields) });
  let exchanger: { client_id: string; client_secret: string };

  beforeAll(async () => {
    // Off by default, as on Authrim (provider-switches.test.ts checks the refusals).
    expect((await admin("/api/admin/settings/token-exchange", { method: "PUT", body: JSON.stringify({ enabled: true }) })).status).toBe(200);
    exchanger = (
      (await (
        await admin("/api/admin/clients", {
          method: "POST",
          body: JSON.stringify({
            client_name: "exchanger",
            redirect_uris: ["https://exchanger.test/cb"],
            grant_types: ["refresh_token", "urn:ietf:params:oauth:grant-type:token-exchange"],
            token_exchange_allowed: true,
            allowed_subject_token_clients: [client.client_id],
          }),
        })
      ).json()) as { client: typeof exchanger }
    ).client;
  });

  const exchange = (subject: string, auth = basic(exchanger.client_id, exchanger.client_secret)) =>
    form(auth, {
      grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
      subject_token: subject,
      subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
      requested_token_type: "urn:ietf:params:oauth:token-type:access_token",
    });

  it("exchanges a valid subject token (RFC 8693) for one acting as the caller", async () => {
    const response = await exchange(await token());
    expect(response.status).toBe(200);
    const body = (await response.json()) as { access_token: string; issued_token_type: string; scope: string };
    expect(body).toMatchObject({ issued_token_type: "urn:ietf:params:oauth:token-type:access_token", scope: "openid profile" });
    const info = (await (await introspect(body.access_token)).json()) as Record<string, unknown>;
    expect(info).toMatchObject({ active: true, sub: user.id, client_id: exchanger.client_id });
  });

  it.each([
    // [subject, expected description]
    ["expired", () => token({ exp: Math.floor(Date.now() / 1000) - 60 }), /expired/],
    ["foreign-signed", async () => token({}, (await generateKeyPair("RS256")).privateKey, kid), /invalid/],
  ])("refuses an %s subject with invalid_grant", async (_, make, why) => {
    const response = await exchange(await make());
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; error_description: string };
    expect(body.error).toBe("invalid_grant");
    expect(body.error_description).toMatch(why);
  });

  it("refuses a revoked subject and says it was revoked", async () => {
    const t = await token();
    await call("/revoke", {
      method: "POST",
      headers: { authorization: basic(client.client_id, client.client_secret) },
      body: new URLSearchParams({ token: t }),
    });
    const body = (await (await exchange(t)).json()) as { error: string; error_description: string };
    expect(body).toMatchObject({ error: "invalid_grant" });
    expect(body.error_description).toContain("revoked");
  });

  it("refuses token exchange to a client not allowed to use it (403, as Authrim)", async () => {
    const response = await exchange(await token(), basic(client.client_id, client.client_secret));
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: string }).error).toBe("unauthorized_client");
  });

  it("rotates refresh tokens and revokes the family when an old one is reused", async () => {
    const first = await refreshJwt();
    expect(
      (
        await admin("/api/admin/test/tokens", {
          method: "POST",
          body: JSON.stringify({ token: first, userId: user.id, clientId: exchanger.client_id, scope: "openid", ttl: 3600 }),
        })
      ).status,
    ).toBe(201);
    const auth = basic(exchanger.client_id, exchanger.client_secret);
    const rotate = async (t: string) => {
      const response = await form(auth, { grant_type: "refresh_token", refresh_token: t });
      return {
        status: response.status,
        body: (await response.json()) as { refresh_token?: string; access_token?: string; error?: string; error_description?: string },
      };
    };
    const r1 = await rotate(first);
    expect(r1.status).toBe(200);
    expect(r1.body.refresh_token).not.toBe(first);
    expect(await (await introspect(r1.body.access_token!)).json()).toMatchObject({ active: true, sub: user.id });
    const r2 = await rotate(r1.body.refresh_token!);
    expect(r2.status).toBe(200);

    const reuse = await rotate(first); // an old token again: theft suspected
    expect(reuse.status).toBe(400);
    expect(reuse.body.error_description).toContain("reuse detected");
    const afterReuse = await rotate(r2.body.refresh_token!); // the whole family is gone
    expect(afterReuse.body).toMatchObject({ error: "invalid_grant" });
    expect(afterReuse.body.error_description).toContain("revoked");
  });

  it("keeps one refresh-token family per user and client, as Authrim: a later one replaces it, and the earlier token then revokes both", async () => {
    const register = async (t: string) =>
      (
        await admin("/api/admin/test/tokens", {
          method: "POST",
          body: JSON.stringify({ token: t, userId: user.id, clientId: exchanger.client_id, scope: "openid", ttl: 3600 }),
        })
      ).status;
    const rotate = async (t: string) => {
      const response = await form(basic(exchanger.client_id, exchanger.client_secret), { grant_type: "refresh_token", refresh_token: t });
      return { status: response.status, body: (await response.json()) as { error?: string; error_description?: string } };
    };
    const [earlier, later] = [await refreshJwt(), await refreshJwt()];
    expect([await register(earlier), await register(later)]).toEqual([201, 201]);
    const stale = await rotate(earlier);
    expect(stale).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    expect(stale.body.error_description).toContain("one family per user and client");
    // Taken for a stolen token: the user's current family goes with it.
    expect((await rotate(later)).body.error_description).toContain("revoked");
  });

  it("refuses another client's refresh token and unknown grant types", async () => {
    const t = await refreshJwt();
    await admin("/api/admin/test/tokens", {
      method: "POST",
      body: JSON.stringify({ token: t, userId: user.id, clientId: exchanger.client_id, scope: "openid" }),
    });
    const other = await form(basic(client.client_id, client.client_secret), { grant_type: "refresh_token", refresh_token: t });
    expect(((await other.json()) as { error_description: string }).error_description).toContain("another client");
    const odd = await form(basic(client.client_id, client.client_secret), { grant_type: "password" });
    expect(((await odd.json()) as { error: string }).error).toBe("unsupported_grant_type");
  });
});

describe("/authorize, sessions and the mail-OTP login", () => {
  const REDIRECT = "https://app.test/cb";
  const verifier = "a-code-verifier-that-is-long-enough-for-pkce-0123456789";
  let challenge: string;

  beforeAll(async () => {
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
    challenge = btoa(String.fromCharCode(...digest))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
  });

  const authorizeUrl = (extra: Record<string, string> = {}) =>
    "/authorize?" +
    new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      scope: "openid",
      state: "st-123",
      nonce: "n-1",
      prompt: "none",
      code_challenge: challenge,
      code_challenge_method: "S256",
      ...extra,
    });

  const codeGrant = (code: string, codeVerifier = verifier) =>
    call("/token", {
      method: "POST",
      headers: { authorization: basic(client.client_id, client.client_secret) },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: codeVerifier }),
    });

  it("answers silent auth with a code and the same state for a valid session, login_required without", async () => {
    const session = (await (
      await admin("/api/admin/test/sessions", { method: "POST", body: JSON.stringify({ user_id: user.id, ttl_seconds: 600 }) })
    ).json()) as { session_id: string };
    const withSession = await call(authorizeUrl(), { headers: { cookie: `authrim_session=${session.session_id}` }, redirect: "manual" });
    expect(withSession.status).toBe(302);
    const location = new URL(withSession.headers.get("location")!);
    expect(location.origin + location.pathname).toBe(REDIRECT);
    expect(location.searchParams.get("state")).toBe("st-123");
    expect(location.searchParams.get("code")).toBeTruthy();

    const without = await call(authorizeUrl(), { redirect: "manual" });
    expect(without.status).toBe(302);
    expect(new URL(without.headers.get("location")!).searchParams.get("error")).toBe("login_required");
  });

  it("never redirects to an unregistered redirect_uri", async () => {
    const response = await call(authorizeUrl({ redirect_uri: "https://evil.test/cb" }), { redirect: "manual" });
    expect(response.status).toBe(400);
  });

  it("runs the five-step mail-OTP login to tokens as Authrim v0.1.15 answers it, with PKCE and single-use codes", async () => {
    // One challenge-shard count for the workers that issue and verify codes, as docs/authrim.md's checklist has it.
    await admin("/api/admin/settings/challenge-shards", { method: "PUT", body: JSON.stringify({ shards: 16 }) });
    // 1. GET /authorize without a session: 302 to the login page, and no cookie.
    const start = await call(authorizeUrl({ prompt: "login" }), { redirect: "manual" });
    expect(start.status).toBe(302);
    expect(start.headers.get("location")).toMatch(/^\/login\?challenge_id=/);
    expect(start.headers.get("set-cookie")).toBeNull();
    // 2. The admin test API issues a mail code bound to a new OTP session.
    const issuedAnswer = await admin("/api/admin/test/email-codes", { method: "POST", body: JSON.stringify({ email: user.email, create_user: false }) });
    expect(issuedAnswer.status).toBe(201);
    const issued = (await issuedAnswer.json()) as { code: string; otpSessionId: string };
    expect(issued.code).toMatch(/^\d{6}$/);
    // 3. Verify it with that OTP session as cookie: a login session cookie comes back, URL-encoded.
    const verifyWith = (code: string, otpSessionId: string) =>
      call("/api/auth/email-codes/verify", {
        method: "POST",
        headers: { cookie: `authrim_otp_session=${otpSessionId}`, "content-type": "application/json" },
        body: JSON.stringify({ email: user.email, code }),
      });
    const wrong = await verifyWith(issued.code === "000000" ? "111111" : "000000", issued.otpSessionId);
    expect(wrong.status).toBe(400);
    // A wrong code uses the OTP session up, as Authrim consumes its challenge first.
    expect((await verifyWith(issued.code, issued.otpSessionId)).status).toBe(400);
    const again = (await (
      await admin("/api/admin/test/email-codes", { method: "POST", body: JSON.stringify({ email: user.email, create_user: false }) })
    ).json()) as { code: string; otpSessionId: string };
    const verified = await verifyWith(again.code, again.otpSessionId);
    expect(verified.status).toBe(200);
    const encoded = /authrim_session=([^;]+)/.exec(verified.headers.getSetCookie().join("\n"))![1]!;
    const session = decodeURIComponent(encoded);
    expect(session).not.toBe(encoded);
    expect(((await verified.json()) as { sessionId: string }).sessionId).toBe(session);
    // 4. Silent authorize with the session.
    const auth = await call(authorizeUrl(), { headers: { cookie: `authrim_session=${session}` }, redirect: "manual" });
    const code = new URL(auth.headers.get("location")!).searchParams.get("code")!;
    // 5. Code + PKCE verifier for tokens; the access token introspects active.
    const tokens = await codeGrant(code);
    expect(tokens.status).toBe(200);
    const body = (await tokens.json()) as { access_token: string; id_token: string; refresh_token: string };
    expect(await (await introspect(body.access_token)).json()).toMatchObject({ active: true, sub: user.id });
    expect(body.refresh_token).toMatch(/^rt_\d_/);
    // The code is single-use.
    expect(((await (await codeGrant(code)).json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("refuses a code whose PKCE verifier does not match", async () => {
    const session = (await (await admin("/api/admin/test/sessions", { method: "POST", body: JSON.stringify({ user_id: user.id }) })).json()) as {
      session_id: string;
    };
    const auth = await call(authorizeUrl(), { headers: { cookie: `authrim_session=${session.session_id}` }, redirect: "manual" });
    const code = new URL(auth.headers.get("location")!).searchParams.get("code")!;
    const response = await codeGrant(code, "a-different-verifier-that-is-also-long-enough-0000000");
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error_description: string }).error_description).toContain("PKCE");
  });
});

describe("introspection settings, as on Authrim", () => {
  const setStrict = (strictValidation: boolean) =>
    admin("/api/admin/settings/introspection-validation", { method: "PUT", body: JSON.stringify({ strictValidation }) });
  const setCache = (enabled: boolean) => admin("/api/admin/settings/introspection-cache", { method: "PUT", body: JSON.stringify({ enabled }) });
  const active = async (t: string) => ((await (await introspect(t)).json()) as { active: boolean }).active;
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1100)); // an isolate rereads settings once a second

  it("accepts a wrong-audience token while strict validation is off, and caches that positive answer", async () => {
    await setStrict(false);
    await settle();
    const wrong = await token({ aud: "https://other-service.test" });
    expect(await active(wrong)).toBe(true); // Authrim's default: no audience or client check
    await setStrict(true);
    await settle();
    // The cached positive answer outlives the switch (60 s on Authrim); a fresh token does not pass.
    expect(await active(wrong)).toBe(true);
    expect(await active(await token({ aud: "https://other-service.test" }))).toBe(false);
    await setCache(false);
    await settle();
    expect(await active(wrong)).toBe(false);
    await setCache(true);
  });

  it("makes clients as Authrim does: generated ids whatever the body says, a non-empty redirect_uris", async () => {
    const made = await admin("/api/admin/clients", {
      method: "POST",
      body: JSON.stringify({ client_name: "x", client_id: "mine", client_secret: "mine", redirect_uris: ["https://x.test/cb"] }),
    });
    expect(made.status).toBe(201);
    const { client: c } = (await made.json()) as { client: { client_id: string; client_secret: string } };
    expect(c.client_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(c.client_secret).toMatch(/^[0-9a-f]{64}$/);
    const none = await admin("/api/admin/clients", { method: "POST", body: JSON.stringify({ client_name: "x", redirect_uris: [] }) });
    expect(none.status).toBe(400);
    expect(await none.json()).toEqual({ error: "invalid_request", error_description: "redirect_uris is required and must be a non-empty array" });
  });

  it("refuses a setting that is not a boolean, naming it", async () => {
    const bad = await admin("/api/admin/settings/introspection-validation", { method: "PUT", body: JSON.stringify({ strictValidation: "yes" }) });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: "invalid_value" });
  });
});
