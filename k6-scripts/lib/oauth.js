/**
 * What the scenario scripts share besides load and seeds: the target and client credentials
 * from the environment, OAuth helpers (Basic auth, PKCE, random state), reading a redirect's
 * query, and one way to send a step's request (tagged `step:<name>`, its own expected
 * statuses for http_req_failed, edgeload's timeout), as scenarios/flow.ts does for edge runs.
 */
import crypto from "k6/crypto";
import encoding from "k6/encoding";
import http from "k6/http";
import { TIMEOUT } from "./profile.js";

export const FORM = "application/x-www-form-urlencoded";

/** The credentials a scenario may need, by the environment variable that carries each. */
const CREDENTIALS = /** @type {const} */ ({ clientId: "CLIENT_ID", clientSecret: "CLIENT_SECRET", adminSecret: "ADMIN_SECRET", redirectUri: "REDIRECT_URI" });
/** @typedef {keyof typeof CREDENTIALS} Credential */

/**
 * The target and the credentials a scenario needs, checked in the init context so a
 * missing one fails the run before any load, naming every variable that is missing.
 * @template {Credential} C
 * @param {string} scenario
 * @param {readonly C[]} needs
 * @returns {{ baseUrl: string, scope: string, audience: string | undefined } & Record<C, string>}
 */
export function targetConfig(scenario, needs) {
  const missing = [];
  const baseUrl = (__ENV.BASE_URL ?? "").replace(/\/+$/, "");
  if (!baseUrl) missing.push("BASE_URL");
  /** @type {Record<string, string>} */
  const values = {};
  for (const need of needs) {
    const value = __ENV[CREDENTIALS[need]];
    if (value) values[need] = value;
    else missing.push(CREDENTIALS[need]);
  }
  if (missing.length) throw new Error(`the ${scenario} script needs ${missing.join(", ")} in the environment`);
  return /** @type {never} */ ({ baseUrl, scope: __ENV.SCOPE || "openid profile", audience: __ENV.AUDIENCE || undefined, ...values });
}

/**
 * HTTP Basic client authentication, as Authrim's suite sends it.
 * @param {string} id
 * @param {string} secret
 */
export const basicAuth = (id, secret) => `Basic ${encoding.b64encode(`${id}:${secret}`)}`;

/**
 * Random URL-safe text for state, nonce and PKCE verifiers.
 * @param {number} [bytes]
 */
export const randomToken = (bytes = 32) => encoding.b64encode(crypto.randomBytes(bytes), "rawurl");

/**
 * The S256 PKCE challenge of a verifier (RFC 7636 §4.2).
 * @param {string} verifier
 */
export const s256 = (verifier) => crypto.sha256(verifier, "base64rawurl");

/**
 * An application/x-www-form-urlencoded body.
 * @param {Record<string, string>} fields
 */
export const form = (fields) =>
  Object.entries(fields)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join("&");

/**
 * The query parameters of a URL (k6 has no URL class), e.g. a redirect's Location.
 * @param {string} url
 * @returns {Record<string, string>}
 */
export function queryOf(url) {
  const query = url.split("#")[0]?.split("?")[1] ?? "";
  /** @type {Record<string, string>} */
  const out = {};
  for (const pair of query.split("&").filter(Boolean)) {
    const i = pair.indexOf("=");
    const decode = (/** @type {string} */ s) => decodeURIComponent(s.replace(/\+/g, " "));
    out[decode(i < 0 ? pair : pair.slice(0, i))] = i < 0 ? "" : decode(pair.slice(i + 1));
  }
  return out;
}

/**
 * The JSON body of a response, or null when it is not JSON.
 * @param {import("k6/http").RefinedResponse<any>} response
 * @returns {Record<string, unknown> | null}
 */
export function jsonOf(response) {
  try {
    const body = JSON.parse(String(response.body));
    return typeof body === "object" && body !== null ? body : null;
  } catch {
    return null;
  }
}

/**
 * Sends one step's request: tagged with the step's name, with the statuses that count as
 * success for http_req_failed (k6's 200–399 when not given), redirects not followed unless
 * asked (the flows read Location themselves) and edgeload's per-request timeout. Cookies never carry over from another iteration: a
 * request uses the flow's own `jar`, or a fresh one (an edge shard's fetch keeps none).
 * @param {string} step
 * @param {{ method: string, url: string, body?: string | null, headers?: Record<string, string>, expect?: number[] | null, jar?: import("k6/http").CookieJar, followRedirects?: boolean }} request
 */
export function send(step, request) {
  return http.request(request.method, request.url, request.body ?? null, {
    headers: request.headers ?? {},
    tags: { step },
    ...(request.followRedirects ? {} : { redirects: 0 }),
    timeout: TIMEOUT,
    // Without `expect`, k6's default: 200–399 is success.
    ...(request.expect ? { responseCallback: http.expectedStatuses(...request.expect) } : {}),
    jar: request.jar ?? new http.CookieJar(),
  });
}
