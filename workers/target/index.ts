/**
 * The local target: an Authrim-style OIDC provider subset (see docs/authrim.md
 * for the contract, README.md beside this file for what is implemented) plus the
 * deterministic knobs of knobs.ts on every other path (`/delay?ms=20`, …).
 *
 * State lives where a real provider keeps it: signing keys and revocations in Durable
 * Objects (revocations sharded by jti), clients and users in D1. Admin routes need
 * `Authorization: Bearer <ADMIN_API_SECRET>` (admin-auth.ts); the local stack provisions
 * that secret.
 *
 * Under `/app` live the load-test example apps: the demo user/messaging API
 * (demo-app.ts), config streaming over SSE (config-app.ts, config-hub.ts) and the records
 * API with two builds (records.ts); `GET /metrics` exposes the target's own series in the
 * Prometheus text format (metrics.ts).
 */
import { Hono, type Context } from "hono";
import { decodeJwt, type JWK } from "jose";
import { checkAccessToken, issuerOf, type TokenCheck } from "./access-token.ts";
import { cacheAnswer, cachedAnswer, DEFAULT_SETTINGS, introspectionSettings, storeSetting } from "./introspection-settings.ts";
import { authenticateClient, clientExists, createClient, createUser, findClient, findUserByEmail, findUserById, searchUsers } from "./directory.ts";
import { knobs } from "./knobs.ts";
import { authStateShard, type AuthKind, type AuthState } from "./auth-state.ts";
import { authorize, cookie, createSession, issueEmailCode, OTP_SESSION_COOKIE, verifyEmailCode, type AuthStore, type CodeRecord } from "./login.ts";
import { REFRESH_SHARDS, refreshShard, type RefreshTokens } from "./refresh-tokens.ts";
import { revocationShard, type Revocations } from "./revocations.ts";
import type { SigningKeys } from "./signing-keys.ts";
import { tokenEndpoint } from "./token-endpoint.ts";
import { demoApp } from "./demo-app.ts";
import { requireAdmin } from "./admin-auth.ts";
import { configApp } from "./config-app.ts";
import type { ConfigHub } from "./config-hub.ts";
import { countRequests, metricsApp } from "./metrics.ts";
import { recordsApp } from "./records.ts";
import { countRunRequests, readLedger, type RequestLedger } from "./request-ledger.ts";

export { AuthState } from "./auth-state.ts";
export { ConfigHub } from "./config-hub.ts";
export { RequestLedger } from "./request-ledger.ts";
export { RefreshTokens } from "./refresh-tokens.ts";
export { Revocations } from "./revocations.ts";
export { SigningKeys } from "./signing-keys.ts";

export interface TargetEnv {
  readonly TARGET_DB: D1Database;
  readonly SIGNING_KEYS: DurableObjectNamespace<SigningKeys>;
  readonly REVOCATIONS: DurableObjectNamespace<Revocations>;
  readonly REFRESH_TOKENS: DurableObjectNamespace<RefreshTokens>;
  readonly AUTH_STATE: DurableObjectNamespace<AuthState>;
  readonly CONFIG_HUB: DurableObjectNamespace<ConfigHub>;
  readonly REQUEST_LEDGER: DurableObjectNamespace<RequestLedger>;
  readonly ADMIN_API_SECRET?: string;
  /** Bearer token of POST /app/messages/send; any non-empty token when unset. */
  readonly APP_MESSAGING_TOKEN?: string;
}

type App = { Bindings: TargetEnv };
const app = new Hono<App>();

// Requests of each edgeload run as they arrive, before anything can fail (request-ledger.ts).
app.use("*", countRunRequests);
// Per-route request counts and durations of this isolate, for GET /metrics (metrics.ts).
app.use("*", countRequests);

const keysOf = (env: TargetEnv) => env.SIGNING_KEYS.get(env.SIGNING_KEYS.idFromName("signing-keys"));
/** Login state spread over its shards: each record goes to the shard of its (kind, key). */
function authStore(env: TargetEnv): AuthStore {
  const stub = (kind: AuthKind, key: string) => env.AUTH_STATE.get(env.AUTH_STATE.idFromName(`auth-${authStateShard(kind, key)}`));
  return {
    put: (kind, key, value, ttlS) => stub(kind, key).put(kind, key, value, ttlS),
    get: <T>(kind: AuthKind, key: string) => stub(kind, key).get(kind, key) as Promise<T | null>,
    take: <T>(kind: AuthKind, key: string) => stub(kind, key).take(kind, key) as Promise<T | null>,
  };
}

