/**
 * browser-login: the authorization-code flow through the provider's own pages, in a real
 * Chromium per VU (k6/browser), then the token exchange as a protocol request. The built-in
 * scenario `edgeload run --scenario browser-login` runs this script (scenarios/
 * script-scenarios.ts); k6 with its browser module runs it too. Each iteration, in a fresh
 * browser context:
 *
 *   goto /authorize (PKCE S256, a random state) → the sign-in form: fill email and password,
 *   submit → the consent screen: approve → the client's redirect page (the target's
 *   /app/callback) shows the code and state → POST /token (code + verifier, Basic auth)
 *
 * and k6's web vitals of each page it lands on (browser_web_vital_ttfb/fcp/lcp, tagged with
 * the page's `url`): the local target's pages take their one-time challenge out of their
 * address as they load, so each page has one URL and the thresholds below can name it.
 * `browser_login_duration` is the whole flow of a successful iteration (browser start
 * excluded), `browser_login_success` the share of iterations that got tokens.
 *
 * setup() makes what the flow needs through the admin API, as Authrim's seeders do: a user
 * with a password and a client that asks for consent, redirecting to BASE_URL/app/callback.
 *
 *   BASE_URL=… ADMIN_SECRET=… [VUS=1] [DURATION=30s | ITERATIONS=N] [SIGN_IN_MS=0] k6 run k6-scripts/browser-login.js
 *
 * SIGN_IN_MS holds the sign-in page that long (the target's `ms` knob, passed on by its
 * /authorize): a slow sign-in page, which fails the LCP thresholds (exit 99).
 */
import { check } from "k6";
import { browser } from "k6/browser";
import http from "k6/http";
import { WEB_VITAL_BOUNDS_MS } from "../core/metrics/web-vitals.ts";
import { flowMetrics } from "./lib/metrics.js";
import { basicAuth, FORM, form, jsonOf, randomToken, s256, targetConfig } from "./lib/oauth.js";

const config = targetConfig("browser-login", ["adminSecret"]);
const metrics = flowMetrics("browser-login");
const SCOPE = "openid profile email";

/** The pages the flow lands on, by the URL their vitals are tagged with. */
const PAGES = {
  signIn: `${config.baseUrl}/login`,
  consent: `${config.baseUrl}/consent`,
  callback: `${config.baseUrl}/app/callback`,
};

/**
 * A whole number from the environment, or its default; a clear error otherwise.
 * @param {string} name
 * @param {number} fallback
 */
