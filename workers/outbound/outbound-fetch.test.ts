import { describe, expect, it } from "vitest";
import { MAX_REDIRECTS, OutboundRefused, outboundFetch, type OutboundInit, type OutboundPolicy } from "./outbound-fetch.ts";

/** A fake network: each URL answers from the table; every request is recorded. */
function network(routes: Record<string, { status: number; location?: string; setCookie?: string }>) {
  const sent: Array<{ url: string; method: string; redirect: string | undefined; headers: Headers; body: unknown }> = [];
  const fetcher = (async (url: string, init: RequestInit = {}) => {
    sent.push({ url, method: init.method ?? "GET", redirect: init.redirect, headers: new Headers(init.headers), body: init.body ?? null });
    const route = routes[url] ?? { status: 404 };
    const headers = new Headers(route.location ? { location: route.location } : {});
    if (route.setCookie) headers.append("set-cookie", route.setCookie);
    return new Response("body", { status: route.status, headers });
  }) as unknown as typeof fetch;
  return { fetcher, sent };
}

/** A request's init with its redirect limit (k6's params.redirects or options.maxRedirects). */
const limit = (maxRedirects: number): OutboundInit => ({ redirect: "follow", maxRedirects });

const loopbackOnly: OutboundPolicy = (url) => (["127.0.0.1", "localhost"].includes(url.hostname) ? null : "not an allowed target");

