/**
 * http: one request at an open-model arrival rate, the k6 side of a custom-steps edge run
 * (`edgeload run --target URL --rate N --duration 30s`) and of `edgeload crosscheck --run-k6`.
 *
 *   BASE_URL=http://127.0.0.1:9090 PATH=/delay?ms=20 RATE=200 DURATION=30s k6 run k6-scripts/http.js
 *   (or STAGES='[{"target":200,"duration":"10s"},…]' [START_RATE=0] instead of RATE/DURATION)
 *
 * Optional: METHOD (GET), HEADERS (a JSON object), BODY, EXPECT (statuses that count as
 * success, e.g. "200,204"; default k6's 200–399), STEP (the step tag; "default" as an
 * edge run's single unnamed step), MAX_VUS, TIMEOUT (10s). `PATH` is k6's own variable
 * here, not the shell's: pass it with `-e PATH=/…` or in the environment of k6 alone.
 */
import { send } from "./lib/oauth.js";
import { scriptOptions } from "./lib/profile.js";
export { handleSummary } from "./lib/summary.js";

const STEP = __ENV.STEP || "default";
const baseUrl = (__ENV.BASE_URL ?? "").replace(/\/+$/, "");
if (!baseUrl) throw new Error("http.js needs BASE_URL (and PATH, RATE, DURATION)");
const path = __ENV.PATH ?? "/";
if (!path.startsWith("/")) throw new Error(`PATH "${path}" must start with / (the shell's PATH leaked in? pass it with -e PATH=/…)`);
const url = baseUrl + path;
const method = (__ENV.METHOD || "GET").toUpperCase();
/** @type {Record<string, string>} */
const headers = __ENV.HEADERS ? JSON.parse(__ENV.HEADERS) : {};
const body = __ENV.BODY ?? null;
const expect = __ENV.EXPECT ? __ENV.EXPECT.split(",").map(Number) : null;

export const options = scriptOptions({ scenario: null, steps: [STEP], discardResponseBodies: true });

// As an edge custom step: redirects followed, no checks unless the spec has some.
export default function () {
  send(STEP, { method, url, headers, body, expect, followRedirects: true });
}
