/**
 * k6's cookie jar, simplified to what load scripts rely on: cookies a response sets are
 * kept per host and path and sent back with later requests of the VU (its default jar is
 * emptied at each iteration, as k6's is), a jar passed in `params.jar` is used instead,
 * and `response.cookies` lists what a response set. Domain attributes widen a cookie to
 * the domain's subdomains; expiry is by Max-Age/Expires at the time of reading.
 */
export interface ResponseCookie {
  readonly name: string;
  readonly value: string;
  readonly domain: string;
  readonly path: string;
  readonly http_only: boolean;
  readonly secure: boolean;
  readonly max_age: number;
  readonly expires: number;
}

interface Stored {
  readonly value: string;
  readonly domain: string;
  readonly hostOnly: boolean;
  readonly path: string;
  readonly expiresMs: number;
}

/** A request's own cookies (k6's `params.cookies`): sent with it, never kept in the jar. */
export interface RequestCookies {
  readonly pairs: ReadonlyArray<readonly [string, string]>;
  /** Names whose jar cookie is not sent (`{value, replace: true}`). */
  readonly replaced: ReadonlySet<string>;
}

const NO_REQUEST_COOKIES: RequestCookies = { pairs: [], replaced: new Set() };

/** Reads k6's `params.cookies`: `{name: value}` or `{name: {value, replace}}`. */
export function requestCookies(param: unknown): RequestCookies {
  if (param === undefined || param === null) return NO_REQUEST_COOKIES;
  if (typeof param !== "object" || Array.isArray(param))
    throw new TypeError(`params.cookies: an object of cookies, {name: value} or {name: {value, replace}}, not ${JSON.stringify(param)}`);
  const pairs: Array<readonly [string, string]> = [];
  const replaced = new Set<string>();
  for (const [name, cookie] of Object.entries(param)) {
    if (cookie !== null && typeof cookie === "object") {
      const { value = "", replace = false } = cookie as { value?: unknown; replace?: unknown };
      pairs.push([name, String(value)]);
      if (replace) replaced.add(name);
    } else {
      pairs.push([name, String(cookie)]);
    }
  }
  return { pairs, replaced };
}

export class CookieJar {
  readonly #cookies = new Map<string, Stored>();

  /** Cookies that would be sent to `url`, as k6 gives them: name → [values]. */
  cookiesForURL(url: string): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const [name, value] of this.#matching(new URL(url))) (out[name] ??= []).push(value);
    return out;
  }

  set(url: string, name: string, value: string, options: { domain?: string; path?: string; max_age?: number } = {}): void {
    const u = new URL(url);
    const domain = (options.domain ?? u.hostname).replace(/^\./, "").toLowerCase();
    this.#store(name, {
      value: String(value),
      domain,
      hostOnly: options.domain === undefined,
      path: options.path ?? "/",
      expiresMs: options.max_age ? Date.now() + options.max_age * 1000 : Infinity,
    });
  }

  clear(url: string): void {
    const host = new URL(url).hostname.toLowerCase();
    for (const [key, c] of this.#cookies) if (c.domain === host) this.#cookies.delete(key);
  }

  delete(url: string, name: string): void {
    const host = new URL(url).hostname.toLowerCase();
    for (const [key, c] of this.#cookies) if (c.domain === host && key.startsWith(`${name}\0`)) this.#cookies.delete(key);
  }

  /**
   * The Cookie header of a request to `url` as k6 builds it (SetRequestCookies): a Cookie
   * header the script gave, then its `params.cookies`, then the jar's cookies for the URL
   * less those params.cookies replaces; null when there are none. k6 v1.8.1 sends
   * `h=1; a=1; jar=j1` for `{headers: {Cookie: "h=1"}, cookies: {a: "1"}}` (vu-modules.test.ts).
   */
  header(url: string, own: RequestCookies = NO_REQUEST_COOKIES, given?: string): string | null {
    const jar = this.#matching(new URL(url)).filter(([n]) => !own.replaced.has(n));
    const pairs = [...(given ? [given] : []), ...[...own.pairs, ...jar].map(([n, v]) => `${n}=${v}`)];
    return pairs.length ? pairs.join("; ") : null;
  }

  /** Keeps what a response to `url` set; returns the cookies as `response.cookies` shows them. */
  receive(url: string, setCookies: readonly string[]): Record<string, ResponseCookie[]> {
    const u = new URL(url);
    const out: Record<string, ResponseCookie[]> = {};
    for (const line of setCookies) {
      const cookie = parseSetCookie(line, u);
      if (!cookie) continue;
      (out[cookie.name] ??= []).push(cookie);
      const expiresMs = cookie.max_age !== 0 ? Date.now() + cookie.max_age * 1000 : cookie.expires || Infinity;
      const removed = cookie.max_age < 0 || (cookie.expires !== 0 && cookie.expires <= Date.now());
      const key = `${cookie.name}\0${cookie.domain}\0${cookie.path}`;
      if (removed) this.#cookies.delete(key);
      else this.#store(cookie.name, { value: cookie.value, domain: cookie.domain, hostOnly: !/;\s*domain=/i.test(line), path: cookie.path, expiresMs });
    }
    return out;
  }

  #store(name: string, c: Stored): void {
    this.#cookies.set(`${name}\0${c.domain}\0${c.path}`, c);
  }

  #matching(u: URL): Array<[string, string]> {
    const host = u.hostname.toLowerCase();
    const now = Date.now();
    const out: Array<[string, string]> = [];
    for (const [key, c] of this.#cookies) {
      if (c.expiresMs <= now) continue;
      const domainOk = c.hostOnly ? host === c.domain : host === c.domain || host.endsWith(`.${c.domain}`);
      const pathOk = u.pathname === c.path || u.pathname.startsWith(c.path.endsWith("/") ? c.path : `${c.path}/`);
      if (domainOk && pathOk) out.push([key.slice(0, key.indexOf("\0")), c.value]);
    }
    return out;
  }
}

/** RFC 6265 §5.2, the attributes k6 reports. */
function parseSetCookie(line: string, u: URL): ResponseCookie | null {
  const [pair, ...attributes] = line.split(";");
  const eq = pair?.indexOf("=") ?? -1;
  if (!pair || eq <= 0) return null;
  const cookie = {
    name: pair.slice(0, eq).trim(),
    value: pair.slice(eq + 1).trim(),
    domain: u.hostname.toLowerCase(),
    path: "/",
    http_only: false,
    secure: false,
    max_age: 0,
    expires: 0,
  };
  for (const attribute of attributes) {
    const [rawKey, ...rest] = attribute.split("=");
    const key = rawKey!.trim().toLowerCase();
    const value = rest.join("=").trim();
    if (key === "domain" && value) cookie.domain = value.replace(/^\./, "").toLowerCase();
    else if (key === "path" && value.startsWith("/")) cookie.path = value;
    else if (key === "httponly") cookie.http_only = true;
    else if (key === "secure") cookie.secure = true;
    else if (key === "max-age" && /^-?\d+$/.test(value)) cookie.max_age = Number(value) <= 0 ? -1 : Number(value);
    else if (key === "expires" && !Number.isNaN(Date.parse(value))) cookie.expires = Date.parse(value);
  }
  return cookie;
}
