/**
 * The shard's side of k6/browser (workers/shard/browser-host.ts) on the local Browser Run
 * binding: a page's requests reach only what the run may load — a navigation off the allowed
 * targets is refused before it is sent, a page's own request to one is aborted and counted in
 * browser_http_req_failed — and every request it makes is recorded; a goto's web vitals are
 * recorded with the page's URL and rating. The allowed targets here are a rule of the test's
 * own (a path), so nothing leaves loopback.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { BrowserCall } from "../../k6-compat/runtime/browser-wire.ts";
import type { Sample } from "../../k6-compat/runtime/wire.ts";
import { BrowserHost } from "../../workers/shard/browser-host.ts";
import { ShardBrowser } from "../../workers/shard/browser-session.ts";

const refusal = (url: URL) => (url.pathname.startsWith("/blocked") ? "not an allowed target of this test" : null);

describe("the shard's browser host", () => {
  it("keeps a page on the allowed targets and records its requests and web vitals", async () => {
    const stub = env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`browser-host-${crypto.randomUUID()}`));
    const { recorded, refused } = await runInDurableObject(stub, async (_instance, state) => {
      const session = new ShardBrowser(env.BROWSER!, state.storage.kv);
      const saved: string[] = [];
      const recorded: Sample[] = [];
      const host = new BrowserHost(
        { newContext: () => session.newContext(), identity: () => session.identity(), saveScreenshot: async (name) => void saved.push(name) },
        refusal,
        (s) => recorded.push(...s),
      );
      const call = (c: BrowserCall) => host.call(c);
      try {
        const { value: page } = await call({ target: { kind: "browser" }, method: "newPage", args: [] });
        const refused = await call({ target: { kind: "page", page: page as number }, method: "goto", args: [`${env.TARGET_URL}/blocked`] }).catch(
          (e: Error) => e.message,
        );
        // The page loads; its image on a refused path is aborted by the context's route, never sent.
        await call({ target: { kind: "page", page: page as number }, method: "goto", args: [`${env.TARGET_URL}/app/sign-in`] });
        await call({
          target: { kind: "page", page: page as number },
          method: "evaluate",
          args: [
            `async (base) => { const img = new Image(); img.src = base + "/blocked.png"; await new Promise((r) => (img.onerror = img.onload = r)); }`,
            true,
            env.TARGET_URL,
          ],
        });
        return { recorded, refused };
      } finally {
        await host.close();
        await session.endInvocation(true);
      }
    });
    expect(refused).toBe(`page.goto(${env.TARGET_URL}/blocked) refused before it was sent: not an allowed target of this test`);
    const requests = recorded.filter((s) => s.type === "rate" && s.name === "browser_http_req_failed") as Array<
      Sample & { passed: boolean; tags: Record<string, string> }
    >;
    expect(requests.map((s) => [new URL(s.tags.url!).pathname, s.passed])).toEqual([
      ["/app/sign-in", false],
      ["/blocked.png", true],
    ]);
    const durations = recorded.filter((s) => s.type === "trend" && s.name === "browser_http_req_duration");
    // Only the request that got an answer has a duration.
    expect(durations).toHaveLength(1);
    const lcp = recorded.find((s) => s.type === "trend" && s.name === "browser_web_vital_lcp") as (Sample & { tags: Record<string, string> }) | undefined;
    expect(lcp?.tags).toEqual({ url: `${env.TARGET_URL}/app/sign-in`, rating: "good" });
  });
});
