/**
 * Login for the Authrim-style target, as Authrim v0.1.15 answers it (docs/authrim.md):
 * `/authorize` (authorization code flow with PKCE S256, `prompt=none` silent authentication
 * from the `authrim_session` cookie, consent, the per-user code limit) and the mail-OTP
 * steps. A browser without a session is sent to the provider's own sign-in form and consent
 * screen (sign-in-flow.ts), the request kept under a challenge (pending-authorization.ts).
 *
 * The mail-OTP login is: GET /authorize without a session (302 to
 * `/login?challenge_id=…`, no cookie) → POST /api/admin/test/email-codes (201 `{code,
 * otpSessionId}`) → POST /api/auth/email-codes/verify `{code, email}` with cookie
 * `authrim_otp_session=<otpSessionId>` (sets `authrim_session`, URL-encoded, as Hono's
 * setCookie does) → GET /authorize?prompt=none with the session cookie → POST /token.
 * Like Authrim, /authorize reads the session cookie from the raw header without decoding
 * it, and session ids contain `:`, so a client must send the cookie decoded.
 */
import type { AuthStore } from "./auth-store.ts";
import { challengeShard } from "./challenge-shards.ts";
import { issueCode, keepChallenge, redirect, withParams, type PendingAuthorization } from "./pending-authorization.ts";

export const SESSION_COOKIE = "authrim_session";
export const OTP_SESSION_COOKIE = "authrim_otp_session";
const OTP_TTL_S = 300;

