/**
 * POST /token for the grants the reference suite exercises:
 *
 * - RFC 8693 token exchange, checked in Authrim's order (its token.ts): the feature must be
 *   on (400 `unsupported_grant_type`, feature-settings.ts), the client allowed to exchange
 *   (403 `unauthorized_client`), the subject signed by us, unexpired and unrevoked (400
 *   `invalid_grant`, a revoked one says so), and the caller in the subject's `aud` or the
 *   subject's client in the caller's `allowed_subject_token_clients` (403 `invalid_target`;
 *   the issuer in `aud` is not enough). Then a new access token for the caller, with an
 *   `act` claim naming it.
 * - Refresh tokens (RFC 6749 §6) with rotation: each use returns a new refresh token of
 *   the same family; reusing an old one revokes the family.
 * - Authorization code (RFC 6749 §4.1) with PKCE S256 (RFC 7636): single-use codes bound
 *   to client and redirect URI; returns an access token, a refresh token and an ID token.
 *
 * Client authentication is HTTP Basic, checked by the caller (oidc-app.ts).
 */
import { importPKCS8, SignJWT } from "jose";
import type { TokenCheck } from "./access-token.ts";
import { refreshFamilyShard, s256 } from "../../core/data/web-crypto.ts";
import type { CodeRecord } from "./auth-store.ts";
import { REFRESH_SHARDS, refreshShard, type RefreshTokens } from "./refresh-tokens.ts";
import type { SigningKeys } from "./signing-keys.ts";

export const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
export const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";
const ACCESS_TOKEN_TTL_S = 3600;

/** What token exchange needs to know of the provider's settings and the calling client. */
export interface ExchangePolicy {
  /** The provider's switch (feature-settings.ts). */
  readonly enabled: boolean;
  /** The client row's `token_exchange_allowed`. */
  readonly clientAllowed: boolean;
  /** The client row's `allowed_subject_token_clients`. */
  readonly allowedSubjectClients: readonly string[];
}

export interface TokenEndpointDeps {
  readonly issuer: string;
  readonly clientId: string;
  readonly exchange: ExchangePolicy;
  readonly signingKeys: DurableObjectStub<SigningKeys>;
  readonly refreshTokens: (shard: number) => DurableObjectStub<RefreshTokens>;
  /** Checks an access token; `audienceAndClient: false` leaves its `aud` and client to the caller. */
  readonly validate: (token: string, audienceAndClient: boolean) => Promise<TokenCheck>;
  /** Reads and deletes an authorization code (single use). */
  readonly takeCode: (code: string) => Promise<CodeRecord | null>;
}

/** The signing key, imported once per isolate per key id. */
let signer: { kid: string; key: CryptoKey } | null = null;

async function signAccessToken(deps: TokenEndpointDeps, claims: Record<string, unknown>, sub: string, audience: string): Promise<string> {
  const current = await deps.signingKeys.current();
  if (!current) throw new Error("no signing key: POST /api/admin/signing-keys/rotate first");
  if (signer?.kid !== current.kid) signer = { kid: current.kid, key: await importPKCS8(current.privatePEM, "RS256") };
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "RS256", typ: "at+jwt", kid: signer.kid })
    .setIssuer(deps.issuer)
    .setSubject(sub)
    .setAudience(audience)
    .setIssuedAt(now)
    .setExpirationTime(now + ACCESS_TOKEN_TTL_S)
    .setJti(crypto.randomUUID())
    .sign(signer.key);
}

export type TokenResponse = { status: 200; body: Record<string, unknown> } | { status: 400 | 403; body: { error: string; error_description: string } };

const invalid = (error: string, description: string, status: 400 | 403 = 400): TokenResponse => ({ status, body: { error, error_description: description } });

export async function tokenEndpoint(form: Record<string, unknown>, deps: TokenEndpointDeps): Promise<TokenResponse> {
  const grant = form.grant_type;
  if (grant === TOKEN_EXCHANGE) return tokenExchange(form, deps);
  if (grant === "refresh_token") return refresh(form, deps);
  if (grant === "authorization_code") return authorizationCode(form, deps);
  return invalid("unsupported_grant_type", `grant_type ${String(grant)} is not supported here`);
}

