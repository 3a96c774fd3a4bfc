/**
 * The one way the deployed Worker sends a request: load from the shards, a k6 script's and a
 * spec's setup and teardown, WebSocket handshakes, push outputs, webhooks, the colo probe.
 * Each goes through `outboundFetch(policy)`, which
 *
 *  - asks the path's policy (policies.ts) whether the URL may be reached before sending, and
 *    again before every redirect hop: a target answering `302 Location: http://169.254.169.254/`
 *    must not turn a load test into load on a host nobody allowed;
 *  - never lets fetch() follow redirects by itself: it follows them as k6 does, by Go's
 *    statuses and method rules, holding credentials back across origins
 *    (core/outbound/redirect-rules.ts);
 *  - hands each followed 3xx's Set-Cookie to the request's `redirectCookies` (a k6 VU's jar),
 *    which names the next hop's Cookie header; such a request's hops carry Go's Referer;
 *  - stops after a request's `maxRedirects` (RedirectInit: a k6 script's params.redirects or
 *    options.maxRedirects; default MAX_REDIRECTS) and answers with the last 3xx, which is not
 *    an error, as in k6. The response's `url` is the last URL fetched;
 *  - shows each hop to the request's `redirectWatcher`, if it has one: a shard's sender records
 *    every hop as its own request, as k6 does (workers/shard/redirect-hops.ts).
 *
 * A refused URL is not sent; the call throws OutboundRefused naming it, which each caller
 * counts as it counts a connection error. Requests that ask for `redirect: "manual"` (silent
 * authentication reads the 302 itself) are checked and sent once.
 *
 * A layer rule (scripts/lint/structure.mjs) refuses a bare `fetch` anywhere else in the
 * Worker's code, so a new outbound path cannot slip around the policy.
 */
import type { Outbound, OutboundFetch, OutboundPolicy } from "../../core/outbound/outbound-request.ts";
import { FOLLOWED_STATUSES, nextHop, redirectTarget, type HopRequest } from "../../core/outbound/redirect-rules.ts";
import { redactUrl, redactUrlsIn } from "../../core/spec/redact-url.ts";

export type { Outbound, OutboundFetch, OutboundInit, OutboundPolicy } from "../../core/outbound/outbound-request.ts";

/** As many hops as k6 follows by default (`maxRedirects`). */
export const MAX_REDIRECTS = 10;

export class OutboundRefused extends Error {
  override readonly name = "OutboundRefused";
}

/** The platform's fetch, taken here and nowhere else in the Worker's code. */
const platformFetch: typeof fetch = (input, init) => fetch(input, init);

/**
 * A fetch that reaches only what `policy` allows, on the first request and every redirect hop.
 * `fetcher` is the platform's fetch; tests hand in a network of their own.
 */
export function outboundFetch(policy: OutboundPolicy, fetcher: typeof fetch = platformFetch): OutboundFetch {
  const decided = new Map<string, string | null>();
  const refusalOf = (url: URL) => {
    // Policies decide by origin; a run sends to a handful, so each is asked once.
    let refusal = decided.get(url.origin);
    if (refusal === undefined) decided.set(url.origin, (refusal = policy(url)));
    return refusal;
  };
  // A shard sends the same URL over and over: the last one allowed is not parsed again.
  let lastAllowed = "";
  const checked = (href: string, what: string) => {
    if (href === lastAllowed) return;
    const refusal = refusalOf(new URL(href));
    // The message is logged and stored as an error sample: the URL keeps no credentials.
    if (refusal !== null) throw new OutboundRefused(`${what} ${redactUrl(href)} refused: ${redactUrlsIn(refusal)}`);
    lastAllowed = href;
  };
  return async (input, init = {}) => {
    const { maxRedirects = MAX_REDIRECTS, redirectCookies, redirectWatcher, ...fetchInit } = init;
    const first = typeof input === "string" ? input : input.href;
    checked(first, "request to");
    if (fetchInit.redirect === "manual") return fetcher(first, fetchInit);
    // The send loop's common case, one answer and no redirect, builds nothing beyond this init.
    let response = await fetcher(first, { ...fetchInit, redirect: "manual" });
    let hop: HopRequest | null = null;
    for (let hops = 0; FOLLOWED_STATUSES.has(response.status) && hops < maxRedirects; hops++) {
      hop ??= { url: first, method: fetchInit.method ?? "GET", headers: fetchInit.headers, body: fetchInit.body };
      const next = redirectTarget(response.status, response.headers.get("location"), hop.url);
      if (next === null) break;
      // A watcher reads the 3xx's body (its bytes and time are the hop's, as Go drains it); else it is dropped.
      if (redirectWatcher) await redirectWatcher.followed(response, hop);
      else await response.body?.cancel();
      const from = hop.url;
      // A k6 script's request (the one with a VU's jar) follows Go's client: Referer too.
      hop = nextHop(hop, response.status, next, redirectCookies !== undefined);
      // A k6 VU's jar keeps the 3xx's cookies and names the next hop's, as k6's CheckRedirect does
      // (before the hop is dialled, so a refused hop's 3xx still leaves its cookies, as in k6).
      if (redirectCookies) hop = withCookie(hop, await redirectCookies({ fromUrl: from, setCookies: response.headers.getSetCookie(), toUrl: next }));
      // Told before the policy is asked: a refused hop is a request that failed, as k6 counts a blocked one.
      if (redirectWatcher) hop = withHeaders(hop, redirectWatcher.leaving(hop));
      checked(next, "redirect to");
      response = await fetcher(hop.url, { ...fetchInit, method: hop.method, headers: hop.headers, body: hop.body, redirect: "manual" });
    }
    return response;
  };
}

/** `hop` with `cookie` as its only Cookie header (null: none), as k6 rebuilds it for each hop from its jar. */
function withCookie(hop: HopRequest, cookie: string | null): HopRequest {
  const headers = new Headers(hop.headers);
  headers.delete("cookie");
  if (cookie) headers.set("Cookie", cookie);
  return { ...hop, headers };
}

/** `hop` with `named` headers in place of its own of the same names. */
function withHeaders(hop: HopRequest, named: Readonly<Record<string, string>> | undefined): HopRequest {
  if (!named) return hop;
  const headers = new Headers(hop.headers);
  for (const [name, value] of Object.entries(named)) headers.set(name, value);
  return { ...hop, headers };
}

/** `policy` with the fetch that applies it: what a script's host takes (it asks first, to name a refusal). */
export function outbound(policy: OutboundPolicy, fetcher: typeof fetch = platformFetch): Outbound {
  return { policy, fetch: outboundFetch(policy, fetcher) };
}
