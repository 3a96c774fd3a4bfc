/**
 * token-exchange: POST /token with RFC 8693 token exchange for valid, expired and revoked
 * subject tokens (scenarios/access-token-scenarios.ts). Valid subjects must be exchanged
 * (200 with an access token); expired and revoked ones refused with 400 invalid_grant —
 * that 400 is the expected answer, so it does not count in http_req_failed.
 * `invalid_token_accepted` and `revoked_token_accepted` must stay 0.
 *
 *   BASE_URL=… CLIENT_ID=… CLIENT_SECRET=… TOKEN_URL=… [SCOPE="openid profile"] [AUDIENCE=…] k6 run k6-scripts/token-exchange.js
 */
import { check } from "k6";
import exec from "k6/execution";
import { tokenExchangeMetrics } from "./lib/metrics.js";
import { basicAuth, FORM, form, jsonOf, send, targetConfig } from "./lib/oauth.js";
import { scriptOptions } from "./lib/profile.js";
import { seedSet, tokensOfTypes } from "./lib/seeds.js";
export { handleSummary } from "./lib/summary.js";

const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";
const config = targetConfig("token-exchange", ["clientId", "clientSecret"]);
const metrics = tokenExchangeMetrics();
const seed = seedSet("access-tokens", (tokens) =>
  tokensOfTypes(tokens, ["valid", "expired", "revoked"]).map((t) => ({ access_token: t.access_token, type: t.type })),
);
export const options = scriptOptions({ scenario: "token-exchange", shownAtZero: metrics.shownAtZero, steps: ["token_exchange"] });
const headers = { authorization: basicAuth(config.clientId, config.clientSecret), "content-type": FORM };
const fixed = form({
  grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
  subject_token_type: ACCESS_TOKEN_TYPE,
  requested_token_type: ACCESS_TOKEN_TYPE,
  scope: config.scope,
  ...(config.audience ? { audience: config.audience } : {}),
});

export const setup = () => seed.load();

/** @param {import("./lib/seeds.js").SeedToken[] | null} data */
export default function (data) {
  const tokens = seed.entries(data);
  const token = /** @type {import("./lib/seeds.js").SeedToken} */ (tokens[exec.scenario.iterationInTest % tokens.length]);
  const valid = token.type === "valid";
  const response = send("token_exchange", {
    method: "POST",
    url: `${config.baseUrl}/token`,
    headers,
    body: `${fixed}&subject_token=${encodeURIComponent(token.access_token)}`,
    expect: valid ? [200] : [400],
  });
  metrics.duration.add(response.timings.duration);
  const body = jsonOf(response);
  const accepted = response.status === 200 && typeof body?.access_token === "string";
  const refused = response.status === 400 && body?.error === "invalid_grant";
  const correct = valid ? accepted : refused;
  check(response, { "token-exchange: valid exchanged, invalid refused": () => correct });
  metrics.success.add(correct);
  // Refused by the provider's judgement (4xx but 429), not for want of capacity (scenarios/access-token-scenarios.ts).
  if (valid && response.status >= 400 && response.status < 500 && response.status !== 429) metrics.validTokenRejected.add(1);
  if (!valid && accepted) metrics.invalidTokenAccepted.add(1);
  if (token.type === "revoked") {
    if (accepted) metrics.revokedTokenAccepted.add(1);
    if (refused) metrics.revokedReasonReported.add(/revoked/i.test(String(body?.error_description ?? "")));
  }
}