const refreshTokensIn = (env: TargetEnv, shard: number) => env.REFRESH_TOKENS.get(env.REFRESH_TOKENS.idFromName(`refresh-${shard}`));
const revocationsFor = (env: TargetEnv, jti: string) => env.REVOCATIONS.get(env.REVOCATIONS.idFromName(`revocations-${revocationShard(jti)}`));

/** The JWKS, cached per isolate for a few seconds: verifying must not cost an RPC each time. */
let jwksCache: { jwks: { keys: JWK[] }; fetchedAtMs: number } | null = null;
const JWKS_TTL_MS = 5_000;

async function jwks(env: TargetEnv, fresh = false): Promise<{ keys: JWK[] }> {
  if (!fresh && jwksCache && Date.now() - jwksCache.fetchedAtMs < JWKS_TTL_MS) return jwksCache.jwks;
  jwksCache = { jwks: await keysOf(env).jwks(), fetchedAtMs: Date.now() };
  return jwksCache.jwks;
}

async function validate(c: Context<App>, token: string, checkAudienceAndClient = true): Promise<TokenCheck> {
  const context = async (fresh: boolean) => ({
    checkAudienceAndClient,
    issuer: issuerOf(new URL(c.req.url)),
    jwks: await jwks(c.env, fresh),
    clientExists: (id: string) => clientExists(c.env.TARGET_DB, id),
    isRevoked: (jti: string) => revocationsFor(c.env, jti).isRevoked(jti),
    nowS: Math.floor(Date.now() / 1000),
  });
  const result = await checkAccessToken(token, await context(false));
  // A key rotated since the cache was filled: look once more with a fresh JWKS.
  return !result.ok && result.reason === "bad_signature" ? checkAccessToken(token, await context(true)) : result;
}

function oauthError(status: number, error: string, description: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error, error_description: description }), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...headers },
  });
}

/** HTTP Basic client authentication (RFC 6749 §2.3.1); the client id, or a 401 response. */
async function authenticate(c: Context<App>): Promise<string | Response> {
  const header = c.req.header("authorization") ?? "";
  const unauthorized = () => oauthError(401, "invalid_client", "client authentication failed", { "www-authenticate": 'Basic realm="authrim-target"' });
  if (!header.startsWith("Basic ")) return unauthorized();
  let decoded: string;
  try {
    decoded = atob(header.slice(6));
  } catch {
    return unauthorized();
  }
  const colon = decoded.indexOf(":");
  if (colon < 0) return unauthorized();
  const clientId = decodeURIComponent(decoded.slice(0, colon));
  const secret = decodeURIComponent(decoded.slice(colon + 1));
  return (await authenticateClient(c.env.TARGET_DB, clientId, secret)) ? clientId : unauthorized();
}

