/**
 * k6/browser's waits on what a page does (workers/shard/browser-waits.ts), through the shard's
 * browser host on the local Browser Run binding's Chromium: each started beside the click
 * that brings what it waits for, as k6's scripts start them (Promise.all), and answered with
 * the data the script's objects are made of. The page's requests go to the local target.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { BrowserAnswer, BrowserTarget } from "../../k6-compat/runtime/browser-wire.ts";
import { BrowserHost } from "../../workers/shard/browser-host.ts";
import { ShardBrowser } from "../../workers/shard/browser-session.ts";

type Call = (target: BrowserTarget, method: string, args?: readonly unknown[]) => Promise<BrowserAnswer>;

/** A page whose button fetches `/api/items?size=5` from the target, logs, and then shows a list, 300 ms later. */
const PAGE = (base: string) => `<button id="load" onclick="
  fetch('${base}/api/items?size=5', { method: 'POST', body: 'new item' }).then(() => {
    console.warn('loaded', 3);
    setTimeout(() => { document.body.insertAdjacentHTML('beforeend', '<ul><li>a</li><li>b</li><li>c</li></ul>'); }, 300);
  });
">Load</button>`;

async function withPage<T>(body: (call: Call, page: BrowserTarget) => Promise<T>): Promise<T> {
  const stub = env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`browser-waits-${crypto.randomUUID()}`));
  return runInDurableObject(stub, async (_instance, state) => {
    const session = new ShardBrowser(env.BROWSER!, state.storage.kv);
    const host = new BrowserHost(
      { newContext: () => session.newContext(), identity: () => session.identity(), saveScreenshot: async () => {} },
      () => null,
      () => {},
    );
    const call: Call = (target, method, args = []) => host.call({ target, method, args });
    try {
      const { value } = await call({ kind: "browser" }, "newPage");
      const page: BrowserTarget = { kind: "page", page: value as number };
      // A page of the target's origin, so its fetch is same-origin.
      await call(page, "goto", [`${env.TARGET_URL}/blank?size=0`]);
      await call(page, "setContent", [PAGE(env.TARGET_URL)]);
      return await body(call, page);
    } finally {
      await host.close();
      await session.endInvocation(true);
    }
  });
}

const click = (call: Call, page: BrowserTarget) => call(page, "click", ["#load"]);

describe("the browser host's waits", () => {
  it("waits for the response, the request and the console message a click brings, each started beside it", async () => {
    const [response, request, message] = await withPage(async (call, page) => {
      const [response] = await Promise.all([call(page, "waitForResponse", [{ $regexp: "/api/items\\?size=5$", flags: "" }]), click(call, page)]);
      const [request] = await Promise.all([call(page, "waitForRequest", [`${env.TARGET_URL}/api/items?size=5`, { timeout: 5000 }]), click(call, page)]);
      const [message] = await Promise.all([call(page, "waitForEvent", ["console"]), click(call, page)]);
      return [response.value, request.value, message.value];
    });
    expect(response).toMatchObject({ status: 200, url: `${env.TARGET_URL}/api/items?size=5`, headers: { "content-type": "text/plain" } });
    expect(request).toMatchObject({ method: "POST", postData: "new item", resourceType: "fetch", isNavigationRequest: false });
    expect(message).toEqual({ type: "warning", text: "loaded 3", args: ["loaded", 3] });
  }, 60_000);

  it("polls a function with its arguments until it is truthy, answering its value; a wait that never ends times out naming what it waited for", async () => {
    const answers = await withPage(async (call, page) => {
      const [listed] = await Promise.all([
        call(page, "waitForFunction", [
          "(min) => document.querySelectorAll('li').length >= min && [...document.querySelectorAll('li')].map((li) => li.textContent)",
          true,
          { polling: "mutation" },
          3,
        ]),
        click(call, page),
      ]);
      const expression = await call(page, "waitForFunction", ["document.querySelectorAll('li').length", false, { polling: 50 }]);
      const timedOut = await call(page, "waitForResponse", ["http://never.invalid/", { timeout: 300 }]).catch((e: Error) => e.message);
      const badPolling = await call(page, "waitForFunction", ["true", false, { polling: "often" }]).catch((e: Error) => e.message);
      return { listed: listed.value, expression: expression.value, timedOut, badPolling };
    });
    expect(answers.listed).toEqual({ kind: "value", value: ["a", "b", "c"] });
    expect(answers.expression).toEqual({ kind: "value", value: 3 });
    expect(answers.timedOut).toMatch(/Timeout 300ms exceeded/);
    expect(answers.badPolling).toBe('page.waitForFunction(): polling must be "raf", "mutation" or a number of milliseconds above 0, not "often"');
  }, 60_000);

  it("answers a function that returns an element with an element handle the script's calls reach, as k6's waitForFunction example reads it", async () => {
    const read = await withPage(async (call, page) => {
      await call(page, "evaluate", ["() => setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<h1>Hello</h1>'), 200)", true]);
      const { value } = await call(page, "waitForFunction", ["document.querySelector('h1')", false, { polling: "mutation", timeout: 5000 }]);
      const { element } = value as { kind: "element"; element: number };
      const innerHTML = await call({ kind: "element", page: (page as { page: number }).page, element }, "innerHTML");
      return { value, innerHTML: innerHTML.value };
    });
    expect(read).toEqual({ value: { kind: "element", element: expect.any(Number) }, innerHTML: "Hello" });
  }, 60_000);
});
