/**
 * Redirects are followed only while they stay on targets the deployment allows. A target
 * answering `302 Location: https://somewhere-else` must not turn a load test into load on
 * a host nobody allowed (and under `wrangler dev`, on anything but loopback), so the shard
 * never lets fetch() follow redirects by itself: this wrapper follows them, at most
 * MAX_REDIRECTS hops, each one checked first. A hop that leaves the allowed targets is not
 * sent; the request fails as a connection error would, naming the refused URL.
 *
 * Requests that ask for `redirect: "manual"` (silent authentication reads the 302 itself)
 * are passed through untouched. The whole chain is one request to the engine: its
 * duration runs from the first send to the last response, like a browser's navigation.
 */

/** As many hops as k6 follows by default (`maxRedirects`). */
export const MAX_REDIRECTS = 10;

export class RedirectRefused extends Error {
  override readonly name = "RedirectRefused";
}

export function followingAllowedRedirects(fetcher: typeof fetch, mayFollow: (url: string) => boolean): typeof fetch {
  return (async (input: RequestInfo | URL, init: RequestInit = {}) => {
    if (init.redirect === "manual") return fetcher(input, init);
    let url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    let request: RequestInit = { ...init, redirect: "manual" };
    for (let hop = 0; ; hop++) {
      const response = await fetcher(url, request);
      const location = response.status >= 300 && response.status < 400 ? response.headers.get("location") : null;
      if (!location) return response;
      const next = new URL(location, url).href;
      await response.body?.cancel();
      if (hop >= MAX_REDIRECTS) throw new RedirectRefused(`more than ${MAX_REDIRECTS} redirects, the last to ${next}`);
      if (!mayFollow(next)) throw new RedirectRefused(`redirect to ${next} refused: not an allowed target`);
      // 303, and 301/302 after a POST, continue as a GET without a body (as fetch does).
      const asGet = response.status === 303 || ((response.status === 301 || response.status === 302) && request.method === "POST");
      request = asGet ? { ...request, method: "GET", body: null } : request;
      url = next;
    }
  }) as typeof fetch;
}