app.get("/.well-known/openid-configuration", (c) => {
  const issuer = issuerOf(new URL(c.req.url));
  const base = new URL(c.req.url).origin;
  return c.json({
    issuer,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    userinfo_endpoint: `${base}/userinfo`,
    jwks_uri: `${base}/.well-known/jwks.json`,
    introspection_endpoint: `${base}/introspect`,
    revocation_endpoint: `${base}/revoke`,
    response_types_supported: ["code"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["RS256"],
    token_endpoint_auth_methods_supported: ["client_secret_basic"],
    grant_types_supported: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:token-exchange"],
    scopes_supported: ["openid", "profile", "email"],
    code_challenge_methods_supported: ["S256"],
  });
});

app.get("/.well-known/jwks.json", async (c) => c.json(await jwks(c.env)));

app.on(["GET", "POST"], "/userinfo", async (c) => {
  const header = c.req.header("authorization") ?? "";
  if (!header.startsWith("Bearer ")) {
    return oauthError(401, "invalid_token", "a bearer access token is required", { "www-authenticate": 'Bearer error="invalid_request"' });
  }
  const result = await validate(c, header.slice(7));
  if (!result.ok)
    return oauthError(401, "invalid_token", `the access token is ${result.reason.replace("_", " ")}`, { "www-authenticate": 'Bearer error="invalid_token"' });
  const user = await findUserById(c.env.TARGET_DB, result.claims.sub);
  return c.json({
    sub: result.claims.sub,
    ...(user ? { email: user.email, email_verified: user.email_verified, ...(user.name ? { name: user.name } : {}) } : {}),
  });
});

/** The common start of /introspect and /revoke: client authentication, then the token form field. */
async function clientToken(c: Context<App>): Promise<string | Response> {
  const caller = await authenticate(c);
  if (caller instanceof Response) return caller;
  const form = await c.req.parseBody();
  const token = typeof form.token === "string" ? form.token : "";
  return token || oauthError(400, "invalid_request", "the token parameter is required");
}

/** A JWT's jti without verifying it: what Authrim's positive-answer cache is keyed by. */
function unverifiedJti(token: string): string | null {
  try {
    const jti = (decodeJwt(token) as { jti?: unknown }).jti;
    return typeof jti === "string" ? jti : null;
  } catch {
    return null;
  }
}

/**
 * RFC 7662: `active` is true exactly for valid tokens; nothing else is disclosed otherwise.
 * Audience and client are checked only under strict validation, and positive answers are
 * cached by jti ahead of every check but expiry and revocation, as on Authrim
 * (introspection-settings.ts).
 */
app.post("/introspect", async (c) => {
  const token = await clientToken(c);
  if (token instanceof Response) return token;
  const nowMs = Date.now();
  const settings = await introspectionSettings(c.env.TARGET_DB, nowMs);
  const jti = settings.cache.enabled ? unverifiedJti(token) : null;
  const cached = jti ? cachedAnswer(jti, nowMs) : null;
  if (cached && Number(cached.exp) * 1000 > nowMs && !(await revocationsFor(c.env, jti!).isRevoked(jti!))) return c.json(cached);
  const result = await validate(c, token, settings.strictValidation);
  if (!result.ok) return c.json({ active: false });
  const { sub, client_id, scope, exp, iat, iss, aud, act, resource } = result.claims as typeof result.claims & { act?: unknown; resource?: unknown };
  // As Authrim does, a token-exchange token's `act` and `resource` come back as they are.
  const answer = {
    active: true,
    token_type: "access_token",
    sub,
    client_id,
    scope,
    exp,
    iat,
    iss,
    aud,
    jti: result.claims.jti,
    ...(act ? { act } : {}),
    ...(resource ? { resource } : {}),
  };
  if (settings.cache.enabled) cacheAnswer(result.claims.jti, answer, nowMs, settings.cache.ttlSeconds);
  return c.json(answer);
});

/** Authrim's settings routes for introspection: PUT a partial setting, GET what is in force. */
app.get("/api/admin/settings/introspection-validation", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const s = await introspectionSettings(c.env.TARGET_DB, Date.now());
  return c.json({ settings: { strictValidation: { value: s.strictValidation, default: DEFAULT_SETTINGS.strictValidation } } });
});

app.put("/api/admin/settings/introspection-validation", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const body = (await c.req.json().catch(() => null)) as { strictValidation?: unknown } | null;
  if (!body || typeof body.strictValidation !== "boolean")
    return c.json({ error: "invalid_value", error_description: "strictValidation must be a boolean" }, 400);
  await storeSetting(c.env.TARGET_DB, "introspection_validation", { strictValidation: body.strictValidation });
  return c.json({ success: true, settings: { strictValidation: body.strictValidation, expectedAudience: null } });
});

app.put("/api/admin/settings/introspection-cache", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const body = (await c.req.json().catch(() => null)) as { enabled?: unknown; ttlSeconds?: unknown } | null;
  const ttl = body?.ttlSeconds ?? DEFAULT_SETTINGS.cache.ttlSeconds;
  if (!body || typeof body.enabled !== "boolean" || typeof ttl !== "number" || !(ttl > 0))
    return c.json({ error: "invalid_value", error_description: "enabled must be a boolean, ttlSeconds a positive number" }, 400);
  await storeSetting(c.env.TARGET_DB, "introspection_cache", { enabled: body.enabled, ttlSeconds: ttl });
  return c.json({ success: true, settings: { enabled: body.enabled, ttlSeconds: ttl } });
});

/** RFC 7009: revocation answers 200 even for tokens it does not know. */
app.post("/revoke", async (c) => {
  const token = await clientToken(c);
  if (token instanceof Response) return token;
  const result = await validate(c, token);
  if (result.ok) await revocationsFor(c.env, result.claims.jti).revoke(result.claims.jti, result.claims.exp ?? Math.floor(Date.now() / 1000) + 86_400);
  return c.body(null, 200);
});

