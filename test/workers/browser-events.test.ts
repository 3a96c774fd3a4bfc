/**
 * k6/browser's page events, page.route, the touchscreen and throttling (issue 52) through the
 * shard's browser host on the local Browser Run binding's Chromium: what the VU's side
 * (k6-compat/runtime/vu-modules/browser-events.test.ts) relies on the shard for. A route's
 * held request crosses with a poll's answer, and the decision the script's handler sends back
 * is what the page's fetch gets. The page's requests go to the local target.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type BrowserAnswer, type BrowserCall, type BrowserTarget, EVENT_POLL, type PageEvent } from "../../k6-compat/runtime/browser-wire.ts";
import { BrowserHost } from "../../workers/shard/browser-host.ts";
import { ShardBrowser } from "../../workers/shard/browser-session.ts";

type Call = (target: BrowserTarget, method: string, args?: readonly unknown[], listen?: BrowserCall["listen"]) => Promise<BrowserAnswer>;

/** Fetches `path` of the target in the page, answering its status and body ("failed: …" when it fails). */
const fetchIn = (path: string) =>
  `fetch('${env.TARGET_URL}${path}', { method: 'POST', body: 'b' }).then(async (r) => r.status + ' ' + await r.text(), (e) => 'failed: ' + e.message)`;

type PageTarget = { readonly kind: "page"; readonly page: number };

/** `refusal`: the deployment's allowed targets, as the host is given them (none refused by default). */
async function withPage<T>(body: (call: Call, page: PageTarget, context: number) => Promise<T>, refusal: (url: URL) => string | null = () => null): Promise<T> {
  const stub = env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`browser-events-${crypto.randomUUID()}`));
  return runInDurableObject(stub, async (_instance, state) => {
    const session = new ShardBrowser(env.BROWSER!, state.storage.kv);
    const host = new BrowserHost(
      { newContext: () => session.newContext(), identity: () => session.identity(), saveScreenshot: async () => {} },
      refusal,
      () => {},
    );
    const call: Call = (target, method, args = [], listen) => host.call({ target, method, args, ...(listen ? { listen } : {}) });
    try {
      const { value, context } = await call({ kind: "browser" }, "newPage");
      const page = { kind: "page", page: value as number } as const;
      // A page of the target's origin, so its fetches are same-origin.
      await call(page, "goto", [`${env.TARGET_URL}/blank?size=0`]);
      return await body(call, page, context as number);
    } finally {
      await host.close();
      await session.endInvocation(true);
    }
  });
}

/**
 * The page's fetch of `path`, with polls beside it until one's answer brings the held request
 * (the page's request events may come first), decided by `decide`.
 */
async function routed(call: Call, page: PageTarget, path: string, decide: (route: number) => Promise<unknown>) {
  const fetched = call(page, "evaluate", [fetchIn(path), false]);
  const events: PageEvent[] = [];
  let held: Extract<PageEvent, { event: "route" }> | undefined;
  while (!held) {
    const polled = await call(page, EVENT_POLL, [1, 5000]);
    if (polled.value !== "events") throw new Error(`no held request for ${path}: the poll answered ${String(polled.value)}`);
    events.push(...(polled.events ?? []));
    held = events.find((e): e is Extract<PageEvent, { event: "route" }> => e.event === "route");
  }
  await decide(held.route);
  const answer = await fetched;
  return { held, fetched: answer.value, events: [...events, ...(answer.events ?? [])] };
}

