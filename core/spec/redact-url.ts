/**
 * Credentials in URLs, found and hidden: the userinfo of `https://user:pass@host` and the
 * values of credential-looking parameters (`?api_key=…`, `&token=…`, `#access_token=…`,
 * `sig=…`). A URL is printed, stored and shown in many places (the run's target, its steps'
 * paths, push outputs, error messages); each goes through `redactUrl` or `redactUrlsIn`.
 *
 * The URL is edited as text, not through `URL`, so that what is not a credential is left
 * byte for byte as given (URL would re-encode the query and add a trailing slash) and so
 * that a relative path (`/login?token=…`) and a template (`{{vars.base}}`) work alike.
 */

export const REDACTED = "[redacted]";

/**
 * Names (of headers, parameters, JSON fields, variables) that say their value is a
 * credential. Deliberately broad: hiding a harmless value costs a line of display, showing
 * a key costs the key.
 */
export const SECRET_NAME =
  /auth|token|key|secret|passw|passphrase|pwd|^pass$|session|sessid|cookie|signature|^sig$|jwt|bearer|credential|private|dsn|^otp$|^code$/i;

/** `scheme://userinfo@`: the userinfo is whatever sits before the first @ of the authority (RFC 3986 §3.2.1). */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#@\s]*)@/i;
/** One `name=value` of a query or fragment, with the separator before it. */
const PARAM = /([?&#;])([^=&#;\s]+)=([^&#;\s]*)/g;
/** Absolute URLs inside free text (an error message, a log line). */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;

const decoded = (text: string) => {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return text;
  }
};

/** Whether a parameter of this name carries a credential (`api_key`, `X-Amz-Signature`, `sig`, `access_token`). */
export const isSecretParam = (name: string) => SECRET_NAME.test(decoded(name));

/**
 * The URL (absolute or a path) with its userinfo and its credential parameters' values
 * replaced by "[redacted]"; anything else as given.
 *
 * @example redactUrl("https://u:p@api.example/x?api_key=k&page=2")
 *   // → "https://[redacted]@api.example/x?api_key=[redacted]&page=2"
 */
export function redactUrl(url: string): string {
  const withoutUser = url.replace(USERINFO, (whole, scheme: string, userinfo: string) => (userinfo === "" ? whole : `${scheme}${REDACTED}@`));
  const start = withoutUser.search(/[?#]/);
  if (start < 0) return withoutUser;
  const tail = withoutUser
    .slice(start)
    .replace(PARAM, (whole, sep: string, name: string, value: string) => (value !== "" && isSecretParam(name) ? `${sep}${name}=${REDACTED}` : whole));
  return withoutUser.slice(0, start) + tail;
}

/** Every absolute URL in `text` through `redactUrl`: for error messages and log lines that quote a request's URL. */
export function redactUrlsIn(text: string): string {
  return text.includes("://") ? text.replace(URL_IN_TEXT, redactUrl) : text;
}

/**
 * The credentials `redactUrl` hides, as given and percent-decoded: the userinfo's user and
 * password, each credential parameter's value. Searched for elsewhere by value.
 */
export function urlCredentials(url: string): string[] {
  const found: string[] = [];
  const user = USERINFO.exec(url)?.[2];
  if (user) found.push(user, ...user.split(":"));
  const start = url.search(/[?#]/);
  if (start >= 0) {
    for (const [, , name, value] of url.slice(start).matchAll(PARAM)) if (value && isSecretParam(name!)) found.push(value);
  }
  return [...new Set(found.flatMap((v) => [v, decoded(v)]))];
}
