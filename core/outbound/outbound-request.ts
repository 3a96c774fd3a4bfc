/**
 * The shape of an outbound request, shared by everything that sends one: the flows and
 * phases that build requests (scenarios/, workers/shard/) take an `OutboundFetch`, and the
 * Worker hands them the one the outbound module makes (workers/outbound/outbound-fetch.ts),
 * which owns the allow-list, redirects and credential rules.
 */

/** Why a URL may not be reached, or null when it may: one per outbound path (workers/outbound/policies.ts). */
export type OutboundPolicy = (url: URL) => string | null;

/** fetch's init, with how many redirects to follow (k6's `redirects` / `maxRedirects`). */
export interface OutboundInit extends RequestInit {
  readonly maxRedirects?: number;
}

export type OutboundFetch = (input: string | URL, init?: OutboundInit) => Promise<Response>;

/** A path's way out: the policy to ask before a request, and the fetch that applies it to every hop. */
export interface Outbound {
  readonly policy: OutboundPolicy;
  readonly fetch: OutboundFetch;
}
