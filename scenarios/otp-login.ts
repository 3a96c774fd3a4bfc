/**
 * The mail-OTP full login, five requests per iteration, each tagged with its step, as
 * Authrim v0.1.15 answers them (docs/authrim.md): authorize (no session: 302 to its login
 * page, 200 from providers that answer the page itself) → email_code (the admin test API
 * issues a code and its `otpSessionId`) → verify (`/api/auth/email-codes/verify` with
 * cookie `authrim_otp_session=<otpSessionId>`; sets `authrim_session`, URL-encoded) →
 * authorize_silent (the session cookie sent decoded, as Authrim reads the raw header; 302
 * with a code) → token (authorization code + PKCE, Basic auth).
 * The flow stops at the first failed step and names it: `otp_login_failed_step{step:…}`
 * (in the summary's text and JSON), with the provider's `error` when it gave one
 * (`otp_login_failed_step{step:authorize_silent,error:consent_required}`).
 * `otp_login_duration` is the whole login of a successful flow, `otp_login_success` the
 * share of flows that got their tokens.
 */
import { s256 } from "../core/data/web-crypto.ts";
import { basicAuth, FORM, jsonBody, type Flow, type FlowIO, type FlowResponse } from "./flow.ts";
import { randomToken, required, seedEntries, shuffled, type ScenarioDefinition } from "./scenario.ts";
import { SCENARIO_OUTLINES } from "../core/spec/builtin-scenarios.ts";

const OTP_COOKIE = "authrim_otp_session";
const SESSION_COOKIE = "authrim_session";
const OK = new Set([200, 201]);
const FOUND = new Set([302]);
const LOGIN_PAGE = new Set([200, 302]);
/** The verify path of Authrim v0.1.15 (the reference suite's script posts to an older one, a 404 there). */
export const VERIFY_PATH = "/api/auth/email-codes/verify";

/**
 * The value of one cookie from a response's Set-Cookie header(s), decoded: Authrim sets its
 * session cookie URL-encoded but reads the raw header, so it must go back decoded.
 */
export function setCookie(r: FlowResponse, name: string): string | null {
  const all = r.headers?.getSetCookie?.() ?? [r.headers?.get("set-cookie") ?? ""];
  for (const line of all) {
    const m = new RegExp(`(?:^|,\\s*)${name}=([^;]*)`).exec(line);
    if (m?.[1]) {
      try {
        return decodeURIComponent(m[1]);
      } catch {
        return m[1];
      }
    }
  }
  return null;
}

/** The provider's OAuth `error` in a JSON body or a redirect's query, for naming a failed step. */
function providerError(r: FlowResponse, base: string): string | null {
  const location = r.status >= 300 && r.status < 400 ? r.headers?.get("location") : null;
  const fromRedirect = location ? new URL(location, base).searchParams.get("error") : null;
  const fromBody = jsonBody<{ error?: unknown }>(r)?.error;
  const error = fromRedirect ?? (typeof fromBody === "string" ? fromBody : null);
  return error && /^[a-z_]{1,40}$/.test(error) ? error : null;
}

const STEP_NAMES = SCENARIO_OUTLINES["otp-login"].steps.map((s) => s.name);
type StepName = (typeof STEP_NAMES)[number];

/**
 * Counts a flow that stopped at `step`: a failed check, the step (and the provider's
 * `error`, when it gave one) in `otp_login_failed_step`, and a failed login.
 */
function failedAt(io: FlowIO, step: StepName, r: FlowResponse, base: string): void {
  io.check(false);
  // Named in the summary's text and JSON: which step, and what the provider said.
  const error = providerError(r, base);
  io.count("otp_login_failed_step");
  io.count(`otp_login_failed_step{step:${step}}`);
  if (error) io.count(`otp_login_failed_step{step:${step},error:${error}}`);
  io.rate("otp_login_success", false);
}

