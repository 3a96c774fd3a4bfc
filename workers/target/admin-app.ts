/**
 * The target's admin API, behind `Authorization: Bearer <ADMIN_API_SECRET>` (admin-auth.ts):
 * Authrim's settings routes (introspection validation and cache, refresh-token sharding),
 * its management routes for clients and users in Authrim's shapes, and the test routes the
 * seeders use (sessions, mail OTPs, refresh tokens, the signing key, the request ledger).
 * Mounted by index.ts beside the OIDC endpoints (oidc-app.ts).
 */
import { Hono } from "hono";
import { requireAdmin } from "./admin-auth.ts";
import { clientExists, createClient, createUser, findUserByEmail, findUserById, searchUsers } from "./directory.ts";
import { featureSettings } from "./feature-settings.ts";
import { DEFAULT_SETTINGS, introspectionSettings, storeSetting } from "./introspection-settings.ts";
import { createSession, issueEmailCode } from "./login.ts";
import { forgetJwks } from "./oidc-app.ts";
import { REFRESH_SHARDS, refreshShard } from "./refresh-tokens.ts";
import { readLedger } from "./request-ledger.ts";
import { authStore, keysOf, refreshTokensIn, type TargetEnv } from "./target-env.ts";

type App = { Bindings: TargetEnv };
export const adminApp = new Hono<App>();

/**
 * Authrim's test endpoints answer 403 `access_denied` (AR050001) unless they are on
 * (feature-settings.ts), after the admin secret is checked. The request ledger is this
 * target's own, not Authrim's: always served.
 */
adminApp.use("/api/admin/test/*", async (c, next) => {
  if (c.req.path === "/api/admin/test/request-ledger") return next();
  const denied = await requireAdmin(c);
  if (denied) return denied;
  if (!(await featureSettings(c.env.TARGET_DB, c.env, Date.now())).testEndpointsEnabled)
    return c.json({ error: "access_denied", error_description: "This feature is disabled (ENABLE_TEST_ENDPOINTS is not true)", error_code: "AR050001" }, 403);
  return next();
});

/** Authrim's settings routes for introspection: PUT a partial setting, GET what is in force. */
adminApp.get("/api/admin/settings/introspection-validation", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const s = await introspectionSettings(c.env.TARGET_DB, Date.now());
  return c.json({ settings: { strictValidation: { value: s.strictValidation, default: DEFAULT_SETTINGS.strictValidation } } });
});

adminApp.put("/api/admin/settings/introspection-validation", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const body = (await c.req.json().catch(() => null)) as { strictValidation?: unknown } | null;
  if (!body || typeof body.strictValidation !== "boolean")
    return c.json({ error: "invalid_value", error_description: "strictValidation must be a boolean" }, 400);
  await storeSetting(c.env.TARGET_DB, "introspection_validation", { strictValidation: body.strictValidation });
  return c.json({ success: true, settings: { strictValidation: body.strictValidation, expectedAudience: null } });
});

adminApp.put("/api/admin/settings/introspection-cache", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const body = (await c.req.json().catch(() => null)) as { enabled?: unknown; ttlSeconds?: unknown } | null;
  const ttl = body?.ttlSeconds ?? DEFAULT_SETTINGS.cache.ttlSeconds;
  if (!body || typeof body.enabled !== "boolean" || typeof ttl !== "number" || !(ttl > 0))
    return c.json({ error: "invalid_value", error_description: "enabled must be a boolean, ttlSeconds a positive number" }, 400);
  await storeSetting(c.env.TARGET_DB, "introspection_cache", { enabled: body.enabled, ttlSeconds: ttl });
  return c.json({ success: true, settings: { enabled: body.enabled, ttlSeconds: ttl } });
});

/** What arrived of an edgeload run, by second and step: the other side of its reconciliation. */
adminApp.get("/api/admin/test/request-ledger", async (c) => {
  const denied = await requireAdmin(c);
  return denied ?? readLedger(c);
});

/** A login session for a user, as Authrim's silent-auth seeder makes them: {user_id, ttl_seconds}. */
adminApp.post("/api/admin/test/sessions", async (c) => {
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
adminApp.post("/api/admin/test/email-codes", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const body = (await c.req.json().catch(() => null)) as { email?: unknown; create_user?: unknown } | null;
  if (!body || typeof body.email !== "string") return c.json({ error: "email: required" }, 400);
  let user = await findUserByEmail(c.env.TARGET_DB, body.email);
  if (!user && body.create_user === true) user = await createUser(c.env.TARGET_DB, { email: body.email, email_verified: true });
  if (!user) return c.json({ error: "invalid_request", error_description: "User does not exist and create_user is false" }, 404);
  const { challengeShards } = await featureSettings(c.env.TARGET_DB, c.env, Date.now());
  return c.json(await issueEmailCode(authStore(c.env), body.email, user.id, challengeShards.management), 201);
});

/** Refresh-token sharding as Authrim's refresh seeder reads it (this target: one generation). */
adminApp.get("/api/admin/settings/refresh-token-sharding", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const clientId = c.req.query("clientId");
  if (!clientId) return c.json({ error: "the clientId query parameter is required" }, 400);
  if (!(await clientExists(c.env.TARGET_DB, clientId))) return c.json({ error: `no client ${clientId}` }, 404);
  return c.json({ clientId, generation: 1, shardCount: REFRESH_SHARDS });
});

