/**
 * The target's OpenID provider endpoints, as Authrim answers them (docs/authrim.md):
 * discovery and the JWKS, userinfo, introspection (RFC 7662, with Authrim's positive-answer
 * cache), revocation (RFC 7009), the token endpoint, the authorization endpoint and the
 * mail-OTP login step. Mounted by index.ts; the admin routes that seed and configure them
 * are admin-app.ts's.
 */
import { Hono, type Context } from "hono";
import { decodeJwt, type JWK } from "jose";
import { checkAccessToken, issuerOf, type TokenCheck } from "./access-token.ts";
import { authenticateClient, clientExists, findClient, findUserById } from "./directory.ts";
import { featureSettings } from "./feature-settings.ts";
import { cacheAnswer, cachedAnswer, introspectionSettings } from "./introspection-settings.ts";
import type { CodeRecord } from "./auth-store.ts";
import { authorize, cookie, OTP_SESSION_COOKIE, verifyEmailCode } from "./login.ts";
import { authStore, keysOf, refreshTokensIn, revocationsFor, type TargetEnv } from "./target-env.ts";
import { tokenEndpoint } from "./token-endpoint.ts";

type App = { Bindings: TargetEnv };
export const oidcApp = new Hono<App>();

/** The JWKS, cached per isolate for a few seconds: verifying must not cost an RPC each time. */
let jwksCache: { jwks: { keys: JWK[] }; fetchedAtMs: number } | null = null;
const JWKS_TTL_MS = 5_000;

async function jwks(env: TargetEnv, fresh = false): Promise<{ keys: JWK[] }> {
  if (!fresh && jwksCache && Date.now() - jwksCache.fetchedAtMs < JWKS_TTL_MS) return jwksCache.jwks;
  jwksCache = { jwks: await keysOf(env).jwks(), fetchedAtMs: Date.now() };
  return jwksCache.jwks;
}

/** Drops the cached JWKS, so the next verification reads the keys as they are now (after a rotation). */
export function forgetJwks(): void {
  jwksCache = null;
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
  const stale = !result.ok && (result.reason === "bad_signature" || result.reason === "unknown_key");
  return stale ? checkAccessToken(token, await context(true)) : result;
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

oidcApp.get("/.well-known/openid-configuration", (c) => {
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

oidcApp.get("/.well-known/jwks.json", async (c) => c.json(await jwks(c.env)));

oidcApp.on(["GET", "POST"], "/userinfo", async (c) => {
  const header = c.req.header("authorization") ?? "";
  if (!header.startsWith("Bearer ")) {
    return oauthError(401, "invalid_token", "a bearer access token is required", { "www-authenticate": 'Bearer error="invalid_request"' });
  }
  const result = await validate(c, header.slice(7));
  // Authrim finds no key for the token's kid and answers as a server fault, not a bad token.
  if (!result.ok && result.reason === "unknown_key")
    return oauthError(500, "server_error", "Server configuration error: no public key available", { "www-authenticate": "Bearer" });
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
oidcApp.post("/introspect", async (c) => {
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

/** RFC 7009: revocation answers 200 even for tokens it does not know. */
oidcApp.post("/revoke", async (c) => {
  const token = await clientToken(c);
  if (token instanceof Response) return token;
  const result = await validate(c, token);
  if (result.ok) {
    // Kept for the provider's access-token lifetime from now, as Authrim's /revoke keeps it, whatever the token's `exp`.
    const keptS = (await featureSettings(c.env.TARGET_DB, c.env, Date.now())).oauthConfig.TOKEN_EXPIRY;
    await revocationsFor(c.env, result.claims.jti).revoke(result.claims.jti, Math.floor(Date.now() / 1000) + keptS);
  }
  return c.body(null, 200);
});

oidcApp.post("/token", async (c) => {
  const caller = await authenticate(c);
  if (caller instanceof Response) return caller;
  const form = await c.req.parseBody();
  const client = await findClient(c.env.TARGET_DB, caller);
  const settings = await featureSettings(c.env.TARGET_DB, c.env, Date.now());
  const store = authStore(c.env);
  const result = await tokenEndpoint(form, {
    issuer: issuerOf(new URL(c.req.url)),
    clientId: caller,
    exchange: {
      enabled: settings.tokenExchangeEnabled,
      clientAllowed: client?.token_exchange_allowed === true,
      allowedSubjectClients: client?.allowed_subject_token_clients ?? [],
    },
    signingKeys: keysOf(c.env),
    refreshTokens: (shard) => refreshTokensIn(c.env, shard),
    validate: (token, audienceAndClient) => validate(c, token, audienceAndClient),
    takeCode: async (code) => {
      const record = await store.take<CodeRecord>("code", code);
      if (record) await store.releaseCode(record.user_id, code);
      return record;
    },
  });
  return c.json(result.body, result.status, { "cache-control": "no-store" });
});

oidcApp.get("/authorize", (c) =>
  authorize(new URL(c.req.url), c.req.header("cookie"), {
    store: authStore(c.env),
    findClient: (id) => findClient(c.env.TARGET_DB, id),
    maxCodesPerUser: async () => (await featureSettings(c.env.TARGET_DB, c.env, Date.now())).oauthConfig.MAX_CODES_PER_USER,
  }),
);

// Authrim v0.1.15's path; the reference suite's script still posts to the older one, a 404 there.
oidcApp.post("/api/auth/email-code/verify", (c) => c.json({ error: "not_found", error_description: "Not Found" }, 404));
oidcApp.post("/api/auth/email-codes/verify", async (c) => {
  const body = (await c.req.json().catch(() => null)) as { email?: unknown; code?: unknown } | null;
  if (!body || typeof body.email !== "string" || typeof body.code !== "string")
    return c.json({ error: "invalid_request", error_description: "email and code are required" }, 400);
  const { challengeShards } = await featureSettings(c.env.TARGET_DB, c.env, Date.now());
  return verifyEmailCode(authStore(c.env), body.email, body.code, cookie(c.req.header("cookie"), OTP_SESSION_COOKIE), challengeShards.auth);
});
