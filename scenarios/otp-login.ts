/**
 * The mail-OTP full login of the reference suite, five requests per iteration, each
 * tagged with its step: authorize (the login step; sets the OTP session cookie) →
 * email_code (the admin test API issues a code) → verify (sets `authrim_session`) →
 * authorize_silent (302 with a code) → token (authorization code + PKCE, Basic auth).
 * The flow stops at the first failed step; `otp_login_duration` is the whole login of a
 * successful flow, `otp_login_success` the share of flows that got their tokens.
 */
import { s256 } from "../core/data/web-crypto.ts";
import { basicAuth, FORM, jsonBody, type Flow, type FlowResponse } from "./flow.ts";
import { randomToken, required, seedEntries, shuffled, type ScenarioDefinition } from "./scenario.ts";
import { SCENARIO_OUTLINES } from "../core/spec/builtin-scenarios.ts";

const OTP_COOKIE = "authrim_otp_session";
const SESSION_COOKIE = "authrim_session";
const OK = new Set([200, 201]);
const FOUND = new Set([302]);

/** The value of one cookie from a response's Set-Cookie header(s). */
export function setCookie(r: FlowResponse, name: string): string | null {
  const all = r.headers?.getSetCookie?.() ?? [r.headers?.get("set-cookie") ?? ""];
  for (const line of all) {
    const m = new RegExp(`(?:^|,\\s*)${name}=([^;]*)`).exec(line);
    if (m) return m[1]!;
  }
  return null;
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
        const verifier = randomToken();
        const challenge = await s256(verifier);
        const state = randomToken(12);
        const authorizeUrl = `${authorizeBase}&state=${state}&nonce=${randomToken(12)}&code_challenge=${challenge}`;
        const start = io.now();
        const fail = () => {
          io.check(false);
          // Counted under the step that failed (the last one sent), so
          // `otp_login_failed_step{step:verify}` works as a threshold filter.
          io.count("otp_login_failed_step");
          io.rate("otp_login_success", false);
        };

        const login = await io.send(0, { url: authorizeUrl, method: "GET", expect: OK, readBody: true, redirect: "manual" });
        const otpSession = setCookie(login, OTP_COOKIE);
        if (login.status !== 200 || !otpSession) return fail();

        const issued = await io.send(1, {
          url: `${ctx.target}/api/admin/test/email-codes`,
          method: "POST",
          expect: OK,
          readBody: true,
          headers: { authorization: adminAuth, "content-type": "application/json" },
          body: JSON.stringify({ email: user.email, create_user: false }),
        });
        const code = jsonBody<{ code?: unknown }>(issued)?.code;
        if (!OK.has(issued.status) || typeof code !== "string") return fail();

        const verified = await io.send(2, {
          url: `${ctx.target}/api/auth/email-code/verify`,
          method: "POST",
          expect: OK,
          readBody: true,
          headers: { cookie: `${OTP_COOKIE}=${otpSession}`, "content-type": "application/json" },
          body: JSON.stringify({ email: user.email, code }),
        });
        const session = setCookie(verified, SESSION_COOKIE);
        if (!OK.has(verified.status) || !session) return fail();

        const silent = await io.send(3, {
          url: `${authorizeUrl}&prompt=none`,
          method: "GET",
          expect: FOUND,
          redirect: "manual",
          headers: { cookie: `${SESSION_COOKIE}=${session}` },
        });
        const location = silent.status === 302 ? silent.headers?.get("location") : null;
        const params = location ? new URL(location, ctx.target).searchParams : null;
        const authCode = params?.get("state") === state ? params.get("code") : null;
        if (!authCode) return fail();

        const tokens = await io.send(4, {
          url: `${ctx.target}/token`,
          method: "POST",
          expect: OK,
          readBody: true,
          headers: { authorization: clientAuth, "content-type": FORM },
          body: new URLSearchParams({ grant_type: "authorization_code", code: authCode, redirect_uri: redirectUri, code_verifier: verifier }).toString(),
        });
        if (tokens.status !== 200 || typeof jsonBody<{ access_token?: unknown }>(tokens)?.access_token !== "string") return fail();

        io.check(true);
        io.rate("otp_login_success", true);
        io.trend("otp_login_duration", io.now() - start);
      },
    };
  },
};
