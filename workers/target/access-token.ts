/**
 * Access-token validation as the Authrim-style target does it for /userinfo, /introspect
 * and /revoke: an RS256 JWT (`typ: "at+jwt"`) signed by one of our keys, not expired,
 * issued by us for us (`aud` = issuer), for a client that exists, and not revoked.
 * Expected failures come back as values with a tagged reason.
 */
import { createLocalJWKSet, errors, jwtVerify, type JWK, type JWTPayload } from "jose";

/**
 * Why a token is refused. `unknown_key`: its `kid` names no key of ours (a token signed by
 * another provider's key, or a key this one no longer has), which Authrim answers with a 500
 * "no public key available" on /userinfo rather than a 401.
 */
export type TokenFailure = "malformed" | "unknown_key" | "bad_signature" | "expired" | "wrong_audience" | "wrong_issuer" | "wrong_client" | "revoked";

export type TokenCheck =
  | { ok: true; claims: JWTPayload & { client_id: string; scope?: string; sub: string; jti: string } }
  | { ok: false; reason: TokenFailure };

export interface TokenContext {
  readonly issuer: string;
  readonly jwks: { keys: JWK[] };
  readonly clientExists: (clientId: string) => Promise<boolean>;
  readonly isRevoked: (jti: string) => Promise<boolean>;
  /** Epoch seconds; injected so tests can move time. */
  readonly nowS: number;
  /**
   * Whether audience and client are checked (default true). Authrim's /introspect checks
   * them only with strict validation on (introspection-settings.ts); userinfo always does.
   */
  readonly checkAudienceAndClient?: boolean;
}

export async function checkAccessToken(token: string, ctx: TokenContext): Promise<TokenCheck> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, createLocalJWKSet(ctx.jwks), {
      algorithms: ["RS256"],
      currentDate: new Date(ctx.nowS * 1000),
      clockTolerance: 0,
    }));
  } catch (error) {
    if (error instanceof errors.JWTExpired) return { ok: false, reason: "expired" };
    if (error instanceof errors.JWKSNoMatchingKey) return { ok: false, reason: "unknown_key" };
    if (error instanceof errors.JWSSignatureVerificationFailed) return { ok: false, reason: "bad_signature" };
    return { ok: false, reason: "malformed" };
  }
  if (payload.iss !== ctx.issuer) return { ok: false, reason: "wrong_issuer" };
  const strict = ctx.checkAudienceAndClient ?? true;
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (strict && !audiences.includes(ctx.issuer)) return { ok: false, reason: "wrong_audience" };
  const clientId = payload.client_id;
  if (typeof clientId !== "string" || (strict && !(await ctx.clientExists(clientId)))) return { ok: false, reason: "wrong_client" };
  if (typeof payload.sub !== "string" || typeof payload.jti !== "string") return { ok: false, reason: "malformed" };
  if (await ctx.isRevoked(payload.jti)) return { ok: false, reason: "revoked" };
  return { ok: true, claims: payload as TokenCheck & { ok: true } extends { claims: infer C } ? C : never };
}

/** Authrim's issuer: the base URL with `http:` rewritten to `https:`. */
export function issuerOf(url: URL): string {
  return url.origin.replace(/^http:/, "https:");
}
