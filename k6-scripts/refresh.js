/**
 * refresh: POST /token grant_type=refresh_token; every VU keeps rotating its own refresh
 * token families (scenarios/refresh.ts does the same per shard). Family i belongs to VU
 * (i mod maxVUs) + 1, so no two VUs ever present the same token, and a VU runs one
 * iteration at a time, so a family is never presented while its rotation is in flight
 * (that would be a reuse, which revokes the family). A VU rotates its families in turn,
 * longest idle first; a family the provider refuses is retired (`families_lost`). A VU
 * without a family counts the iteration in `families_busy` and sends nothing: seed at least
 * as many families as MAX_VUS (default: one second of peak rate, at least 50).
 *
 *   BASE_URL=… TOKEN_URL=… [CLIENT_ID=… CLIENT_SECRET=…] PRESET=rps100 k6 run k6-scripts/refresh.js
 * (client credentials default to each entry's client_id and client_secret)
 */
import { check } from "k6";
import exec from "k6/execution";
import { refreshMetrics } from "./lib/metrics.js";
import { basicAuth, FORM, jsonOf, send, targetConfig } from "./lib/oauth.js";
import { loadProfile, maxVUs, scriptOptions } from "./lib/profile.js";
import { seedSet } from "./lib/seeds.js";
export { handleSummary } from "./lib/summary.js";

/** @typedef {{ token: string, auth: string }} Family */

const config = targetConfig("refresh", []);
const metrics = refreshMetrics();
export const options = scriptOptions({ scenario: "refresh", shownAtZero: metrics.shownAtZero, steps: ["refresh"] });
const VUS = maxVUs(loadProfile("refresh").peakPerS);

const seed = seedSet("refresh-tokens", (entries) =>
  entries.map((e, i) => {
    const id = e.client_id ?? __ENV.CLIENT_ID;
    const secret = e.client_secret ?? __ENV.CLIENT_SECRET;
    if (!id || !secret)
      throw new Error(`refresh family ${i} has no client_secret: put client_id/client_secret in the seed entries or set CLIENT_ID and CLIENT_SECRET`);
    return { token: e.token, auth: basicAuth(id, secret) };
  }),
);

export const setup = () => seed.load();

/** This VU's families, longest idle first (taken from the seed at its first iteration). */
/** @type {Family[] | null} */
let free = null;

/** @param {Family[] | null} data */
export default function (data) {
  free ??= seed
    .entries(data)
    .filter((_, i) => i % VUS === exec.vu.idInTest - 1)
    .map((f) => ({ ...f }));
  const family = free.shift();
  if (!family) {
    metrics.familiesBusy.add(1);
    return;
  }
  const response = send("refresh", {
    method: "POST",
    url: `${config.baseUrl}/token`,
    headers: { authorization: family.auth, "content-type": FORM },
    body: `grant_type=refresh_token&refresh_token=${encodeURIComponent(family.token)}`,
    expect: [200],
  });
  metrics.duration.add(response.timings.duration);
  const next = response.status === 200 ? jsonOf(response)?.refresh_token : undefined;
  const rotated = typeof next === "string" && next.length > 0 && next !== family.token;
  check(response, { "refresh: rotated": () => rotated });
  metrics.rotationSuccess.add(rotated);
  metrics.success.add(rotated);
  if (rotated) {
    family.token = next;
    free.push(family);
  } else if (response.status === 400 || response.status === 401) {
    // Refused (reused, revoked, expired): this family cannot continue.
    metrics.familiesLost.add(1);
  } else {
    // No verdict (timeout, 5xx): the token may or may not have rotated; keep trying it.
    free.push(family);
  }
}