app.post("/token", async (c) => {
  const caller = await authenticate(c);
  if (caller instanceof Response) return caller;
  const form = await c.req.parseBody();
  const client = await findClient(c.env.TARGET_DB, caller);
  const result = await tokenEndpoint(form, {
    issuer: issuerOf(new URL(c.req.url)),
    clientId: caller,
    tokenExchangeAllowed: client?.token_exchange_allowed === true,
    signingKeys: keysOf(c.env),
    refreshTokens: (shard) => refreshTokensIn(c.env, shard),
    validate: (token) => validate(c, token),
    takeCode: (code) => authStore(c.env).take<CodeRecord>("code", code),
  });
  return c.json(result.body, result.status, { "cache-control": "no-store" });
});

app.get("/authorize", (c) =>
  authorize(new URL(c.req.url), c.req.header("cookie"), { store: authStore(c.env), findClient: (id) => findClient(c.env.TARGET_DB, id) }),
);

/** What arrived of an edgeload run, by second and step: the other side of its reconciliation. */
app.get("/api/admin/test/request-ledger", async (c) => {
  const denied = await requireAdmin(c);
  return denied ?? readLedger(c);
});

/** A login session for a user, as Authrim's silent-auth seeder makes them: {user_id, ttl_seconds}. */
app.post("/api/admin/test/sessions", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const body = (await c.req.json().catch(() => null)) as { user_id?: unknown; ttl_seconds?: unknown } | null;
  if (!body || typeof body.user_id !== "string") return c.json({ error: "user_id: required" }, 400);
  if (!(await findUserById(c.env.TARGET_DB, body.user_id))) return c.json({ error: `no user ${body.user_id}` }, 404);
  const ttl = typeof body.ttl_seconds === "number" && body.ttl_seconds > 0 ? body.ttl_seconds : 3600;
  const sessionId = await createSession(authStore(c.env), body.user_id, ttl);
  return c.json({ session_id: sessionId, cookie_name: "authrim_session", expires_in: ttl }, 201);
});

/** Issues a mail OTP and returns it (a test API: nothing is mailed). */
app.post("/api/admin/test/email-codes", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const body = (await c.req.json().catch(() => null)) as { email?: unknown; create_user?: unknown } | null;
  if (!body || typeof body.email !== "string") return c.json({ error: "email: required" }, 400);
  let user = await findUserByEmail(c.env.TARGET_DB, body.email);
  if (!user && body.create_user === true) user = await createUser(c.env.TARGET_DB, { email: body.email, email_verified: true });
  if (!user) return c.json({ error: `no user with email ${body.email} (create_user is false)` }, 404);
  return c.json(await issueEmailCode(authStore(c.env), body.email, user.id), 201);
});

app.post("/api/auth/email-code/verify", async (c) => {
  const body = (await c.req.json().catch(() => null)) as { email?: unknown; code?: unknown } | null;
  if (!body || typeof body.email !== "string" || typeof body.code !== "string")
    return c.json({ error: "invalid_request", error_description: "email and code are required" }, 400);
  return verifyEmailCode(authStore(c.env), body.email, body.code, cookie(c.req.header("cookie"), OTP_SESSION_COOKIE));
});

/** Refresh-token sharding as Authrim's refresh seeder reads it (this target: one generation). */
app.get("/api/admin/settings/refresh-token-sharding", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const clientId = c.req.query("clientId");
  if (!clientId) return c.json({ error: "the clientId query parameter is required" }, 400);
  if (!(await clientExists(c.env.TARGET_DB, clientId))) return c.json({ error: `no client ${clientId}` }, 404);
  return c.json({ clientId, generation: 1, shardCount: REFRESH_SHARDS });
});

/** Registers a refresh token, as Authrim's refresh seeder does: {token, userId, clientId, scope, ttl}. */
app.post("/api/admin/test/tokens", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const body = (await c.req.json().catch(() => null)) as { token?: unknown; userId?: unknown; clientId?: unknown; scope?: unknown; ttl?: unknown } | null;
  const problems: string[] = [];
  if (!body || typeof body.token !== "string" || body.token.length < 16) problems.push("token: a string of at least 16 characters");
  if (typeof body?.userId !== "string") problems.push("userId: required");
  if (typeof body?.clientId !== "string") problems.push("clientId: required");
  if (problems.length || !body) return c.json({ error: "invalid_request", problems }, 400);
  const ttl = typeof body.ttl === "number" && body.ttl > 0 ? body.ttl : 30 * 86_400;
  const token = body.token as string;
  await refreshTokensIn(c.env, refreshShard(token)).register(
    token,
    { userId: body.userId as string, clientId: body.clientId as string, scope: typeof body.scope === "string" ? body.scope : "openid profile email" },
    ttl,
  );
  return c.json({ ok: true, shard_index: refreshShard(token) }, 201);
});