/** A cookie's value as it stands in the header: not decoded, as Authrim reads it. */
export function cookie(header: string | undefined, name: string): string | null {
  for (const part of (header ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return null;
}

const randomId = () => crypto.randomUUID().replace(/-/g, "") + crypto.randomUUID().replace(/-/g, "").slice(0, 16);

export interface AuthorizeDeps {
  readonly store: AuthStore;
  readonly findClient: (id: string) => Promise<{ client_name: string; redirect_uris: string[]; is_trusted: boolean; skip_consent: boolean } | null>;
  /** MAX_CODES_PER_USER (feature-settings.ts). */
  readonly maxCodesPerUser: () => Promise<number>;
}

/**
 * GET /authorize. Errors about the client or redirect URI are answered directly (never
 * redirected to an unverified URI, RFC 6749 §4.1.2.1); the rest go back to the client.
 * Without a session, a browser goes to the sign-in page, with a session but no consent to
 * the consent screen (sign-in-flow.ts), each under a challenge that keeps the request.
 */
export async function authorize(url: URL, cookieHeader: string | undefined, deps: AuthorizeDeps): Promise<Response> {
  const p = (name: string) => url.searchParams.get(name);
  const clientId = p("client_id") ?? "";
  const redirectUri = p("redirect_uri") ?? "";
  const client = await deps.findClient(clientId);
  if (!client) return Response.json({ error: "invalid_client", error_description: "unknown client_id" }, { status: 400 });
  if (!client.redirect_uris.includes(redirectUri))
    return Response.json({ error: "invalid_request", error_description: "redirect_uri is not registered for this client" }, { status: 400 });
  const state = p("state");
  const back = (params: Record<string, string | null>) => redirect(withParams(redirectUri, { ...params, state }));
  if (p("response_type") !== "code") return back({ error: "unsupported_response_type" });
  const scope = p("scope") ?? "";
  if (!scope.split(" ").includes("openid")) return back({ error: "invalid_scope", error_description: "openid is required" });
  const challenge = p("code_challenge");
  if (!challenge || p("code_challenge_method") !== "S256")
    return back({ error: "invalid_request", error_description: "PKCE with code_challenge_method=S256 is required" });
  const silent = (p("prompt") ?? "").split(" ").includes("none");

  const sessionId = cookie(cookieHeader, SESSION_COOKIE);
  const session = sessionId ? await deps.store.get<{ user_id: string }>("session", sessionId) : null;
  if (!session) {
    if (silent) return back({ error: "login_required", error_description: "User authentication is required" });
    const id = await keepChallenge(deps.store, { type: "login", query: url.search, client_name: client.client_name });
    // The sign-in page's `ms` knob (sign-in-flow.ts) passes through, so a load test can slow the page it reaches from here.
    const hold = p("ms");
    return redirect(`/login?challenge_id=${id}${hold === null ? "" : `&ms=${encodeURIComponent(hold)}`}`);
  }
  const request: PendingAuthorization = { client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge, nonce: p("nonce"), scope, state };
  // This target keeps no consent records: only a trusted client that skips consent gets a
  // code without a consent screen, as on Authrim before anyone consented.
  if (!(client.is_trusted && client.skip_consent)) {
    if (silent) return back({ error: "consent_required", error_description: "User consent is required" });
    const id = await keepChallenge(deps.store, { type: "consent", request, user_id: session.user_id, client_name: client.client_name });
    return redirect(`/consent?challenge_id=${id}`);
  }
  return issueCode(deps.store, await deps.maxCodesPerUser(), request, session.user_id);
}

/**
 * A mail OTP for a user, bound to a new OTP session (the admin test API returns both instead
 * of mailing the code), kept in the challenge shard the issuing worker's count picks
 * (`shards`: challenge-shards.ts).
 */
export async function issueEmailCode(
  store: AuthStore,
  email: string,
  userId: string,
  shards: number,
): Promise<{ success: true; code: string; otpSessionId: string; expiresAt: number; userId: string }> {
  const code = String(crypto.getRandomValues(new Uint32Array(1))[0]! % 1_000_000).padStart(6, "0");
  const otpSessionId = crypto.randomUUID();
  await store.put("email_code", challengeKey(otpSessionId, shards), { code, user_id: userId, email: email.toLowerCase() }, OTP_TTL_S);
  return { success: true, code, otpSessionId, expiresAt: Math.floor(Date.now() / 1000) + OTP_TTL_S, userId };
}

/**
 * POST /api/auth/email-codes/verify: the code of the OTP session named by the cookie, looked
 * for in the challenge shard the verifying worker's count picks (`shards`), used up whatever
 * the outcome (Authrim consumes the challenge first); on success a login session, its cookie
 * set URL-encoded. A code not found there, wrong or used answers as Authrim's
 * AUTH_INVALID_CODE does: 400 `interaction_required`, the same for every cause.
 */
export async function verifyEmailCode(store: AuthStore, email: string, code: string, otpSession: string | null, shards: number): Promise<Response> {
  if (!otpSession) {
    return Response.json(
      { error: "session_expired", error_description: `no ${OTP_SESSION_COOKIE} cookie: send the otpSessionId the code came with` },
      { status: 401 },
    );
  }
  const issued = await store.take<{ code: string; user_id: string; email: string }>("email_code", challengeKey(otpSession, shards));
  if (!issued || issued.code !== code || issued.email !== email.toLowerCase()) {
    return Response.json({ error: "interaction_required", error_description: "Invalid or expired verification code", error_code: "AR000006" }, { status: 400 });
  }
  const session = await createSession(store, issued.user_id, 86_400);
  const headers = new Headers();
  headers.append("set-cookie", `${OTP_SESSION_COOKIE}=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Lax`);
  headers.append("set-cookie", `${SESSION_COOKIE}=${encodeURIComponent(session)}; Max-Age=86400; Path=/; HttpOnly; Secure; SameSite=Lax`);
  return Response.json({ success: true, sessionId: session, userId: issued.user_id }, { headers });
}

/** Where a code is kept: its OTP session in the shard a worker with `shards` routes it to. */
function challengeKey(otpSessionId: string, shards: number): string {
  return `${challengeShard(otpSessionId, shards)}/${otpSessionId}`;
}

/** A login session; its id contains `:` as Authrim's sharded ids do, so its cookie form differs from the id. */
export async function createSession(store: AuthStore, userId: string, ttlS: number): Promise<string> {
  const id = `ses:${randomId()}`;
  await store.put("session", id, { user_id: userId }, ttlS);
  return id;
}
