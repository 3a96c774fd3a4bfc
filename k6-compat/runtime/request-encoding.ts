/**
 * What a k6 request sends that Go's net/http decides: header names in canonical form, an
 * object body's form encoding, and a URL's credentials as Basic authorization.
 */
import { b64encode } from "./encoding.ts";

/** RFC 9110's token characters: Go leaves a name with any other character as it is. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * A header name as Go's http.Header.Set stores and sends it (textproto.CanonicalMIMEHeaderKey):
 * the first letter and each letter after a hyphen upper-cased, the others lower-cased.
 *
 * @example canonicalHeaderKey("x-request-ID") // "X-Request-Id"
 */
export function canonicalHeaderKey(name: string): string {
  if (!TOKEN.test(name)) return name;
  let out = "";
  let upper = true;
  for (const c of name) {
    out += upper ? c.toUpperCase() : c.toLowerCase();
    upper = c === "-";
  }
  return out;
}

/**
 * An object body as k6 sends it, a form as Go's url.Values encodes it: keys sorted, an array
 * as the key repeated for each of its values (`topping=onion&topping=bacon`).
 */
export function formBody(body: Record<string, unknown>): string {
  const form = new URLSearchParams();
  for (const key of Object.keys(body).sort()) {
    const value = body[key];
    for (const v of Array.isArray(value) ? value : [value]) form.append(key, String(v));
  }
  return form.toString();
}

/**
 * A URL's credentials (`http://user:pass@host/`) as k6 (Go's net/http) sends them: HTTP Basic
 * authorization, unless the request sets its own; the URL sent without them (a Worker's
 * fetch refuses a URL that carries them).
 */
export function withoutCredentials(href: string, headers: Record<string, string>): string {
  let parsed: URL;
  try {
    parsed = new URL(href);
  } catch {
    return href; // the shard names an invalid URL as such
  }
  if (!parsed.username && !parsed.password) return href;
  const credentials = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
  if (!Object.keys(headers).some((h) => h.toLowerCase() === "authorization")) headers.Authorization = `Basic ${b64encode(credentials)}`;
  parsed.username = "";
  parsed.password = "";
  return parsed.href;
}
