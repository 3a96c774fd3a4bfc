/**
 * introspect: POST /introspect (RFC 7662, Basic client auth) over the whole token mix;
 * `active` must be true exactly for valid and valid_exchanged tokens
 * (scenarios/access-token-scenarios.ts). A false positive is an invalid token reported
 * active, a false negative the reverse; both are counted per token type.
 *
 *   BASE_URL=… CLIENT_ID=… CLIENT_SECRET=… TOKEN_URL=… PRESET=rps300 k6 run k6-scripts/introspect.js
 */
import { check } from "k6";
import exec from "k6/execution";
import { introspectMetrics, introspectTypeSubmetrics } from "./lib/metrics.js";
import { basicAuth, FORM, jsonOf, send, targetConfig } from "./lib/oauth.js";
import { scriptOptions } from "./lib/profile.js";
import { ACTIVE_EXPECTED, activeAnswerComplete, seedSet, TOKEN_TYPES, tokensOfTypes } from "./lib/seeds.js";
export { handleSummary } from "./lib/summary.js";

const config = targetConfig("introspect", ["clientId", "clientSecret"]);
const metrics = introspectMetrics();
const seed = seedSet("access-tokens", (tokens) => tokensOfTypes(tokens, TOKEN_TYPES).map((t) => ({ access_token: t.access_token, type: t.type })));
export const options = scriptOptions({
  scenario: "introspect",
  shownAtZero: metrics.shownAtZero,
  steps: ["introspect"],
  extraThresholds: introspectTypeSubmetrics(),
});
const headers = { authorization: basicAuth(config.clientId, config.clientSecret), "content-type": FORM };

export const setup = () => seed.load();

/** @param {import("./lib/seeds.js").SeedToken[] | null} data */
export default function (data) {
  const tokens = seed.entries(data);
  const token = /** @type {import("./lib/seeds.js").SeedToken} */ (tokens[exec.scenario.iterationInTest % tokens.length]);
  const response = send("introspect", {
    method: "POST",
    url: `${config.baseUrl}/introspect`,
    headers,
    body: `token=${encodeURIComponent(token.access_token)}`,
    expect: [200],
  });
  metrics.duration.add(response.timings.duration);
  const active = response.status === 200 ? jsonOf(response)?.active : undefined;
  if (typeof active !== "boolean") {
    // No verdict (error status, timeout, unparsable body): a failure, not a wrong answer.
    check(response, { "introspect: active as expected": () => false });
    metrics.success.add(false);
    return;
  }
  const correct = active === ACTIVE_EXPECTED[token.type];
  const tags = { type: token.type };
  check(response, { "introspect: active as expected": () => correct });
  metrics.success.add(correct);
  metrics.activeCorrect.add(correct, tags);
  metrics.byType[token.type].add(correct);
  // What Authrim's suite checks of an active answer besides `active` (core/data/seed-set.ts's activeAnswerComplete).
  if (active && correct) metrics.claimsCorrect.add(activeAnswerComplete(/** @type {Record<string, unknown>} */ (jsonOf(response)), token.type), tags);
  // A false positive is an invalid token reported active; a false negative the reverse.
  if (!correct) (active ? metrics.falsePositives : metrics.falseNegatives).add(1, tags);
}
