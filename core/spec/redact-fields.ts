/**
 * The pieces of a spec that carry credentials, each hidden by its own rule: request headers
 * (an allow-list of harmless names), request bodies (credential-named JSON fields and form
 * parameters), and values of a given shape (`Bearer …`, `Basic …`, a JWT) whatever their
 * name. Each function also reports what it hid, so the spec's other strings can be searched
 * for the same values (redact.ts).
 */
import { usesSecrets } from "./template.ts";
import { REDACTED, redactUrl, SECRET_NAME, urlCredentials } from "./redact-url.ts";

/**
 * Headers whose values are shown. An allow-list, not a deny-list: a load test sends its
 * target's credentials under any name (`apikey`, `x-tenant-key`, `private-token`,
 * `ocp-apim-subscription-key`, …) and a deny-list misses the next one; the headers that
 * are safe to show are few and standard (RFC 9110's content negotiation, conditionals and
 * caching, plus tracing ids).
 */
export const SHOWN_HEADERS: ReadonlySet<string> = new Set([
  "accept",
  "accept-charset",
  "accept-encoding",
  "accept-language",
  "cache-control",
  "connection",
  "content-encoding",
  "content-language",
  "content-length",
  "content-type",
  "dnt",
  "expect",
  "host",
  "if-match",
  "if-modified-since",
  "if-none-match",
  "if-range",
  "if-unmodified-since",
  "keep-alive",
  "origin",
  "pragma",
  "priority",
  "range",
  "referer",
  "te",
  "traceparent",
  "tracestate",
  "upgrade",
  "user-agent",
  "x-correlation-id",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-request-id",
  "x-requested-with",
]);

/** An HTTP authentication scheme before its credentials (RFC 9110 §11.4: `Bearer abc`, `Basic dXNlcjpwYXNz`, AWS's SigV4). */
const AUTH_SCHEME = /^\s*(bearer|basic|digest|token|apikey|api-key|negotiate|ntlm|hmac|aws4-hmac-sha256|sharedkey|signature|dpop|mac)\s+(?=\S)/i;
/** A JSON Web Token (three base64url parts, the first a JSON object: "eyJ"). */
export const JWT = /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;

/** Whether a value is a credential by its shape alone: an auth scheme and its token, or a JWT. */
export function looksLikeCredential(value: string): boolean {
  JWT.lastIndex = 0;
  return AUTH_SCHEME.test(value) || JWT.test(value);
}

/**
 * Header values hidden unless the name is a harmless one (SHOWN_HEADERS) and the value is
 * no credential by its shape nor a `{{secrets.…}}` template; shown values have the
 * credentials of any URL they quote (a Referer) hidden. What was hidden goes to `hidden`.
 */
export function redactHeaders(headers: Readonly<Record<string, string>>, hidden: string[]): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => {
      const shown = SHOWN_HEADERS.has(name.toLowerCase()) && !looksLikeCredential(value) && !usesSecrets(value);
      if (shown) {
        hidden.push(...urlCredentials(value));
        return [name, redactUrl(value)];
      }
      hidden.push(value, value.replace(AUTH_SCHEME, ""));
      return [name, REDACTED];
    }),
  );
}

/** A form body (`a=1&b=2`) as a query: redactUrl's parameter rule then applies to it. */
const FORM = /^[^=&\s{[]+=[^&\s]*(?:&[^=&\s]+=[^&\s]*)*$/;

/**
 * The body with what it carries of credentials hidden: all of it when it uses
 * `{{secrets.…}}`; otherwise credential-named fields of a JSON body (`"password": …`) and
 * parameters of a form body (`client_secret=…`), and JWTs anywhere in it.
 */
export function redactBody(body: string | null, hidden: string[]): string | null {
  if (body === null) return null;
  if (usesSecrets(body)) {
    hidden.push(body);
    return REDACTED;
  }
  let text = body;
  const json = parseJson(body);
  if (json !== undefined) {
    const before = hidden.length;
    const walked = redactNamedFields(json, hidden);
    if (hidden.length > before) text = JSON.stringify(walked);
  } else if (FORM.test(body)) {
    hidden.push(...urlCredentials(`?${body}`));
    text = redactUrl(`?${body}`).slice(1);
  }
  for (const jwt of text.match(JWT) ?? []) hidden.push(jwt);
  return text.replace(JWT, REDACTED);
}

function parseJson(text: string): unknown {
  if (!/^\s*[{[]/.test(text)) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A JSON value with the values of credential-named fields (any depth) replaced by "[redacted]". */
function redactNamedFields(value: unknown, hidden: string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => redactNamedFields(v, hidden));
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => {
      if (SECRET_NAME.test(key) && (typeof v === "string" || typeof v === "number")) {
        hidden.push(String(v));
        return [key, REDACTED];
      }
      return [key, redactNamedFields(v, hidden)];
    }),
  );
}

/**
 * A k6 script's `__ENV` as it may be shown: every value hidden but those of the names the
 * run marks public (`script.publicEnv`), which keep their value with any URL credentials
 * hidden. An `-e` value is whatever the user typed, a token as often as a base URL, and its
 * name does not say which: only the user can.
 */
export function redactEnv(env: Readonly<Record<string, string>>, publicNames: readonly string[], hidden: string[]): Record<string, string> {
  const shown = new Set(publicNames);
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => {
      if (shown.has(name)) {
        hidden.push(...urlCredentials(value));
        return [name, redactUrl(value)];
      }
      hidden.push(value);
      return [name, REDACTED];
    }),
  );
}