function countOf(name, fallback) {
  const raw = __ENV[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number of at least 1, got "${raw}"`);
  return n;
}

const holdMs = __ENV.SIGN_IN_MS ? Number(__ENV.SIGN_IN_MS) : 0;
if (!Number.isFinite(holdMs) || holdMs < 0) throw new Error(`SIGN_IN_MS must be milliseconds, got "${__ENV.SIGN_IN_MS}"`);

/**
 * The web-vitals thresholds: the LCP of every page at p75 (as Core Web Vitals are judged),
 * and each page's TTFB, FCP and LCP within web.dev's "good" bounds at p75.
 * @returns {Record<string, string[]>}
 */
function vitalThresholds() {
  /** @type {Record<string, string[]>} */
  const out = { browser_web_vital_lcp: [`p(75)<${WEB_VITAL_BOUNDS_MS.lcp[0]}`] };
  for (const url of Object.values(PAGES)) {
    for (const vital of /** @type {const} */ (["ttfb", "fcp", "lcp"]))
      out[`browser_web_vital_${vital}{url:${url}}`] = [`p(75)<${WEB_VITAL_BOUNDS_MS[vital][0]}`];
  }
  return out;
}

const vus = countOf("VUS", 1);
const iterations = __ENV.ITERATIONS ? countOf("ITERATIONS", 1) : null;

export const options = {
  scenarios: {
    browser_login: {
      ...(iterations === null
        ? { executor: "constant-vus", vus, duration: __ENV.DURATION || "30s" }
        : { executor: "shared-iterations", vus, iterations, maxDuration: __ENV.DURATION || "10m" }),
      options: { browser: { type: "chromium" } },
    },
  },
  thresholds: { ...vitalThresholds(), browser_login_success: ["rate>0.99"] },
};

/**
 * The user and client of this run, made through the admin API.
 * @returns {{ email: string, password: string, clientId: string, clientSecret: string }}
 */
export function setup() {
  const params = { headers: { Authorization: `Bearer ${config.adminSecret}`, "Content-Type": "application/json" } };
  /**
   * @param {string} path
   * @param {Record<string, unknown>} body
   */
  const create = (path, body) => {
    const response = http.post(`${config.baseUrl}${path}`, JSON.stringify(body), params);
    if (response.status !== 201) {
      const hint = response.status === 401 ? ": is ADMIN_SECRET the target's admin API secret?" : "";
      throw new Error(`browser-login setup: POST ${path} answered ${response.status} ${String(response.body).slice(0, 200)}${hint}`);
    }
    return jsonOf(response) ?? {};
  };
  const email = `browser-login-${randomToken(9)}@test.authrim.internal`;
  const password = randomToken(18);
  create("/api/admin/users", { email, name: "Browser login", email_verified: true, password });
  const made = /** @type {{ client?: { client_id?: string, client_secret?: string } }} */ (
    create("/api/admin/clients", {
      client_name: "edgeload browser login",
      redirect_uris: [PAGES.callback],
      grant_types: ["authorization_code"],
      scope: SCOPE,
      is_trusted: false,
      skip_consent: false,
    })
  );
  const clientId = made.client?.client_id;
  const clientSecret = made.client?.client_secret;
  if (!clientId || !clientSecret) throw new Error("browser-login setup: the client was made but its answer has no client.client_id and client_secret");
  return { email, password, clientId, clientSecret };
}

/**
 * The /authorize URL of one login.
 * @param {string} clientId
 * @param {string} state
 * @param {string} challenge
 */
const authorizeUrl = (clientId, state, challenge) =>
  `${config.baseUrl}/authorize?${form({
    response_type: "code",
    client_id: clientId,
    redirect_uri: PAGES.callback,
    scope: SCOPE,
    state,
    nonce: randomToken(16),
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...(holdMs > 0 ? { ms: String(holdMs) } : {}),
  })}`;

/** @param {{ email: string, password: string, clientId: string, clientSecret: string }} data */
export default async function (data) {
  const startedMs = Date.now();
  const state = randomToken(16);
  const verifier = randomToken();
  const page = await browser.newPage();
  let signedIn = false;
  try {
    const first = await page.goto(authorizeUrl(data.clientId, state, s256(verifier)));
    const onSignIn = check({ status: first?.status(), url: page.url() }, { "the sign-in form": (r) => r.status === 200 && r.url === PAGES.signIn });
    if (!onSignIn) return;
    await page.locator('input[name="username"]').fill(data.email);
    await page.locator('input[name="password"]').fill(data.password);
    // Submitting navigates: wait for the page it leads to (its vitals are read then).
    await Promise.all([page.waitForNavigation(), page.locator('form[action="/login"] button[type="submit"]').click()]);
    if (!check(page.url(), { "signed in: the consent screen": (url) => url === PAGES.consent })) return;
    await Promise.all([page.waitForNavigation(), page.locator("button.approve").click()]);
    if (!check(page.url(), { "consented: back at the client": (url) => url === PAGES.callback })) return;
    const code = (await page.locator("#code").textContent()) ?? "";
    const returned = await page.locator("#state").textContent();
    if (!check({ code, returned }, { "a code and the same state": (r) => r.code !== "" && r.returned === state })) return;
    const tokens = http.post(
      `${config.baseUrl}/token`,
      form({ grant_type: "authorization_code", code, redirect_uri: PAGES.callback, code_verifier: verifier }),
      { headers: { Authorization: basicAuth(data.clientId, data.clientSecret), "Content-Type": FORM } },
    );
    signedIn = check(tokens, { "the code exchanged for tokens": (r) => r.status === 200 && typeof jsonOf(r)?.access_token === "string" });
  } finally {
    await page.close();
    metrics.success.add(signedIn);
    if (signedIn) metrics.duration.add(Date.now() - startedMs);
  }
}
