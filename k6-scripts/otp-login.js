/**
 * otp-login: the mail-OTP full login as Authrim v0.1.15 answers it, five requests per
 * iteration, each tagged with its step (scenarios/otp-login.ts): authorize (no session: its
 * login page, a 302 there) → email_code (the admin test API issues a code and its
 * otpSessionId) → verify (/api/auth/email-codes/verify with cookie
 * authrim_otp_session=<otpSessionId>; sets authrim_session URL-encoded) → authorize_silent
 * (the session cookie sent decoded; 302 with a code) → token (authorization code + PKCE,
 * Basic auth). The flow stops at its first failed step, counted in
 * `otp_login_failed_step{step:…}` (with the provider's `error` when it gave one);
 * `otp_login_duration` is the whole login of a successful flow, `otp_login_success` the
 * share of flows that got their tokens.
 *
 *   BASE_URL=… CLIENT_ID=… CLIENT_SECRET=… ADMIN_SECRET=… REDIRECT_URI=… TOKEN_URL=… PRESET=rps10 k6 run k6-scripts/otp-login.js
 */
import { check } from "k6";
import exec from "k6/execution";
import { otpLoginMetrics } from "./lib/metrics.js";
import { basicAuth, FORM, form, jsonOf, queryOf, randomToken, s256, send, targetConfig } from "./lib/oauth.js";
import { scriptOptions } from "./lib/profile.js";
import { seedSet, shuffled } from "./lib/seeds.js";
export { handleSummary } from "./lib/summary.js";

const OTP_COOKIE = "authrim_otp_session";
const SESSION_COOKIE = "authrim_session";
const OK = [200, 201];
const LOGIN_PAGE = [200, 302];
const STEPS = ["authorize", "email_code", "verify", "authorize_silent", "token"];

const config = targetConfig("otp-login", ["clientId", "clientSecret", "adminSecret", "redirectUri"]);
const metrics = otpLoginMetrics();
const seed = seedSet("users", (users) => shuffled(users).map((u) => u.email));
export const options = scriptOptions({ scenario: "otp-login", shownAtZero: metrics.shownAtZero, steps: STEPS });
const clientAuth = basicAuth(config.clientId, config.clientSecret);
const authorizeBase = `${config.baseUrl}/authorize?${form({ response_type: "code", client_id: config.clientId, redirect_uri: config.redirectUri, scope: "openid profile email", code_challenge_method: "S256" })}`;

export const setup = () => seed.load();

/**
 * The value of a cookie the response set, decoded (Authrim sets its session cookie
 * URL-encoded but reads the raw header), or null.
 * @param {import("k6/http").RefinedResponse<any>} response
 * @param {string} name
 */
const setCookie = (response, name) => {
  const value = response.cookies[name]?.[0]?.value;
  return value ? decodeURIComponent(value) : null;
};

/**
 * The provider's OAuth error in a redirect's query or a JSON body, or null.
 * @param {import("k6/http").RefinedResponse<any>} response
 */
function providerError(response) {
  const location = response.status >= 300 && response.status < 400 ? (response.headers.Location ?? response.headers.location) : undefined;
  const error = (location ? queryOf(location)?.error : undefined) ?? jsonOf(response)?.error;
  return typeof error === "string" && /^[a-z_]{1,40}$/.test(error) ? error : null;
}

/** @param {string[] | null} data */
export default function (data) {
  const emails = seed.entries(data);
  const email = /** @type {string} */ (emails[exec.scenario.iterationInTest % emails.length]);
  const verifier = randomToken();
  const state = randomToken(12);
  const authorizeUrl = `${authorizeBase}&state=${state}&nonce=${randomToken(12)}&code_challenge=${s256(verifier)}`;
  const start = Date.now();
  /**
   * @param {string} step the step that failed (the last one sent)
   * @param {import("k6/http").RefinedResponse<any>} response its answer
   */
  const fail = (step, response) => {
    check(null, { "otp-login: tokens issued": () => false });
    const error = providerError(response);
    metrics.failedStep.add(1, error ? { step, error } : { step });
    metrics.success.add(false);
  };

  const login = send("authorize", { method: "GET", url: authorizeUrl, expect: LOGIN_PAGE });
  if (!LOGIN_PAGE.includes(login.status)) return fail("authorize", login);

  const issued = send("email_code", {
    method: "POST",
    url: `${config.baseUrl}/api/admin/test/email-codes`,
    expect: OK,
    headers: { authorization: `Bearer ${config.adminSecret}`, "content-type": "application/json" },
    body: JSON.stringify({ email, create_user: false }),
  });
  const { code, otpSessionId } = jsonOf(issued) ?? {};
  if (!OK.includes(issued.status) || typeof code !== "string" || typeof otpSessionId !== "string") return fail("email_code", issued);

  const verified = send("verify", {
    method: "POST",
    url: `${config.baseUrl}/api/auth/email-codes/verify`,
    expect: OK,
    headers: { cookie: `${OTP_COOKIE}=${otpSessionId}`, "content-type": "application/json" },
    body: JSON.stringify({ email, code }),
  });
  const sessionId = jsonOf(verified)?.sessionId;
  const session = setCookie(verified, SESSION_COOKIE) ?? (typeof sessionId === "string" ? sessionId : null);
  if (!OK.includes(verified.status) || !session) return fail("verify", verified);

  const silent = send("authorize_silent", {
    method: "GET",
    url: `${authorizeUrl}&prompt=none`,
    expect: [302],
    headers: { cookie: `${SESSION_COOKIE}=${session}` },
  });
  const location = silent.status === 302 ? (silent.headers.Location ?? silent.headers.location) : undefined;
  const params = location ? queryOf(location) : null;
  const authCode = params?.state === state ? params.code : undefined;
  if (!authCode) return fail("authorize_silent", silent);

  const tokens = send("token", {
    method: "POST",
    url: `${config.baseUrl}/token`,
    expect: OK,
    headers: { authorization: clientAuth, "content-type": FORM },
    body: form({ grant_type: "authorization_code", code: authCode, redirect_uri: config.redirectUri, code_verifier: verifier }),
  });
  if (tokens.status !== 200 || typeof jsonOf(tokens)?.access_token !== "string") return fail("token", tokens);

  check(null, { "otp-login: tokens issued": () => true });
  metrics.success.add(true);
  metrics.duration.add(Date.now() - start);
}