/** One login's authorization request: a fresh PKCE verifier (RFC 7636), state and nonce on the client's authorize URL. */
async function authorizeRequest(authorizeBase: string): Promise<{ readonly url: string; readonly verifier: string; readonly state: string }> {
  const verifier = randomToken();
  const challenge = await s256(verifier);
  const state = randomToken(12);
  return { url: `${authorizeBase}&state=${state}&nonce=${randomToken(12)}&code_challenge=${challenge}`, verifier, state };
}

/** The code of a silent authorize's 302, when it went back with this login's state; else null. */
function redirectedCode(silent: FlowResponse, state: string, base: string): string | null {
  const location = silent.status === 302 ? silent.headers?.get("location") : null;
  const params = location ? new URL(location, base).searchParams : null;
  return params?.get("state") === state ? params.get("code") : null;
}

export const otpLogin: ScenarioDefinition = {
  ...SCENARIO_OUTLINES["otp-login"],
  create(ctx): Flow {
    const users = shuffled(seedEntries(ctx, "users"));
    const clientId = required(ctx.options, "clientId");
    const redirectUri = required(ctx.options, "redirectUri");
    const clientAuth = basicAuth(clientId, required(ctx.options, "clientSecret"));
    const adminAuth = `Bearer ${required(ctx.options, "adminSecret")}`;
    const authorizeBase =
      `${ctx.target}/authorize?` +
      new URLSearchParams({
        response_type: "code",
        client_id: clientId,
        redirect_uri: redirectUri,
        scope: "openid profile email",
        code_challenge_method: "S256",
      });
    return {
      async run(io, it) {
        const user = users[it.global % users.length]!;
        const { url: authorizeUrl, verifier, state } = await authorizeRequest(authorizeBase);
        const start = io.now();
        const fail = (step: StepName, r: FlowResponse) => failedAt(io, step, r, ctx.target);

        const login = await io.send(0, { url: authorizeUrl, method: "GET", expect: LOGIN_PAGE, redirect: "manual" });
        if (!LOGIN_PAGE.has(login.status)) return fail("authorize", login);

        const issued = await io.send(1, {
          url: `${ctx.target}/api/admin/test/email-codes`,
          method: "POST",
          expect: OK,
          readBody: true,
          headers: { authorization: adminAuth, "content-type": "application/json" },
          body: JSON.stringify({ email: user.email, create_user: false }),
        });
        const { code, otpSessionId } = jsonBody<{ code?: unknown; otpSessionId?: unknown }>(issued) ?? {};
        if (!OK.has(issued.status) || typeof code !== "string" || typeof otpSessionId !== "string") return fail("email_code", issued);

        const verified = await io.send(2, {
          url: `${ctx.target}${VERIFY_PATH}`,
          method: "POST",
          expect: OK,
          readBody: true,
          headers: { cookie: `${OTP_COOKIE}=${otpSessionId}`, "content-type": "application/json" },
          body: JSON.stringify({ email: user.email, code }),
        });
        const sessionId = jsonBody<{ sessionId?: unknown }>(verified)?.sessionId;
        const session = setCookie(verified, SESSION_COOKIE) ?? (typeof sessionId === "string" ? sessionId : null);
        if (!OK.has(verified.status) || !session) return fail("verify", verified);

        const silent = await io.send(3, {
          url: `${authorizeUrl}&prompt=none`,
          method: "GET",
          expect: FOUND,
          redirect: "manual",
          headers: { cookie: `${SESSION_COOKIE}=${session}` },
        });
        const authCode = redirectedCode(silent, state, ctx.target);
        if (!authCode) return fail("authorize_silent", silent);

        const tokens = await io.send(4, {
          url: `${ctx.target}/token`,
          method: "POST",
          expect: OK,
          readBody: true,
          headers: { authorization: clientAuth, "content-type": FORM },
          body: new URLSearchParams({ grant_type: "authorization_code", code: authCode, redirect_uri: redirectUri, code_verifier: verifier }).toString(),
        });
        if (tokens.status !== 200 || typeof jsonBody<{ access_token?: unknown }>(tokens)?.access_token !== "string") return fail("token", tokens);

        io.check(true);
        io.rate("otp_login_success", true);
        io.trend("otp_login_duration", io.now() - start);
      },
    };
  },
};
