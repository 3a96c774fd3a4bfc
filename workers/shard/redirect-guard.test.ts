import { describe, expect, it } from "vitest";
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

  it("stops after the most redirects k6 follows", async () => {
    const net = network({ "http://127.0.0.1:9/loop": { status: 302, location: "/loop" } });
    await expect(followingAllowedRedirects(net.fetcher, loopbackOnly)("http://127.0.0.1:9/loop", {})).rejects.toThrow(/more than 10 redirects/);
    expect(net.sent).toHaveLength(MAX_REDIRECTS + 1);
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
