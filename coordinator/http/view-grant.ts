/**
 * What a dashboard link grants: one view — a run, a schedule, two runs compared, or the runs
 * list — to read, and nothing else. A link printed in a CI log is read by whoever reads the
 * log, so what it opens is as small as the page it names: that page and the API reads the
 * page makes, no write, no other run. Only a link asked for with the full token and
 * `abort: true` (never printed by the CLI) may also abort its run, and then only with the
 * session's CSRF token (dashboard-auth.ts).
 *
 * A grant is `<base64url(JSON payload)>.<base64url(HMAC-SHA256)>`; the payload names the
 * view, whether it may abort, its expiry (unix seconds) and a nonce: a link's nonce is
 * spent on first use (view-links.ts), a session's derives its CSRF token. The key comes
 * from EDGELOAD_API_TOKEN: rotating the token signs every browser out.
 */
import { base64url, derivedHmacKey, fromBase64Url, hmacSha256Hex, randomHex } from "../../core/data/web-crypto.ts";
import { RUN_ID } from "./run-id.ts";

export type View =
  | { readonly kind: "run"; readonly id: string }
  | { readonly kind: "schedule"; readonly id: string }
  | { readonly kind: "compare"; readonly a: string; readonly b: string }
  | { readonly kind: "runs" };

/** A link is traded once for a session; a session is what the browser's cookie holds. */
export type GrantKind = "link" | "session";

export interface Grant {
  readonly view: View;
  readonly canAbort: boolean;
  /** Unix seconds. */
  readonly exp: number;
  readonly nonce: string;
}

export type GrantCheck = { ok: true; grant: Grant } | { ok: false; reason: "malformed" | "bad_signature" | "expired" };

const SCHEDULE_ID = /^s-[0-9a-z]{6,12}-[0-9a-f]{8}$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function grantKey(apiToken: string): Promise<CryptoKey> {
  return derivedHmacKey(apiToken, "edgeload dashboard key v2");
}

function signedText(kind: GrantKind, payload: string): Uint8Array {
  return encoder.encode(`edgeload-dashboard-v2\n${kind}\n${payload}`);
}

/** A new grant of `view` until `exp`, with a fresh nonce. */
export function newGrant(view: View, canAbort: boolean, exp: number): Grant {
  return { view, canAbort: canAbort && view.kind === "run", exp, nonce: randomHex(16) };
}

export async function signGrant(apiToken: string, kind: GrantKind, grant: Grant): Promise<string> {
  const payload = base64url(encoder.encode(JSON.stringify({ v: grant.view, abort: grant.canAbort, exp: grant.exp, n: grant.nonce })));
  const sig = await crypto.subtle.sign("HMAC", await grantKey(apiToken), signedText(kind, payload));
  return `${payload}.${base64url(sig)}`;
}

export async function verifyGrant(apiToken: string, kind: GrantKind, text: string, nowS: number): Promise<GrantCheck> {
  const [payload, sigText, extra] = text.split(".");
  const sig = fromBase64Url(sigText ?? "");
  if (extra !== undefined || !payload || !sig?.length) return { ok: false, reason: "malformed" };
  if (!(await crypto.subtle.verify("HMAC", await grantKey(apiToken), sig, signedText(kind, payload)))) return { ok: false, reason: "bad_signature" };
  const grant = parsePayload(payload);
  if (!grant) return { ok: false, reason: "malformed" };
  if (grant.exp < nowS) return { ok: false, reason: "expired" };
  return { ok: true, grant };
}

function parsePayload(payload: string): Grant | null {
  const bytes = fromBase64Url(payload);
  if (!bytes) return null;
  try {
    const p = JSON.parse(decoder.decode(bytes)) as { v?: unknown; abort?: unknown; exp?: unknown; n?: unknown };
    const view = parseView(p.v);
    if (!view || typeof p.abort !== "boolean" || !Number.isInteger(p.exp) || typeof p.n !== "string") return null;
    return { view, canAbort: p.abort, exp: p.exp as number, nonce: p.n };
  } catch {
    return null;
  }
}

/** A view from its JSON form, ids checked (a path is built from them), or null. */
export function parseView(value: unknown): View | null {
  const v = value as Record<string, unknown> | null;
  if (typeof v !== "object" || v === null) return null;
  if (v.kind === "run" && typeof v.id === "string" && RUN_ID.test(v.id)) return { kind: "run", id: v.id };
  if (v.kind === "schedule" && typeof v.id === "string" && SCHEDULE_ID.test(v.id)) return { kind: "schedule", id: v.id };
  if (v.kind === "compare" && typeof v.a === "string" && typeof v.b === "string" && RUN_ID.test(v.a) && RUN_ID.test(v.b))
    return { kind: "compare", a: v.a, b: v.b };
  if (v.kind === "runs") return { kind: "runs" };
  return null;
}

/** Whether `id` is a schedule's id (a view's ids are checked before a path is built of them). */
export const isScheduleId = (id: string): boolean => SCHEDULE_ID.test(id);

/** The page a view shows. */
export function viewPage(view: View): string {
  switch (view.kind) {
    case "run":
      return `/v1/runs/${view.id}/dashboard`;
    case "schedule":
      return `/v1/schedules/${view.id}/dashboard`;
    case "compare":
      return `/v1/runs/${view.a}/compare/${view.b}/dashboard`;
    case "runs":
      return "/";
  }
}

/** One name per view, for its session cookie: a browser may hold sessions for several. */
export function viewName(view: View): string {
  return view.kind === "run" || view.kind === "schedule" ? `${view.kind}_${view.id}` : view.kind === "compare" ? `compare_${view.a}_${view.b}` : "runs";
}

/**
 * Whether a session of `grant` may make this request: GETs of its page and of what that page
 * reads, and for a run that may abort, its abort. Paths come from a parsed URL, so `..`
 * segments (and their %2e forms) are already resolved; ids were checked by `parseView`.
 */
export function grantCovers(grant: Grant, method: string, path: string): boolean {
  const { view } = grant;
  if (method === "POST") return view.kind === "run" && grant.canAbort && path === `/v1/runs/${view.id}/abort`;
  if (method !== "GET" && method !== "HEAD") return false;
  switch (view.kind) {
    case "run":
      return readsRun(view.id, path);
    case "schedule":
      return [`/v1/schedules/${view.id}`, `/v1/schedules/${view.id}/trend`, viewPage(view)].includes(path);
    case "compare":
      return path === `/v1/runs/${view.a}/compare/${view.b}` || path === viewPage(view) || readsRun(view.a, path) || readsRun(view.b, path);
    case "runs":
      return path === "/" || path === "/v1/runs";
  }
}

/** A read of one run's own pages and data; its comparisons with other runs are other views. */
function readsRun(id: string, path: string): boolean {
  return path === `/v1/runs/${id}` || (path.startsWith(`/v1/runs/${id}/`) && !path.includes("/compare/"));
}

/** The CSRF token of a session that may abort: bound to the session's nonce, so to its cookie. */
export function csrfToken(apiToken: string, grant: Grant): Promise<string> {
  return hmacSha256Hex(apiToken, `edgeload dashboard csrf v2\n${grant.nonce}`);
}
