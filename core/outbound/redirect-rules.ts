/**
 * What a followed redirect sends next, as k6 sends it: k6's HTTP client is Go's, so these are
 * Go's rules (net/http `redirectBehavior`), with credentials held back across origins as the
 * Fetch standard does. Pure: the outbound module (workers/outbound/outbound-fetch.ts) applies
 * them hop by hop, after asking its policy whether the next URL may be reached at all.
 *
 * - Only 301, 302, 303, 307 and 308 are followed: a `300 Multiple Choices` with a Location is
 *   an answer, as in Go.
 * - 301, 302 and 303 continue without a body, as a GET unless the request was a GET or HEAD
 *   (Go restricts every other method to GET, for compatibility with RFC 2616 clients), and
 *   without the headers about the body (Content-Type, -Encoding, -Language, -Location: Go
 *   and Fetch's redirect steps drop them); 307 and 308 repeat the method and the body.
 * - `Authorization`, `Cookie` and `Proxy-Authorization` go only to the origin they were set
 *   for: a hop to another scheme, host or port does not carry them (Fetch drops
 *   Authorization on a cross-origin redirect; Go drops Authorization and Cookie for another
 *   domain). A redirect must not hand a credential to a host the user never named.
 * - A k6 script's hop names the URL it was redirected from in `Referer` (without its
 *   credentials, and never from https to http), unless the request set its own: Go's client
 *   does (net/http `refererForURL`), so a target sees it from k6. edgeload's own requests
 *   (steps, webhooks, outputs, probes) do not, so a secret in a URL's path or query never
 *   travels to the next host in a header.
 */

/** The statuses Go's client (and so k6) follows. */
export const FOLLOWED_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** Headers that carry a credential for one origin only. */
export const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"] as const;

/** Headers about a body, which a hop that drops the body drops too. */
export const BODY_HEADERS = ["content-type", "content-encoding", "content-language", "content-location"] as const;

/** The request a hop sends: what may change from one hop to the next. */
export interface HopRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: HeadersInit | undefined;
  readonly body: BodyInit | null | undefined;
  /** Its Referer is one a hop added, not the request's own: the next hop names its own URL instead. */
  readonly refererAdded?: boolean;
}

/** The Location a response redirects to, resolved against the request's URL; null when it is not a redirect to follow. */
export function redirectTarget(status: number, location: string | null, fromUrl: string): string | null {
  if (!FOLLOWED_STATUSES.has(status) || !location) return null;
  return new URL(location, fromUrl).href;
}

/** The request sent to `toUrl` after `status` answered `from`; `referer`: a k6 script's, with Go's Referer. */
export function nextHop(from: HopRequest, status: number, toUrl: string, referer = false): HopRequest {
  const keepsMethod = status === 307 || status === 308;
  const verb = from.method.toUpperCase();
  const method = keepsMethod || verb === "GET" || verb === "HEAD" ? from.method : "GET";
  const kept = crossesOrigin(from.url, toUrl) ? withoutCredentials(from.headers) : from.headers;
  const headers = keepsMethod ? kept : without(kept, BODY_HEADERS);
  return { url: toUrl, method, ...(referer ? withReferer(from, headers, toUrl) : { headers }), body: keepsMethod ? from.body : null };
}

/**
 * `headers` with Go's Referer for the hop from `from` to `toUrl`: the request's own, else the
 * URL it came from (RFC 9110 §10.1.3: none from https to http).
 */
function withReferer(from: HopRequest, headers: HeadersInit | undefined, toUrl: string): Pick<HopRequest, "headers" | "refererAdded"> {
  const copy = new Headers(headers);
  if (copy.has("referer") && !from.refererAdded) return { headers };
  copy.delete("referer");
  const source = new URL(from.url);
  if (source.protocol === "https:" && new URL(toUrl).protocol === "http:") return { headers: copy };
  source.username = "";
  source.password = "";
  copy.set("Referer", source.href);
  return { headers: copy, refererAdded: true };
}

export function crossesOrigin(fromUrl: string, toUrl: string): boolean {
  return new URL(fromUrl).origin !== new URL(toUrl).origin;
}

/** `headers` less the credential headers; the same object when it holds none. */
export function withoutCredentials(headers: HeadersInit | undefined): HeadersInit | undefined {
  return without(headers, CREDENTIAL_HEADERS);
}

/** `headers` less `names`; the same object when it holds none of them. */
function without(headers: HeadersInit | undefined, names: readonly string[]): HeadersInit | undefined {
  if (headers === undefined) return undefined;
  const copy = new Headers(headers);
  if (!names.some((name) => copy.has(name))) return headers;
  for (const name of names) copy.delete(name);
  return copy;
}