app.post("/api/admin/signing-keys/rotate", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const { kid } = await keysOf(c.env).rotate();
  jwksCache = null;
  return c.json({ kid }, 201);
});

app.get("/api/admin/test/signing-key", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const key = await keysOf(c.env).current();
  if (!key) return c.json({ error: "no signing key yet: POST /api/admin/signing-keys/rotate first" }, 404);
  return c.json({ kid: key.kid, privatePEM: key.privatePEM, publicJWK: key.publicJWK });
});

/**
 * Clients, in Authrim's shapes: the ids are always generated (a UUID and a 64-hex secret,
 * whatever the body says), redirect_uris must be a non-empty list of URLs, and the answer
 * is 201 {client: {…}} with the secret shown this once. `token_exchange_allowed` and
 * `skip_consent` are honoured here as a convenience; Authrim's API ignores the first (set
 * it in its D1) and wants `is_trusted` beside the second.
 */
app.post("/api/admin/clients", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const body = (await c.req.json().catch(() => null)) as Record<string, unknown> | null;
  const invalid = (description: string) => c.json({ error: "invalid_request", error_description: description }, 400);
  if (!body || typeof body.client_name !== "string" || !body.client_name) return invalid("client_name is required");
  const redirectUris = body.redirect_uris;
  if (!Array.isArray(redirectUris) || redirectUris.length === 0) return invalid("redirect_uris is required and must be a non-empty array");
  const bad = redirectUris.find((u) => typeof u !== "string" || !URL.canParse(u));
  if (bad !== undefined) return invalid(`Invalid redirect_uri: ${String(bad)}`);
  const grantTypes = body.grant_types ?? ["authorization_code"];
  if (!Array.isArray(grantTypes) || !grantTypes.every((g) => typeof g === "string")) return invalid("grant_types must be an array of strings");
  const scope = typeof body.scope === "string" ? body.scope : "openid profile email";
  const created = await createClient(c.env.TARGET_DB, {
    client_id: crypto.randomUUID(),
    client_secret: crypto.randomUUID().replace(/-/g, "") + crypto.randomUUID().replace(/-/g, ""),
    client_name: body.client_name,
    redirect_uris: redirectUris as string[],
    grant_types: grantTypes as string[],
    scope,
    skip_consent: body.skip_consent === true,
    token_exchange_allowed: body.token_exchange_allowed === true,
  });
  return c.json(
    { client: { ...created, client_name: body.client_name, redirect_uris: redirectUris, grant_types: grantTypes, scope, created_at: Date.now() } },
    201,
  );
});

// Users, in Authrim's shapes (mgmt/admin.ts there): a page newest first, filtered by
// `search` only; creation answers 201 {user: {...}}, a taken email 409 "conflict".
app.get("/api/admin/users", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const page = Math.max(1, Math.floor(Number(c.req.query("page") ?? 1)) || 1);
  const limit = Math.min(100, Math.max(1, Math.floor(Number(c.req.query("limit") ?? 20)) || 20));
  const search = c.req.query("search");
  return c.json(await searchUsers(c.env.TARGET_DB, { search: search ? search : null, page, limit }));
});

app.post("/api/admin/users", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const body = (await c.req.json().catch(() => null)) as { email?: unknown; name?: unknown; email_verified?: unknown } | null;
  if (!body || typeof body.email !== "string" || body.email.trim() === "")
    return c.json({ error: "invalid_request", error_description: "Email is required" }, 400);
  const user = await createUser(c.env.TARGET_DB, {
    email: body.email,
    name: typeof body.name === "string" ? body.name : null,
    email_verified: body.email_verified === true,
  });
  if (!user) return c.json({ error: "conflict", error_description: "Unable to create user with the provided information" }, 409);
  return c.json({ user }, 201);
});

// The demo user/messaging API of the closed-model examples (demo-app.ts).
app.route("/app", demoApp);
// Config streaming over SSE (config-app.ts) and the records API with its two builds (records.ts).
app.route("/app", configApp);
app.route("/app", recordsApp);
// Prometheus text exposition of what the target knows about itself (metrics.ts).
app.route("/", metricsApp);

app.all("*", (c) => knobs(c.req.raw));

export default app satisfies ExportedHandler<TargetEnv>;
