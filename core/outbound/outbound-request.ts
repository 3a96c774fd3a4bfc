/**
 * The shape of an outbound request, shared by everything that sends one: the flows and
 * phases that build requests (scenarios/, workers/shard/) take an `OutboundFetch`, and the
 * Worker hands them the one the outbound module makes (workers/outbound/outbound-fetch.ts),
 * which owns the allow-list, redirects and credential rules.
 */

/** Why a URL may not be reached, or null when it may: one per outbound path (workers/outbound/policies.ts). */
export type OutboundPolicy = (url: URL) => string | null;

/** A redirect the outbound module is about to follow: the 3xx's URL and cookies, and where it leads. */
export interface RedirectHop {
  readonly fromUrl: string;
  readonly setCookies: readonly string[];
  readonly toUrl: string;
}

/**
 * What a k6 VU's cookie jar does at each redirect, as k6 does it in Go's CheckRedirect: keeps
 * the 3xx's cookies, and gives the next hop's Cookie header (null: none).
 */
export type RedirectCookies = (hop: RedirectHop) => string | null | Promise<string | null>;

/** Where and how one hop of a redirect chain is sent. */
export interface HopTarget {
  readonly url: string;
  readonly method: string;
}

/**
 * Who watches a request's redirect chain hop by hop (a shard's sender, which records each hop
 * as k6 does): `followed` gets each 3xx about to be followed at its headers, its body to read;
 * `leaving` is told just before each later hop is sent (or refused) and names headers that hop
 * carries in place of the request's.
 */
export interface RedirectWatcher {
  followed(response: Response, hop: HopTarget): Promise<void>;
  leaving(hop: HopTarget): Readonly<Record<string, string>> | undefined;
}

/** fetch's init, with how many redirects to follow (k6's `redirects` / `maxRedirects`), a jar's hook and a hop watcher. */
export interface OutboundInit extends RequestInit {
  readonly maxRedirects?: number;
  readonly redirectCookies?: RedirectCookies;
  readonly redirectWatcher?: RedirectWatcher;
}

export type OutboundFetch = (input: string | URL, init?: OutboundInit) => Promise<Response>;

/** A path's way out: the policy to ask before a request, and the fetch that applies it to every hop. */
export interface Outbound {
  readonly policy: OutboundPolicy;
  readonly fetch: OutboundFetch;
}
