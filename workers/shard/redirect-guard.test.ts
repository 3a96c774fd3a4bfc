import { describe, expect, it } from "vitest";
import type { RedirectInit } from "../../scenarios/flow.ts";
import { followingAllowedRedirects, MAX_REDIRECTS, RedirectRefused } from "./redirect-guard.ts";

/** A fake network: each URL answers from the table; every request is recorded. */
function network(routes: Record<string, { status: number; location?: string }>) {
  const sent: Array<{ url: string; method: string; redirect: string | undefined }> = [];
  const fetcher = (async (url: string, init: RequestInit = {}) => {
    sent.push({ url, method: init.method ?? "GET", redirect: init.redirect });
    const route = routes[url] ?? { status: 404 };
    return new Response("body", { status: route.status, headers: route.location ? { location: route.location } : {} });
  }) as unknown as typeof fetch;
  return { fetcher, sent };
}

/** A request's init with its redirect limit (the guard's own field, scenarios/flow.ts RedirectInit). */
const limit = (maxRedirects: number): RequestInit => ({ redirect: "follow", ...({ maxRedirects } satisfies RedirectInit) });

const loopbackOnly = (url: string) => ["127.0.0.1", "localhost"].includes(new URL(url).hostname);

describe("followingAllowedRedirects", () => {
  it("follows redirects that stay on allowed targets, never letting fetch follow by itself", async () => {
    const net = network({ "http://127.0.0.1:9/a": { status: 302, location: "/b" }, "http://127.0.0.1:9/b": { status: 200 } });
    const response = await followingAllowedRedirects(net.fetcher, loopbackOnly)("http://127.0.0.1:9/a", {});
    expect(response.status).toBe(200);
    expect(net.sent).toEqual([
      { url: "http://127.0.0.1:9/a", method: "GET", redirect: "manual" },
      { url: "http://127.0.0.1:9/b", method: "GET", redirect: "manual" },
    ]);
  });

  it("refuses a redirect that leaves the allowed targets, without sending it", async () => {
    const net = network({ "http://127.0.0.1:9/a": { status: 301, location: "https://example.com/x" } });
    await expect(followingAllowedRedirects(net.fetcher, loopbackOnly)("http://127.0.0.1:9/a", {})).rejects.toThrow(
      new RedirectRefused("redirect to https://example.com/x refused: not an allowed target"),
    );
    expect(net.sent.map((s) => s.url)).toEqual(["http://127.0.0.1:9/a"]);
  });

  it("answers with the last 3xx once the most redirects k6 follows are followed, as k6 does (not an error)", async () => {
    const net = network({ "http://127.0.0.1:9/loop": { status: 302, location: "/loop" } });
    const response = await followingAllowedRedirects(net.fetcher, loopbackOnly)("http://127.0.0.1:9/loop", {});
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/loop");
    expect(await response.text()).toBe("body");
    expect(net.sent).toHaveLength(MAX_REDIRECTS + 1);
  });

  it("follows at most a request's own maxRedirects (k6's params.redirects or options.maxRedirects)", async () => {
    const chain: Record<string, { status: number; location?: string }> = { "http://127.0.0.1:9/get": { status: 200 } };
    for (let n = 1; n <= 6; n++) chain[`http://127.0.0.1:9/redirect/${n}`] = { status: 302, location: n > 1 ? `/redirect/${n - 1}` : "/get" };
    const guarded = followingAllowedRedirects(network(chain).fetcher, loopbackOnly);
    const cut = await guarded("http://127.0.0.1:9/redirect/6", limit(5));
    expect([cut.status, cut.headers.get("location")]).toEqual([302, "/get"]);
    expect((await guarded("http://127.0.0.1:9/redirect/1", limit(1))).status).toBe(200);
    expect((await guarded("http://127.0.0.1:9/redirect/1", limit(0))).status).toBe(302);
    // Asked for two hops, it sends one.
    const net = network(chain);
    await followingAllowedRedirects(net.fetcher, loopbackOnly)("http://127.0.0.1:9/redirect/2", limit(1));
    expect(net.sent.map((s) => s.url)).toEqual(["http://127.0.0.1:9/redirect/2", "http://127.0.0.1:9/redirect/1"]);
  });

  it("still refuses a hop off the allowed targets within the limit", async () => {
    const net = network({ "http://127.0.0.1:9/a": { status: 302, location: "https://example.com/x" } });
    const guarded = followingAllowedRedirects(net.fetcher, loopbackOnly);
    await expect(guarded("http://127.0.0.1:9/a", limit(3))).rejects.toThrow(RedirectRefused);
    // With no hop left the 3xx is the answer: the refused target is never asked for.
    expect((await guarded("http://127.0.0.1:9/a", limit(0))).status).toBe(302);
    expect(net.sent.map((s) => s.url)).toEqual(["http://127.0.0.1:9/a", "http://127.0.0.1:9/a"]);
  });

  it("continues a POST as a GET after 303, and leaves manual requests alone", async () => {
    const net = network({ "http://127.0.0.1:9/form": { status: 303, location: "/done" }, "http://127.0.0.1:9/done": { status: 200 } });
    const guarded = followingAllowedRedirects(net.fetcher, loopbackOnly);
    await guarded("http://127.0.0.1:9/form", { method: "POST", body: "x=1" });
    expect(net.sent.map((s) => `${s.method} ${s.url}`)).toEqual(["POST http://127.0.0.1:9/form", "GET http://127.0.0.1:9/done"]);
    const manual = await guarded("http://127.0.0.1:9/form", { method: "GET", redirect: "manual" });
    expect(manual.status).toBe(303);
  });
});