describe("the browser host's page events and routes", () => {
  it("holds a routed request for the script, then continues, fulfills or aborts it as it decides; the request events cross with their data", async () => {
    const seen = await withPage(async (call, page) => {
      const listen = (["request", "response", "requestfinished", "requestfailed"] as const).map((event) => ({ page: page.page, event }));
      await call(page, "route", [1, { $regexp: "/api/items", flags: "" }], listen);
      const route = (handle: number) => ({ kind: "route", page: page.page, route: handle }) as const;
      const continued = await routed(call, page, "/api/items?size=3", (r) => call(route(r), "continue", [{ postData: "changed" }]));
      const fulfilled = await routed(call, page, "/api/items?size=4", (r) => call(route(r), "fulfill", [{ status: 404, body: "nope" }]));
      const aborted = await routed(call, page, "/api/items?size=5", (r) => call(route(r), "abort", ["failed"]));
      const twice = await call(route(continued.held.route), "abort", ["failed"]).catch((e: Error) => e.message);
      const events = [continued, fulfilled, aborted].flatMap((r) => r.events);
      events.push(...((await call(page, "title")).events ?? []));
      return { continued, fulfilled, aborted, twice, events };
    });
    expect(seen.continued.held?.request).toMatchObject({ url: `${env.TARGET_URL}/api/items?size=3`, method: "POST", postData: "b", resourceType: "fetch" });
    expect([seen.continued.fetched, seen.fulfilled.fetched, seen.aborted.fetched]).toEqual(["200 xxx", "404 nope", "failed: Failed to fetch"]);
    expect(seen.twice).toMatch(/already handled/);
    const finished = seen.events.find((e) => e.event === "requestfinished" && e.request.url.endsWith("size=3"));
    expect(finished).toMatchObject({ request: { method: "POST", response: { status: 200 } } });
    const failed = seen.events.find((e) => e.event === "requestfailed");
    expect(failed).toMatchObject({ request: { url: `${env.TARGET_URL}/api/items?size=5`, failure: { errorText: "net::ERR_FAILED" } } });
    const response = seen.events.find((e) => e.event === "response" && e.response.url.endsWith("size=4"));
    expect(response).toMatchObject({ response: { status: 404, request: { method: "POST" } } });
  }, 60_000);

  it("aborts a routed request the script continues to a URL off the allowed targets, naming why", async () => {
    const seen = await withPage(
      async (call, page) => {
        await call(page, "route", [1, ""]);
        let refused = "";
        const routedTo = await routed(call, page, "/api/items?size=2", (r) =>
          call({ kind: "route", page: page.page, route: r }, "continue", [{ url: `${env.TARGET_URL}/forbidden` }]).catch((e: Error) => {
            refused = e.message;
          }),
        );
        return { refused, fetched: routedTo.fetched };
      },
      (url) => (url.pathname === "/forbidden" ? "not an allowed target" : null),
    );
    expect(seen.refused).toBe(`route.continue(): ${env.TARGET_URL}/forbidden refused: not an allowed target`);
    expect(seen.fetched).toBe("failed: Failed to fetch");
  }, 60_000);

  it("taps through the touchscreen, throttles the network and the CPU by CDP, and names a bad rate; a poll with nothing to bring times out", async () => {
    const seen = await withPage(async (call, page) => {
      await call(page, "setContent", [
        '<button style="position:absolute;left:10px;top:10px;width:100px;height:40px" onclick="document.title = \'tapped\'">Tap</button>',
      ]);
      await call({ kind: "touchscreen", page: page.page }, "tap", [60, 30]);
      const title = (await call(page, "title")).value;
      await call(page, "throttleNetwork", [{ latency: 400, download: -1, upload: -1 }]);
      const elapsed = await call(page, "evaluate", [
        `(async () => { const t = performance.now(); await ${fetchIn("/api/items?size=1")}; return performance.now() - t; })()`,
        false,
      ]);
      await call(page, "throttleCPU", [{ rate: 4 }]);
      const badRate = await call(page, "throttleCPU", [{ rate: 0.5 }]).catch((e: Error) => e.message);
      const poll = await call(page, EVENT_POLL, [9, 50]);
      return { title, elapsedMs: elapsed.value as number, badRate, poll: poll.value };
    });
    expect(seen.title).toBe("tapped");
    expect(seen.elapsedMs).toBeGreaterThanOrEqual(400);
    expect(seen.badRate).toMatch(/^page\.throttleCPU\(\): rate must be a slowdown factor of 1 or more/);
    expect(seen.poll).toBe("timeout");
  }, 60_000);

  it("tells a listened context's new pages, by the handles the script's calls name", async () => {
    const seen = await withPage(async (call, _page, context) => {
      const opened = await call({ kind: "context", context }, "newPage", [], [{ context, event: "page" }]);
      return { context, page: opened.value, events: opened.events };
    });
    expect(seen.events).toEqual([{ context: seen.context, event: "page", page: seen.page, url: "about:blank" }]);
  }, 60_000);
});