/**
 * Registers a refresh token, as Authrim's refresh seeder does: {token, userId, clientId,
 * scope, ttl}. As on Authrim v0.1.15 the token must be a JWT with a `jti` (its seeder signs
 * them): an opaque string answers 400 "Invalid JWT format". Like Authrim, the registration
 * reads the payload without verifying it.
 */
adminApp.post("/api/admin/test/tokens", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const body = (await c.req.json().catch(() => null)) as { token?: unknown; userId?: unknown; clientId?: unknown; scope?: unknown; ttl?: unknown } | null;
  const invalid = (description: string) => c.json({ error: "invalid_request", error_description: description }, 400);
  if (!body || typeof body.token !== "string" || typeof body.userId !== "string" || typeof body.clientId !== "string" || typeof body.scope !== "string")
    return invalid("token, userId, clientId, and scope are required");
  const parts = body.token.split(".");
  if (parts.length !== 3) return invalid("Invalid JWT format");
  let jti: unknown;
  try {
    jti = (JSON.parse(atob(parts[1]!.replace(/-/g, "+").replace(/_/g, "/"))) as { jti?: unknown }).jti;
  } catch {
    return invalid("Failed to parse JWT token");
  }
  if (typeof jti !== "string" || !jti) return invalid("JWT must contain a jti claim");
  const ttl = typeof body.ttl === "number" && body.ttl > 0 ? body.ttl : 30 * 86_400;
  const token = body.token;
  await refreshTokensIn(c.env, refreshShard(token)).register(token, { userId: body.userId, clientId: body.clientId, scope: body.scope }, ttl);
  return c.json({ success: true, version: 1, jti, expiresIn: ttl, shard_index: refreshShard(token) }, 201);
});

adminApp.post("/api/admin/signing-keys/rotate", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const { kid } = await keysOf(c.env).rotate();
  forgetJwks();
  return c.json({ kid }, 201);
});

adminApp.get("/api/admin/test/signing-key", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const key = await keysOf(c.env).current();
  if (!key) return c.json({ error: "no signing key yet: POST /api/admin/signing-keys/rotate first" }, 404);
  return c.json({ kid: key.kid, privatePEM: key.privatePEM, publicJWK: key.publicJWK });
});

/**
 * Clients, in Authrim's shapes: the ids are always generated (a UUID and a 64-hex secret,
 * whatever the body says), redirect_uris must be a non-empty list of URLs, and the answer
 * is 201 {client: {…}} with the secret shown this once. `is_trusted` and `skip_consent` are
 * honoured as on Authrim; `token_exchange_allowed` and `allowed_subject_token_clients` too,
 * as a convenience: Authrim's API ignores them (they are set on its D1 row).
 */
adminApp.post("/api/admin/clients", async (c) => {
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
    is_trusted: body.is_trusted === true,
    token_exchange_allowed: body.token_exchange_allowed === true,
    allowed_subject_token_clients: stringList(body.allowed_subject_token_clients),
  });
  return c.json(
    { client: { ...created, client_name: body.client_name, redirect_uris: redirectUris, grant_types: grantTypes, scope, created_at: Date.now() } },
    201,
  );
});

/** A list of strings from input, or none. */
export function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

// Users, in Authrim's shapes (mgmt/admin.ts there): a page newest first, filtered by
// `search` only; creation answers 201 {user: {...}}, a taken email 409 "conflict".
adminApp.get("/api/admin/users", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const page = Math.max(1, Math.floor(Number(c.req.query("page") ?? 1)) || 1);
  const limit = Math.min(100, Math.max(1, Math.floor(Number(c.req.query("limit") ?? 20)) || 20));
  const search = c.req.query("search");
  return c.json(await searchUsers(c.env.TARGET_DB, { search: search ? search : null, page, limit }));
});

adminApp.post("/api/admin/users", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const body = (await c.req.json().catch(() => null)) as { email?: unknown; name?: unknown; email_verified?: unknown; password?: unknown } | null;
  if (!body || typeof body.email !== "string" || body.email.trim() === "")
    return c.json({ error: "invalid_request", error_description: "Email is required" }, 400);
  // This target's own field (Authrim's users sign in by passkey or mail code): what its sign-in page takes (sign-in-flow.ts).
  const password = body.password ?? null;
  if (password !== null && (typeof password !== "string" || password.length < 8 || password.length > 256))
    return c.json({ error: "invalid_request", error_description: "password must be a string of 8 to 256 characters" }, 400);
  const user = await createUser(c.env.TARGET_DB, {
    email: body.email,
    name: typeof body.name === "string" ? body.name : null,
    email_verified: body.email_verified === true,
    password,
  });
  if (!user) return c.json({ error: "conflict", error_description: "Unable to create user with the provided information" }, 409);
  return c.json({ user }, 201);
});
