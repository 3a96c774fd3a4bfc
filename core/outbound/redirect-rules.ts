/**
 * What a followed redirect sends next, as k6 sends it: k6's HTTP client is Go's, so these are
 * Go's rules (net/http `redirectBehavior`), with credentials held back across origins as the
 * Fetch standard does. Pure: the outbound module (workers/outbound/outbound-fetch.ts) applies
 * them hop by hop, after asking its policy whether the next URL may be reached at all.
 *
 * - Only 301, 302, 303, 307 and 308 are followed: a `300 Multiple Choices` with a Location is
 *   an answer, as in Go.
 * - 301, 302 and 303 continue without a body, as a GET unless the request was a GET or HEAD
 *   (Go restricts every other method to GET, for compatibility with RFC 2616 clients);
 *   307 and 308 repeat the method and the body.
 * - `Authorization`, `Cookie` and `Proxy-Authorization` go only to the origin they were set
 *   for: a hop to another scheme, host or port does not carry them (Fetch drops
 *   Authorization on a cross-origin redirect; Go drops Authorization and Cookie for another
 *   domain). A redirect must not hand a credential to a host the user never named.
 */

/** The statuses Go's client (and so k6) follows. */
export const FOLLOWED_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** Headers that carry a credential for one origin only. */
export const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"] as const;

/** The request a hop sends: what may change from one hop to the next. */
export interface HopRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: HeadersInit | undefined;
  readonly body: BodyInit | null | undefined;
}

/** The Location a response redirects to, resolved against the request's URL; null when it is not a redirect to follow. */
export function redirectTarget(status: number, location: string | null, fromUrl: string): string | null {
  if (!FOLLOWED_STATUSES.has(status) || !location) return null;
  return new URL(location, fromUrl).href;
}

/** The request sent to `toUrl` after `status` answered `from`. */
export function nextHop(from: HopRequest, status: number, toUrl: string): HopRequest {
  const keepsMethod = status === 307 || status === 308;
  const verb = from.method.toUpperCase();
  const method = keepsMethod || verb === "GET" || verb === "HEAD" ? from.method : "GET";
  return {
    url: toUrl,
    method,
    headers: crossesOrigin(from.url, toUrl) ? withoutCredentials(from.headers) : from.headers,
    body: keepsMethod ? from.body : null,
  };
}

export function crossesOrigin(fromUrl: string, toUrl: string): boolean {
  return new URL(fromUrl).origin !== new URL(toUrl).origin;
}

/** `headers` less the credential headers; the same object when it holds none. */
export function withoutCredentials(headers: HeadersInit | undefined): HeadersInit | undefined {
  if (headers === undefined) return undefined;
  const copy = new Headers(headers);
  if (!CREDENTIAL_HEADERS.some((name) => copy.has(name))) return headers;
  for (const name of CREDENTIAL_HEADERS) copy.delete(name);
  return copy;
}
