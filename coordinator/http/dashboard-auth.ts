/**
 * How a browser gets into the dashboard without the bearer token ever being in a URL.
 *
 * 1. Whoever holds a token asks for a view link (`POST /v1/dashboard-links`, or the CLI
 *    prints one): a URL with `?view=<signed grant>` that expires in VIEW_LINK_TTL_S and
 *    carries the token's scope (all, or read-only), never the token.
 * 2. Opening it exchanges the grant for a session cookie (HttpOnly, SameSite=Strict, signed,
 *    SESSION_TTL_S) and redirects to the same page without the grant, so the address bar,
 *    history and later request logs hold no credential.
 * 3. The dashboard's own requests (its event stream, the runs list, Abort) carry the cookie.
 *    A request that changes something must also come from this origin (the Origin header
 *    browsers send), so another site cannot abort a run with the user's cookie.
 *
 * Grants and sessions are HMAC-SHA256 signatures over kind, scope and expiry with a key
 * derived from EDGELOAD_API_TOKEN: rotating the token signs everyone out.
 */
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { base64url, derivedHmacKey, fromBase64Url } from "../../core/data/web-crypto.ts";
import type { Scope } from "./scope.ts";
import type { Env } from "../../workers/env.ts";

export const VIEW_LINK_TTL_S = 10 * 60;
export const SESSION_TTL_S = 12 * 60 * 60;
export const SESSION_COOKIE = "edgeload_session";

type Kind = "link" | "session";

const encoder = new TextEncoder();

function dashboardKey(env: Env): Promise<CryptoKey> {
  if (!env.EDGELOAD_API_TOKEN) throw new Error("EDGELOAD_API_TOKEN is not set");
  return derivedHmacKey(env.EDGELOAD_API_TOKEN, "edgeload dashboard key v1");
}

function message(kind: Kind, scope: Scope, exp: number): Uint8Array {
  return encoder.encode(`edgeload-dashboard-v1\n${kind}\n${scope}\n${exp}`);
}

/** `<scope>.<exp>.<signature>`: what a view link's `view` parameter or the session cookie holds. */
export async function signGrant(env: Env, kind: Kind, scope: Scope, exp: number): Promise<string> {
  const sig = base64url(await crypto.subtle.sign("HMAC", await dashboardKey(env), message(kind, scope, exp)));
  return `${scope}.${exp}.${sig}`;
}

export type GrantCheck = { ok: true; scope: Scope; exp: number } | { ok: false; reason: "malformed" | "bad_signature" | "expired" };

export async function verifyGrant(env: Env, kind: Kind, grant: string, nowS: number): Promise<GrantCheck> {
  const [scope, expText, sigText, extra] = grant.split(".");
  const exp = Number(expText);
  const sig = fromBase64Url(sigText ?? "");
  if (extra !== undefined || (scope !== "all" && scope !== "read") || !Number.isInteger(exp) || !sig?.length) return { ok: false, reason: "malformed" };
  if (!(await crypto.subtle.verify("HMAC", await dashboardKey(env), sig, message(kind, scope, exp)))) return { ok: false, reason: "bad_signature" };
  if (exp < nowS) return { ok: false, reason: "expired" };
  return { ok: true, scope, exp };
}

/** A view link to `path` on this origin for a holder of `scope`. */
export async function viewLink(env: Env, origin: string, path: string, scope: Scope, nowS: number): Promise<{ url: string; expiresAt: string }> {
  const exp = nowS + VIEW_LINK_TTL_S;
  const url = new URL(path, origin);
  url.searchParams.set("view", await signGrant(env, "link", scope, exp));
  return { url: url.toString(), expiresAt: new Date(exp * 1000).toISOString() };
}

/** The scope of the request's session cookie, or null when it has none that is valid. */
export async function sessionScope<E extends { Bindings: Env }>(c: Context<E>, nowS: number): Promise<Scope | null> {
  const cookie = getCookie(c, SESSION_COOKIE);
  if (!cookie) return null;
  const check = await verifyGrant(c.env, "session", cookie, nowS);
  return check.ok ? check.scope : null;
}

/** Sets the session cookie for `scope`. */
export async function startSession<E extends { Bindings: Env }>(c: Context<E>, scope: Scope, nowS: number): Promise<void> {
  const secure = new URL(c.req.url).protocol === "https:";
  setCookie(c, SESSION_COOKIE, await signGrant(c.env, "session", scope, nowS + SESSION_TTL_S), {
    httpOnly: true,
    sameSite: "Strict",
    path: "/",
    maxAge: SESSION_TTL_S,
    secure,
  });
}

/** Whether a cookie-authenticated request that changes something comes from this origin. */
export function sameOrigin(c: Context): boolean {
  return c.req.header("origin") === new URL(c.req.url).origin;
}
