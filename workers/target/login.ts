/**
 * Login for the Authrim-style target: `/authorize` (authorization code flow with PKCE
 * S256, `prompt=none` silent authentication from the `authrim_session` cookie), the mail
 * OTP steps, and the authorization-code grant of `/token`.
 *
 * The mail-OTP login of the reference suite is five requests: GET /authorize (no session:
 * answers the login step and sets `authrim_otp_session`) → POST
 * /api/admin/test/email-codes (issues a code) → POST /api/auth/email-code/verify (with
 * the OTP session cookie; sets `authrim_session`) → GET /authorize?prompt=none (302 with a
 * code) → POST /token (code + PKCE verifier).
 */
import type { AuthKind } from "./auth-state.ts";

export const SESSION_COOKIE = "authrim_session";
export const OTP_SESSION_COOKIE = "authrim_otp_session";
const CODE_TTL_S = 60;
const OTP_TTL_S = 300;

export interface AuthStore {
  put(kind: AuthKind, key: string, value: unknown, ttlS: number): Promise<void>;
  get<T>(kind: AuthKind, key: string): Promise<T | null>;
  take<T>(kind: AuthKind, key: string): Promise<T | null>;
}

export interface CodeRecord {
  readonly client_id: string;
  readonly redirect_uri: string;
  readonly user_id: string;
  readonly code_challenge: string;
  readonly nonce: string | null;
  readonly scope: string;
}

export function cookie(header: string | undefined, name: string): string | null {
  for (const part of (header ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return null;
}

const randomId = () => crypto.randomUUID().replace(/-/g, "") + crypto.randomUUID().replace(/-/g, "").slice(0, 16);

function redirect(location: string, extraHeaders: Record<string, string> = {}): Response {
  return new Response(null, { status: 302, headers: { location, "cache-control": "no-store", ...extraHeaders } });
}

function withParams(uri: string, params: Record<string, string | null>): string {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v);
  return url.href;
}

export interface AuthorizeDeps {
  readonly store: AuthStore;
  readonly findClient: (id: string) => Promise<{ redirect_uris: string[] } | null>;
}

/**
 * GET /authorize. Errors about the client or redirect URI are answered directly (never
 * redirected to an unverified URI, RFC 6749 §4.1.2.1); the rest go back to the client.
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

  const sessionId = cookie(cookieHeader, SESSION_COOKIE);
  const session = sessionId ? await deps.store.get<{ user_id: string }>("session", sessionId) : null;
  if (!session) {
    if (p("prompt") === "none") return back({ error: "login_required" });
    // The login step: a real provider shows its login page here; the OTP flow continues
    // with the pre-login session this sets.
    const otpSession = randomId();
    await deps.store.put("otp_session", otpSession, { client_id: clientId }, OTP_TTL_S * 2);
    return new Response(JSON.stringify({ login: "required", methods: ["email_code"] }), {
      status: 200,
      headers: { "content-type": "application/json", "set-cookie": `${OTP_SESSION_COOKIE}=${otpSession}; Path=/; HttpOnly; SameSite=Lax` },
    });
  }
  const code = randomId();
  const record: CodeRecord = { client_id: clientId, redirect_uri: redirectUri, user_id: session.user_id, code_challenge: challenge, nonce: p("nonce"), scope };
  await deps.store.put("code", code, record, CODE_TTL_S);
  return back({ code });
}

/** Issues a 6-digit mail OTP for a user (the admin test API returns it instead of mailing it). */
export async function issueEmailCode(store: AuthStore, email: string, userId: string): Promise<{ code: string; expires_in: number }> {
  const code = String(crypto.getRandomValues(new Uint32Array(1))[0]! % 1_000_000).padStart(6, "0");
  await store.put("email_code", email, { code, user_id: userId }, OTP_TTL_S);
  return { code, expires_in: OTP_TTL_S };
}

/** Verifies a mail OTP within a pre-login session; on success a login session cookie. */
export async function verifyEmailCode(store: AuthStore, email: string, code: string, otpSession: string | null): Promise<Response> {
  if (!otpSession || !(await store.get("otp_session", otpSession))) {
    return Response.json({ error: "invalid_session", error_description: `start with GET /authorize to get an ${OTP_SESSION_COOKIE} cookie` }, { status: 400 });
  }
  const issued = await store.get<{ code: string; user_id: string }>("email_code", email);
  if (!issued || issued.code !== code) return Response.json({ error: "invalid_code", error_description: "the code is wrong or has expired" }, { status: 400 });
  await store.take("email_code", email); // one use
  await store.take("otp_session", otpSession);
  const session = await createSession(store, issued.user_id, 3600);
  return Response.json({ ok: true, user_id: issued.user_id }, { headers: { "set-cookie": `${SESSION_COOKIE}=${session}; Path=/; HttpOnly; SameSite=Lax` } });
}

export async function createSession(store: AuthStore, userId: string, ttlS: number): Promise<string> {
  const id = randomId();
  await store.put("session", id, { user_id: userId }, ttlS);
  return id;
}
