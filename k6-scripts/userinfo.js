/**
 * userinfo: GET /userinfo with a valid bearer token; success is 200 JSON with `sub`
 * (scenarios/access-token-scenarios.ts). Reads an access-token set; a bare array of JWTs
 * (Authrim's userinfo cloud form) works too.
 *
 *   BASE_URL=https://auth.example TOKEN_URL=… PRESET=rps500 k6 run k6-scripts/userinfo.js
 */
import { check } from "k6";
import exec from "k6/execution";
import { userinfoMetrics } from "./lib/metrics.js";
import { jsonOf, send, targetConfig } from "./lib/oauth.js";
import { scriptOptions } from "./lib/profile.js";
import { seedSet, tokensOfTypes } from "./lib/seeds.js";
export { handleSummary } from "./lib/summary.js";

const config = targetConfig("userinfo", []);
const metrics = userinfoMetrics();
const seed = seedSet("access-tokens", (tokens) => tokensOfTypes(tokens, ["valid", "valid_exchanged"]).map((t) => t.access_token));
export const options = scriptOptions({ scenario: "userinfo", shownAtZero: metrics.shownAtZero, steps: ["userinfo"] });

export const setup = () => seed.load();

/** @param {string[] | null} data */
export default function (data) {
  const tokens = seed.entries(data);
  const token = /** @type {string} */ (tokens[exec.scenario.iterationInTest % tokens.length]);
  const response = send("userinfo", { method: "GET", url: `${config.baseUrl}/userinfo`, headers: { authorization: `Bearer ${token}` }, expect: [200] });
  const ok = response.status === 200 && typeof jsonOf(response)?.sub === "string";
  check(response, { "userinfo: 200 with sub": () => ok });
  metrics.success.add(ok);
  metrics.duration.add(response.timings.duration);
}
