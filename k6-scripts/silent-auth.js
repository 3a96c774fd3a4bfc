/**
 * silent-auth: GET /authorize with prompt=none and the `authrim_session` cookie of a seeded
 * login session, redirects not followed (scenarios/silent-auth.ts). Success is a 302 whose
 * Location carries a code and the state that was sent; `login_required` counts sessions the
 * provider no longer knows.
 *
 *   BASE_URL=… CLIENT_ID=… REDIRECT_URI=… TOKEN_URL=… PRESET=rps200 k6 run k6-scripts/silent-auth.js
 */
import { check } from "k6";
import exec from "k6/execution";
import { silentAuthMetrics } from "./lib/metrics.js";
import { form, queryOf, randomToken, s256, send, targetConfig } from "./lib/oauth.js";
import { scriptOptions } from "./lib/profile.js";
import { seedSet, shuffled } from "./lib/seeds.js";
export { handleSummary } from "./lib/summary.js";

const config = targetConfig("silent-auth", ["clientId", "redirectUri"]);
const metrics = silentAuthMetrics();
const seed = seedSet("sessions", (sessions) => shuffled(sessions).map((s) => s.session_id));
export const options = scriptOptions({ scenario: "silent-auth", shownAtZero: metrics.shownAtZero, steps: ["authorize"] });
const fixed = form({
  response_type: "code",
  client_id: config.clientId,
  redirect_uri: config.redirectUri,
  scope: "openid",
  prompt: "none",
  code_challenge_method: "S256",
});

export const setup = () => seed.load();

/** @param {string[] | null} data */
export default function (data) {
  const sessions = seed.entries(data);
  const session = sessions[exec.scenario.iterationInTest % sessions.length];
  const state = randomToken(12);
  const url = `${config.baseUrl}/authorize?${fixed}&state=${state}&nonce=${randomToken(12)}&code_challenge=${s256(randomToken())}`;
  const response = send("authorize", { method: "GET", url, headers: { cookie: `authrim_session=${session}` }, expect: [302] });
  metrics.duration.add(response.timings.duration);
  const location = response.status === 302 ? (response.headers.Location ?? response.headers.location) : undefined;
  const params = location ? queryOf(location) : null;
  const ok = !!params?.code && params.state === state;
  if (params?.error === "login_required") metrics.loginRequired.add(1);
  if (params?.error === "consent_required") metrics.consentRequired.add(1);
  check(response, { "silent-auth: 302 with code and state": () => ok });
  metrics.success.add(ok);
}
