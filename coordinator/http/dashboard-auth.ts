/**
 * How a browser gets into one dashboard page without the bearer token ever being in a URL.
 *
 * 1. Whoever holds a token asks for a view link (`POST /v1/dashboard-links`, or the CLI
 *    prints one outside CI): a URL with `?view=<signed grant>` for one view (view-grant.ts),
 *    valid VIEW_LINK_TTL_S and once.
 * 2. Opening it spends the link (view-links.ts), sets a session cookie for that view only
 *    (HttpOnly, SameSite=Strict, signed, SESSION_TTL_S) and redirects to the page without
 *    the grant, so the address bar, history and later request logs hold no credential.
 * 3. The page's own requests carry the cookie, and it reads only what the page reads. No
 *    cookie authorises a write: the one exception, a run page opened with an abort link,
 *    must also send the session's CSRF token and come from this origin.
 *
 * A browser may hold sessions for several views: one cookie each, named after the view.
 */
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { secretsEqual } from "../../core/data/web-crypto.ts";
import type { Env } from "../../workers/env.ts";
import { spendViewLink } from "../store/view-links.ts";
import { csrfToken, grantCovers, newGrant, signGrant, verifyGrant, viewName, viewPage, type Grant, type View } from "./view-grant.ts";

export const VIEW_LINK_TTL_S = 10 * 60;
export const SESSION_TTL_S = 12 * 60 * 60;
export const SESSION_COOKIE_PREFIX = "edgeload_view_";
/** The header the dashboard's abort button sends its session's CSRF token in. */
export const CSRF_HEADER = "x-edgeload-csrf";

function apiToken(env: Env): string {
  if (!env.EDGELOAD_API_TOKEN) throw new Error("EDGELOAD_API_TOKEN is not set");
  return env.EDGELOAD_API_TOKEN;
}

/** A single-use view link to `view` on this origin. */
export async function viewLink(env: Env, origin: string, view: View, canAbort: boolean, nowS: number): Promise<{ url: string; expiresAt: string }> {
  const grant = newGrant(view, canAbort, nowS + VIEW_LINK_TTL_S);
  const url = new URL(viewPage(view), origin);
  url.searchParams.set("view", await signGrant(apiToken(env), "link", grant));
  return { url: url.toString(), expiresAt: new Date(grant.exp * 1000).toISOString() };
}

export type LinkOpening = { ok: true; grant: Grant } | { ok: false; reason: "malformed" | "bad_signature" | "expired" | "spent" | "other_page" };

/** Checks a link opened at `path` and spends it: a link opens its own page, once. */
export async function openLink(env: Env, text: string, path: string, nowS: number): Promise<LinkOpening> {
  const check = await verifyGrant(apiToken(env), "link", text, nowS);
  if (!check.ok) return check;
  if (viewPage(check.grant.view) !== path) return { ok: false, reason: "other_page" };
  if (!(await spendViewLink(env.DB, check.grant.nonce, check.grant.exp, nowS))) return { ok: false, reason: "spent" };
  return check;
}

/** Sets the session cookie of the link's view; the session keeps the link's right to abort. */
export async function startSession<E extends { Bindings: Env }>(c: Context<E>, link: Grant, nowS: number): Promise<void> {
  const session = newGrant(link.view, link.canAbort, nowS + SESSION_TTL_S);
  setCookie(c, SESSION_COOKIE_PREFIX + viewName(link.view), await signGrant(apiToken(c.env), "session", session), {
    httpOnly: true,
    sameSite: "Strict",
    path: "/",
    maxAge: SESSION_TTL_S,
    secure: new URL(c.req.url).protocol === "https:",
  });
}

export type SessionLookup = { kind: "none" } | { kind: "covered"; grant: Grant } | { kind: "elsewhere"; pages: readonly string[] };

/**
 * The request's dashboard session that covers it; else whether the browser has sessions
 * for other pages only (a 403 that names them, not a 401), or none at all.
 */
export async function sessionFor<E extends { Bindings: Env }>(c: Context<E>, method: string, path: string, nowS: number): Promise<SessionLookup> {
  const others: string[] = [];
  for (const [name, value] of Object.entries(getCookie(c))) {
    if (!name.startsWith(SESSION_COOKIE_PREFIX)) continue;
    const check = await verifyGrant(apiToken(c.env), "session", value, nowS);
    if (!check.ok) continue;
    if (grantCovers(check.grant, method, path)) return { kind: "covered", grant: check.grant };
    others.push(viewPage(check.grant.view));
  }
  return others.length ? { kind: "elsewhere", pages: others } : { kind: "none" };
}

/** The CSRF token a run page opened with an abort link embeds; null for every other session. */
export function abortToken(env: Env, session: Grant): Promise<string> | null {
  return session.canAbort ? csrfToken(apiToken(env), session) : null;
}

/**
 * Whether a session's write carries its CSRF token and comes from this origin (the Origin
 * header browsers send): another site cannot forge either.
 */
export async function writeAllowed<E extends { Bindings: Env }>(c: Context<E>, session: Grant): Promise<boolean> {
  const token = abortToken(c.env, session);
  return token !== null && sameOrigin(c) && (await secretsEqual(c.req.header(CSRF_HEADER) ?? "", await token));
}

/** Whether the request's Origin header is this origin. */
export function sameOrigin(c: Context): boolean {
  return c.req.header("origin") === new URL(c.req.url).origin;
}
