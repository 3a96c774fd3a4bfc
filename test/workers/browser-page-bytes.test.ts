/**
 * browser_data_sent and browser_data_received of a page's requests (workers/shard/browser-page-metrics.ts),
 * on the local Browser Run binding's Chromium against the local target's knobs: a response's
 * body and headers are received, a POST's body and headers are sent, a redirect brings its
 * headers and no body (k6 v1.x common/http.go), and each counter carries the request's tags.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { BrowserCall } from "../../k6-compat/runtime/browser-wire.ts";
import type { Sample } from "../../k6-compat/runtime/wire.ts";
import { BrowserHost } from "../../workers/shard/browser-host.ts";
import { ShardBrowser } from "../../workers/shard/browser-session.ts";

type Counted = { name: string; value: number; tags: Record<string, string> };

describe("a page's browser data counters", () => {
  it("counts each request's bytes sent and its response's bytes received, a redirect's without a body", async () => {
    const stub = env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`browser-page-bytes-${crypto.randomUUID()}`));
    const recorded = await runInDurableObject(stub, async (_instance, state) => {
      const session = new ShardBrowser(env.BROWSER!, state.storage.kv);
      const recorded: Sample[] = [];
      const host = new BrowserHost(
        { newContext: () => session.newContext(), identity: () => session.identity(), saveScreenshot: async () => {} },
        () => null,
        (s) => recorded.push(...s),
      );
      const call = (c: BrowserCall) => host.call(c);
      try {
        const { value: page } = await call({ target: { kind: "browser" }, method: "newPage", args: [] });
        const target = { kind: "page", page: page as number } as const;
        await call({ target, method: "goto", args: [`${env.TARGET_URL}/page-body?size=50000`] });
        await call({
          target,
          method: "evaluate",
          args: [
            `async (base) => {
              await (await fetch(base + "/post-sink?size=10", { method: "POST", body: "y".repeat(3000) })).text();
              await (await fetch(base + "/hop?redirect=" + encodeURIComponent("/after-hop?size=20"))).text();
            }`,
            true,
            env.TARGET_URL,
          ],
        });
        // Read only once the page is closed: a body read in the page may be told to the shard just after.
        await call({ target, method: "close", args: [] });
        return recorded;
      } finally {
        await host.close();
        await session.endInvocation(true);
      }
    });
    const counted = (name: string, path: string) =>
      (recorded as Counted[]).filter((s) => s.name === name && new URL(s.tags.url!).pathname === path).map((s) => s);
    const [pageReceived] = counted("browser_data_received", "/page-body");
    // The 50,000-byte body and its status line and headers, which are far under 2 kB.
    expect(pageReceived?.value).toBeGreaterThan(50_000);
    expect(pageReceived?.value).toBeLessThan(52_000);
    expect(pageReceived?.tags).toEqual({ url: `${env.TARGET_URL}/page-body?size=50000`, method: "GET", status: "200" });
    const [postSent] = counted("browser_data_sent", "/post-sink");
    expect(postSent?.value).toBeGreaterThan(3000 + "POST /post-sink HTTP/1.1".length);
    expect(postSent?.value).toBeLessThan(5000);
    // The bytes sent go before there is a status.
    expect(postSent?.tags).toEqual({ url: `${env.TARGET_URL}/post-sink?size=10`, method: "POST" });
    const [postReceived] = counted("browser_data_received", "/post-sink");
    expect(postReceived?.value).toBeGreaterThan(10);
    expect(postReceived?.value).toBeLessThan(2000);
    // The 302 brings headers only; the page it sends to brings its 20 bytes.
    const [hop] = counted("browser_data_received", "/hop");
    expect(hop?.tags.status).toBe("302");
    expect(hop?.value).toBeGreaterThan(0);
    expect(hop?.value).toBeLessThan(2000);
    expect(counted("browser_data_received", "/after-hop")[0]?.value).toBeGreaterThan(20);
    // Every request is counted once (Chromium's own request for the favicon aside, which comes when it comes).
    const sent = (recorded as Counted[]).filter((s) => s.name === "browser_data_sent").map((s) => new URL(s.tags.url!).pathname);
    expect(sent.filter((path) => path !== "/favicon.ico").sort()).toEqual(["/after-hop", "/hop", "/page-body", "/post-sink"]);
  }, 60_000);
});
