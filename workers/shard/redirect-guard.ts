/**
 * Redirects are followed only while they stay on targets the deployment allows. A target
 * answering `302 Location: https://somewhere-else` must not turn a load test into load on
 * a host nobody allowed (and under `wrangler dev`, on anything but loopback), so the shard
 * never lets fetch() follow redirects by itself: this wrapper follows them, each hop
 * checked first. A hop that leaves the allowed targets is not sent; the request fails as a
 * connection error would, naming the refused URL.
 *
 * As in k6, a request follows at most its `maxRedirects` (RedirectInit: a k6 script's
 * params.redirects or options.maxRedirects; default MAX_REDIRECTS): one that would need
 * more gets the last 3xx response, which is not an error. The response's `url` is the
 * last URL fetched, so a script's `res.url` is where the redirects led.
 *
 * Requests that ask for `redirect: "manual"` (silent authentication reads the 302 itself)
 * are passed through untouched. The whole chain is one request to the engine: its
 * duration runs from the first send to the last response, like a browser's navigation.
 */

import type { RedirectInit } from "../../scenarios/flow.ts";

/** As many hops as k6 follows by default (`maxRedirects`). */
export const MAX_REDIRECTS = 10;

export class RedirectRefused extends Error {
  override readonly name = "RedirectRefused";
}

export function followingAllowedRedirects(fetcher: typeof fetch, mayFollow: (url: string) => boolean): typeof fetch {
  return (async (input: RequestInfo | URL, init: RequestInit & RedirectInit = {}) => {
    const { maxRedirects = MAX_REDIRECTS, ...fetchInit } = init;
    if (fetchInit.redirect === "manual") return fetcher(input, fetchInit);
    let url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    let request: RequestInit = { ...fetchInit, redirect: "manual" };
    for (let hop = 0; ; hop++) {
      const response = await fetcher(url, request);
      const location = response.status >= 300 && response.status < 400 ? response.headers.get("location") : null;
      if (!location || hop >= maxRedirects) return response;
      const next = new URL(location, url).href;
      await response.body?.cancel();
      if (!mayFollow(next)) throw new RedirectRefused(`redirect to ${next} refused: not an allowed target`);
      // 303, and 301/302 after a POST, continue as a GET without a body (as fetch does).
      const asGet = response.status === 303 || ((response.status === 301 || response.status === 302) && request.method === "POST");
      request = asGet ? { ...request, method: "GET", body: null } : request;
      url = next;
    }
  }) as typeof fetch;
}