async function tokenExchange(form: Record<string, unknown>, deps: TokenEndpointDeps): Promise<TokenResponse> {
  if (!deps.exchange.enabled) return invalid("unsupported_grant_type", "Token Exchange is not enabled");
  if (!deps.exchange.clientAllowed) return invalid("unauthorized_client", "Client is not authorized for Token Exchange", 403);
  const subject = form.subject_token;
  if (typeof subject !== "string" || !subject) return invalid("invalid_request", "subject_token is required");
  if (form.subject_token_type !== ACCESS_TOKEN_TYPE) return invalid("invalid_request", `subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
  if (form.requested_token_type !== undefined && form.requested_token_type !== ACCESS_TOKEN_TYPE) {
    return invalid("invalid_request", `requested_token_type must be ${ACCESS_TOKEN_TYPE}`);
  }
  const checked = await deps.validate(subject, false);
  if (!checked.ok) {
    const why =
      checked.reason === "revoked"
        ? "the subject token has been revoked"
        : checked.reason === "expired"
          ? "the subject token has expired"
          : `the subject token is invalid (${checked.reason.replace("_", " ")})`;
    return invalid("invalid_grant", why);
  }
  const audiences = Array.isArray(checked.claims.aud) ? checked.claims.aud : [checked.claims.aud];
  const inAudience = audiences.includes(deps.clientId);
  if (!inAudience && !deps.exchange.allowedSubjectClients.includes(checked.claims.client_id)) {
    return invalid("invalid_target", "Client is not authorized to exchange this token", 403);
  }
  const scope = typeof form.scope === "string" && form.scope ? form.scope : "openid profile";
  const audience = typeof form.audience === "string" && form.audience ? form.audience : deps.issuer;
  const access_token = await signAccessToken(
    deps,
    { client_id: deps.clientId, scope, act: { sub: `client:${deps.clientId}`, client_id: deps.clientId } },
    checked.claims.sub,
    audience,
  );
  return { status: 200, body: { access_token, issued_token_type: ACCESS_TOKEN_TYPE, token_type: "Bearer", expires_in: ACCESS_TOKEN_TTL_S, scope } };
}

async function authorizationCode(form: Record<string, unknown>, deps: TokenEndpointDeps): Promise<TokenResponse> {
  const { code, redirect_uri: redirectUri, code_verifier: verifier } = form;
  if (typeof code !== "string" || typeof redirectUri !== "string" || typeof verifier !== "string") {
    return invalid("invalid_request", "code, redirect_uri and code_verifier are required");
  }
  const record = await deps.takeCode(code);
  if (!record) return invalid("invalid_grant", "the authorization code is unknown, used or expired");
  if (record.client_id !== deps.clientId) return invalid("invalid_grant", "the code was issued to another client");
  if (record.redirect_uri !== redirectUri) return invalid("invalid_grant", "redirect_uri does not match the authorization request");
  if ((await s256(verifier)) !== record.code_challenge)
    return invalid("invalid_grant", "PKCE verification failed: code_verifier does not match code_challenge");
  const access_token = await signAccessToken(deps, { client_id: deps.clientId, scope: record.scope }, record.user_id, deps.issuer);
  const id_token = await signAccessToken(deps, { ...(record.nonce ? { nonce: record.nonce } : {}), azp: deps.clientId }, record.user_id, deps.clientId);
  const shard = await refreshFamilyShard(record.user_id, deps.clientId, REFRESH_SHARDS);
  const refresh_token = `rt_${shard}_${crypto.randomUUID().replace(/-/g, "")}`;
  await deps.refreshTokens(shard).register(refresh_token, { userId: record.user_id, clientId: deps.clientId, scope: record.scope }, 30 * 86_400);
  return { status: 200, body: { access_token, id_token, refresh_token, token_type: "Bearer", expires_in: ACCESS_TOKEN_TTL_S, scope: record.scope } };
}

async function refresh(form: Record<string, unknown>, deps: TokenEndpointDeps): Promise<TokenResponse> {
  const token = form.refresh_token;
  if (typeof token !== "string" || !token) return invalid("invalid_request", "refresh_token is required");
  const shard = refreshShard(token);
  const result = await deps.refreshTokens(shard).rotate(token, deps.clientId, shard);
  if (!result.ok) {
    const why = {
      unknown: "unknown refresh token",
      expired: "the refresh token has expired",
      reused: "refresh token reuse detected: the token family is revoked",
      superseded:
        "refresh token of a family since replaced for this user and client (one family per user and client): taken for a stolen one, the user's family is revoked",
      family_revoked: "the refresh token's family has been revoked",
      wrong_client: "the refresh token was issued to another client",
    }[result.reason];
    return invalid("invalid_grant", why);
  }
  const access_token = await signAccessToken(deps, { client_id: result.grant.clientId, scope: result.grant.scope }, result.grant.userId, deps.issuer);
  return { status: 200, body: { access_token, refresh_token: result.next, token_type: "Bearer", expires_in: ACCESS_TOKEN_TTL_S, scope: result.grant.scope } };
}