describe("outboundFetch", () => {
  it("follows redirects that stay on allowed targets, never letting fetch follow by itself", async () => {
    const net = network({ "http://127.0.0.1:9/a": { status: 302, location: "/b" }, "http://127.0.0.1:9/b": { status: 200 } });
    const response = await outboundFetch(loopbackOnly, net.fetcher)("http://127.0.0.1:9/a", {});
    expect(response.status).toBe(200);
    expect(net.sent.map(({ url, method, redirect }) => ({ url, method, redirect }))).toEqual([
      { url: "http://127.0.0.1:9/a", method: "GET", redirect: "manual" },
      { url: "http://127.0.0.1:9/b", method: "GET", redirect: "manual" },
    ]);
  });

  it("refuses a first request its policy does not allow, without sending it", async () => {
    const net = network({});
    await expect(outboundFetch(loopbackOnly, net.fetcher)("http://169.254.169.254/latest/meta-data/", {})).rejects.toThrow(
      new OutboundRefused("request to http://169.254.169.254/latest/meta-data/ refused: not an allowed target"),
    );
    // A request that reads its own redirects is asked about too.
    await expect(outboundFetch(loopbackOnly, net.fetcher)("https://example.com/", { redirect: "manual" })).rejects.toThrow(OutboundRefused);
    expect(net.sent).toEqual([]);
  });

  it("refuses a redirect that leaves the allowed targets, without sending it", async () => {
    const net = network({ "http://127.0.0.1:9/a": { status: 301, location: "https://example.com/x" } });
    await expect(outboundFetch(loopbackOnly, net.fetcher)("http://127.0.0.1:9/a", {})).rejects.toThrow(
      new OutboundRefused("redirect to https://example.com/x refused: not an allowed target"),
    );
    expect(net.sent.map((s) => s.url)).toEqual(["http://127.0.0.1:9/a"]);
  });

  it("answers with the last 3xx once the most redirects k6 follows are followed, as k6 does (not an error)", async () => {
    const net = network({ "http://127.0.0.1:9/loop": { status: 302, location: "/loop" } });
    const response = await outboundFetch(loopbackOnly, net.fetcher)("http://127.0.0.1:9/loop", {});
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/loop");
    expect(await response.text()).toBe("body");
    expect(net.sent).toHaveLength(MAX_REDIRECTS + 1);
  });

  it("follows at most a request's own maxRedirects (k6's params.redirects or options.maxRedirects)", async () => {
    const chain: Record<string, { status: number; location?: string }> = { "http://127.0.0.1:9/get": { status: 200 } };
    for (let n = 1; n <= 6; n++) chain[`http://127.0.0.1:9/redirect/${n}`] = { status: 302, location: n > 1 ? `/redirect/${n - 1}` : "/get" };
    const guarded = outboundFetch(loopbackOnly, network(chain).fetcher);
    const cut = await guarded("http://127.0.0.1:9/redirect/6", limit(5));
    expect([cut.status, cut.headers.get("location")]).toEqual([302, "/get"]);
    expect((await guarded("http://127.0.0.1:9/redirect/1", limit(1))).status).toBe(200);
    expect((await guarded("http://127.0.0.1:9/redirect/1", limit(0))).status).toBe(302);
    // Asked for two hops, it sends one.
    const net = network(chain);
    await outboundFetch(loopbackOnly, net.fetcher)("http://127.0.0.1:9/redirect/2", limit(1));
    expect(net.sent.map((s) => s.url)).toEqual(["http://127.0.0.1:9/redirect/2", "http://127.0.0.1:9/redirect/1"]);
  });

  it("still refuses a hop off the allowed targets within the limit", async () => {
    const net = network({ "http://127.0.0.1:9/a": { status: 302, location: "https://example.com/x" } });
    const guarded = outboundFetch(loopbackOnly, net.fetcher);
    await expect(guarded("http://127.0.0.1:9/a", limit(3))).rejects.toThrow(OutboundRefused);
    // With no hop left the 3xx is the answer: the refused target is never asked for.
    expect((await guarded("http://127.0.0.1:9/a", limit(0))).status).toBe(302);
    expect(net.sent.map((s) => s.url)).toEqual(["http://127.0.0.1:9/a", "http://127.0.0.1:9/a"]);
  });

  it("changes methods as Go's client (k6's) does: 301/302/303 continue as a GET without a body, 307/308 repeat both", async () => {
    const net = network({
      "http://127.0.0.1:9/303": { status: 303, location: "/done" },
      "http://127.0.0.1:9/301": { status: 301, location: "/done" },
      "http://127.0.0.1:9/307": { status: 307, location: "/done" },
      "http://127.0.0.1:9/308": { status: 308, location: "/done" },
      "http://127.0.0.1:9/done": { status: 200 },
    });
    const guarded = outboundFetch(loopbackOnly, net.fetcher);
    await guarded("http://127.0.0.1:9/303", { method: "POST", body: "x=1" });
    // Go turns every method but GET and HEAD into a GET on 301 and 302 (fetch would keep a PUT).
    await guarded("http://127.0.0.1:9/301", { method: "PUT", body: "x=2" });
    await guarded("http://127.0.0.1:9/301", { method: "HEAD" });
    await guarded("http://127.0.0.1:9/307", { method: "POST", body: "x=3" });
    await guarded("http://127.0.0.1:9/308", { method: "PATCH", body: "x=4" });
    expect(net.sent.map((s) => `${s.method} ${new URL(s.url).pathname} ${s.body}`)).toEqual([
      "POST /303 x=1",
      "GET /done null",
      "PUT /301 x=2",
      "GET /done null",
      "HEAD /301 null",
      "HEAD /done null",
      "POST /307 x=3",
      "POST /done x=3",
      "PATCH /308 x=4",
      "PATCH /done x=4",
    ]);
  });

  it("drops the headers about the body with the body (301/302/303), for good, and keeps them on 307/308, as Go 1.26 does", async () => {
    const net = network({
      "http://127.0.0.1:9/302": { status: 302, location: "/307" },
      "http://127.0.0.1:9/307": { status: 307, location: "/done" },
      "http://127.0.0.1:9/308": { status: 308, location: "/done" },
      "http://127.0.0.1:9/done": { status: 200 },
    });
    const guarded = outboundFetch(loopbackOnly, net.fetcher);
    const headers = { "Content-Type": "application/json", "Content-Encoding": "gzip", "Content-Language": "en", "Content-Location": "/x", "X-Keep": "1" };
    await guarded("http://127.0.0.1:9/302", { method: "POST", body: "{}", headers });
    await guarded("http://127.0.0.1:9/308", { method: "POST", body: "{}", headers });
    const seen = net.sent.map((s) => `${s.method} ${new URL(s.url).pathname} ${s.body} ${[...s.headers.keys()].filter((k) => k !== "referer")}`);
    expect(seen).toEqual([
      "POST /302 {} content-encoding,content-language,content-location,content-type,x-keep",
      "GET /307 null x-keep",
      // A 307 after the body was dropped has none to repeat, nor its headers.
      "GET /done null x-keep",
      "POST /308 {} content-encoding,content-language,content-location,content-type,x-keep",
      "POST /done {} content-encoding,content-language,content-location,content-type,x-keep",
    ]);
  });

  it("takes a 300 Multiple Choices with a Location as the answer, as Go does", async () => {
    const net = network({ "http://127.0.0.1:9/choices": { status: 300, location: "/one" }, "http://127.0.0.1:9/one": { status: 200 } });
    expect((await outboundFetch(loopbackOnly, net.fetcher)("http://127.0.0.1:9/choices")).status).toBe(300);
    expect(net.sent).toHaveLength(1);
  });

  it("drops Authorization, Cookie and Proxy-Authorization on a hop to another origin, and keeps them on the same one", async () => {
    const net = network({
      "http://127.0.0.1:9/a": { status: 302, location: "/b" },
      "http://127.0.0.1:9/b": { status: 302, location: "http://localhost:9/c" },
      "http://localhost:9/c": { status: 200 },
    });
    const credentials = { authorization: "Bearer secret", cookie: "sid=1", "proxy-authorization": "Basic x", "x-trace": "t" };
    await outboundFetch(loopbackOnly, net.fetcher)("http://127.0.0.1:9/a", { headers: credentials });
    const seen = net.sent.map((s) => [s.url, [...s.headers.keys()].sort().join(",")]);
    expect(seen).toEqual([
      ["http://127.0.0.1:9/a", "authorization,cookie,proxy-authorization,x-trace"],
      ["http://127.0.0.1:9/b", "authorization,cookie,proxy-authorization,x-trace"],
      ["http://localhost:9/c", "x-trace"],
    ]);
  });

  it("hands each followed 3xx's cookies to the request's jar hook and sends the Cookie it names, as k6's CheckRedirect does", async () => {
    const net = network({
      "http://127.0.0.1:9/cookies/set": { status: 302, location: "/cookies", setCookie: "sid=1; Path=/" },
      "http://127.0.0.1:9/cookies": { status: 302, location: "http://localhost:9/end" },
      "http://localhost:9/end": { status: 200 },
    });
    const hops: unknown[] = [];
    // A jar that knows only sid for 127.0.0.1; the hook answers asynchronously, as an RPC stub does.
    const redirectCookies = async (hop: { fromUrl: string; setCookies: readonly string[]; toUrl: string }) => {
      hops.push(hop);
      return new URL(hop.toUrl).hostname === "127.0.0.1" ? "sid=1" : null;
    };
    await outboundFetch(loopbackOnly, net.fetcher)("http://127.0.0.1:9/cookies/set", { headers: { Cookie: "given=1" }, redirectCookies });
    expect(hops).toEqual([
      { fromUrl: "http://127.0.0.1:9/cookies/set", setCookies: ["sid=1; Path=/"], toUrl: "http://127.0.0.1:9/cookies" },
      { fromUrl: "http://127.0.0.1:9/cookies", setCookies: [], toUrl: "http://localhost:9/end" },
    ]);
    // The script's own Cookie header goes with the first request only: k6 rebuilds each hop's from its jar.
    expect(net.sent.map((s) => s.headers.get("cookie"))).toEqual(["given=1", "sid=1", null]);
  });

  it("names the URL each hop of a k6 script's request comes from in Referer, as Go's client does: without credentials, not from https to http, never over the request's own", async () => {
    const allowAll: OutboundPolicy = () => null;
    // A k6 script's request is the one with a VU's jar; this jar knows no cookies.
    const redirectCookies = () => null;
    const net = network({
      "http://u:p@127.0.0.1:9/a?x=1": { status: 302, location: "http://127.0.0.1:9/b" },
      "http://127.0.0.1:9/b": { status: 307, location: "https://localhost:9/c" },
      "https://localhost:9/c": { status: 301, location: "http://127.0.0.1:9/d" },
      "http://127.0.0.1:9/d": { status: 200 },
    });
    await outboundFetch(allowAll, net.fetcher)("http://u:p@127.0.0.1:9/a?x=1", { method: "POST", body: "b", redirectCookies });
    expect(net.sent.map((s) => s.headers.get("referer"))).toEqual([null, "http://127.0.0.1:9/a?x=1", "http://127.0.0.1:9/b", null]);
    const own = network({ "http://127.0.0.1:9/a?x=1": { status: 302, location: "/b" }, "http://127.0.0.1:9/b": { status: 200 } });
    await outboundFetch(allowAll, own.fetcher)("http://127.0.0.1:9/a?x=1", { headers: { Referer: "http://mine/" }, redirectCookies });
    expect(own.sent.map((s) => s.headers.get("referer"))).toEqual(["http://mine/", "http://mine/"]);
    // edgeload's own requests (a webhook's, a step's) name no URL to the next host.
    const plain = network({ "http://127.0.0.1:9/a?x=1": { status: 302, location: "/b" }, "http://127.0.0.1:9/b": { status: 200 } });
    await outboundFetch(allowAll, plain.fetcher)("http://127.0.0.1:9/a?x=1", {});
    expect(plain.sent.map((s) => s.headers.get("referer"))).toEqual([null, null]);
  });

  it("shows a watcher each followed 3xx with its body to read, then each next hop before it is sent, with the headers it names", async () => {
    const net = network({
      "http://127.0.0.1:9/a": { status: 302, location: "/b" },
      "http://127.0.0.1:9/b": { status: 303, location: "/c" },
      "http://127.0.0.1:9/c": { status: 200 },
    });
    const seen: string[] = [];
    const redirectWatcher = {
      async followed(response: Response, hop: { url: string; method: string }) {
        seen.push(`followed ${response.status} ${hop.method} ${hop.url} body=${await response.text()}`);
      },
      leaving(hop: { url: string; method: string }) {
        seen.push(`leaving ${hop.method} ${hop.url}`);
        return { "x-hop": String(seen.length) };
      },
    };
    const response = await outboundFetch(loopbackOnly, net.fetcher)("http://127.0.0.1:9/a", {
      method: "POST",
      body: "x",
      headers: { "x-hop": "first" },
      redirectWatcher,
    });
    expect(response.status).toBe(200);
    expect(seen).toEqual([
      "followed 302 POST http://127.0.0.1:9/a body=body",
      "leaving GET http://127.0.0.1:9/b",
      "followed 303 GET http://127.0.0.1:9/b body=body",
      "leaving GET http://127.0.0.1:9/c",
    ]);
    // Each hop carries the header its watcher named in place of the request's.
    expect(net.sent.map((s) => s.headers.get("x-hop"))).toEqual(["first", "2", "4"]);
  });

  it("tells a watcher of a hop before asking the policy, so a refused hop is one the watcher knows failed; the 3xx past the limit is the answer, not shown", async () => {
    const net = network({ "http://127.0.0.1:9/a": { status: 302, location: "https://example.com/x" } });
    const seen: string[] = [];
    const redirectWatcher = {
      followed: async (response: Response) => void seen.push(`followed ${response.status}`),
      leaving: (hop: { url: string }) => void seen.push(`leaving ${hop.url}`),
    };
    const guarded = outboundFetch(loopbackOnly, net.fetcher);
    await expect(guarded("http://127.0.0.1:9/a", { redirectWatcher })).rejects.toThrow(OutboundRefused);
    expect(seen).toEqual(["followed 302", "leaving https://example.com/x"]);
    seen.length = 0;
    expect((await guarded("http://127.0.0.1:9/a", { ...limit(0), redirectWatcher })).status).toBe(302);
    expect(seen).toEqual([]);
  });

  it("leaves manual requests' redirects to them", async () => {
    const net = network({ "http://127.0.0.1:9/form": { status: 303, location: "/done" } });
    const manual = await outboundFetch(loopbackOnly, net.fetcher)("http://127.0.0.1:9/form", { method: "GET", redirect: "manual" });
    expect(manual.status).toBe(303);
    expect(net.sent).toHaveLength(1);
  });
});
