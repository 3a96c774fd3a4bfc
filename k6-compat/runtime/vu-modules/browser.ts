/**
 * k6/browser for one VU, made when the script first imports it: only then are k6's browser
 * metrics declared, so the summary shows them only for browser scripts.
 *
 * The script's isolate has no browser and no network: its browser, contexts, pages, locators,
 * keyboard and mouse are proxies whose calls cross to the shard (the host's `browser` method,
 * runtime/browser-wire.ts), which holds the Playwright objects (workers/shard/browser-host.ts).
 * Every call returns a promise, as k6's do; what k6 answers at once (page.url(),
 * page.locator(), page.context(), isClosed()) is answered here from what the calls brought back
 * (the page's proxies: browser-page.ts).
 *
 * Page events cross with the answers: a page.on("console") handler is registered here, the
 * shard is told with the next call to collect that page's console, and each answer brings the
 * messages since the last one, which are handed to the handlers before the call resolves. A
 * page.on("metric") handler only tags: it is called once, here, with an event that records
 * its metric.tag() rules, and the shard applies them to every metric of the page (k6 calls
 * it for each metric, whose event has nothing else to read: a handler that tags by its own
 * changing state is the one that would differ).
 *
 * A method k6 has and edgeload does not build yet is refused when the script is bundled
 * (k6-compat/browser-refusals.ts); one reached another way is named when called.
 */
import {
  BROWSER_METRICS,
  BROWSER_UNITLESS,
  type BrowserHostApi,
  type BrowserIdentity,
  type BrowserTarget,
  type PageEvent,
  type PageListen,
} from "../browser-wire.ts";
import type { IterationHost } from "../wire.ts";
import { type BrowserDevice, browserDevices } from "./browser-devices.ts";
import { type Call, crossing, guarded, type Methods, methods, type PageHandler, type PageTools } from "./browser-proxy.ts";
import { pageProxy } from "./browser-page.ts";
import type { VuScope } from "./context.ts";

export function createBrowserModule(scope: VuScope): { browser: Methods; devices: Record<string, BrowserDevice> } {
  const { vu, host, drain } = scope;
  /** The shard's browser, as the last newContext/newPage answer told it (the VU's module outlives its iterations). */
  let identity: BrowserIdentity | null = null;
  for (const [metric, type] of Object.entries(BROWSER_METRICS)) vu.declare?.(metric, type, type === "trend" && !BROWSER_UNITLESS.has(metric));
  const handlers = new Map<string, PageHandler[]>();
  /** Listens the shard has not been told of yet: they go with the next call, until one is answered. */
  const untold: PageListen[] = [];
  const call: Call = async (what, target, method, args) => {
    const shard = host(what) as IterationHost & Partial<BrowserHostApi>;
    if (!shard.browser) throw new Error(`${what}: this shard cannot drive a browser`);
    const listen = untold.length ? { listen: [...untold] } : {};
    const answer = await shard.browser(drain(), { target, method, args: crossing(what, args), ...listen });
    untold.splice(0, listen.listen?.length ?? 0);
    if (answer.browser) identity = answer.browser;
    for (const event of answer.events ?? []) dispatch(handlers, event);
    return answer;
  };
  const sleep = (ms: number) => host("page.waitForTimeout()").sleep(drain(), ms);
  let screenshots = 0;
  const tools: PageTools = {
    call,
    sleep,
    screenshotName: (type) => `vu${vu.id}-iter${vu.iteration}-${++screenshots}.${type === "jpeg" ? "jpeg" : "png"}`,
    listen(page, event, handler) {
      const key = `${page}:${event}`;
      if (!handlers.has(key)) untold.push({ page, event });
      handlers.set(key, [...(handlers.get(key) ?? []), handler]);
    },
    tagMetrics(page, rules) {
      if (rules.length) untold.push({ page, event: "metric", rules });
    },
    context: (handle) => contextProxy(tools, handle),
    browser: () => proxy,
  };
  /** k6 answers these at once; the shard tells them with the first context or page of the VU. */
  const known = (what: string): BrowserIdentity => {
    if (identity) return identity;
    throw new Error(
      `k6/browser's browser.${what}(): edgeload's VU learns its browser's ${what === "version" ? "version" : "user agent"} when it opens its first context or page (browser.newContext() or newPage()); call it after one`,
    );
  };

  const browser: Methods = {
    ...methods(call, "browser", { kind: "browser" }),
    async newContext(options?: unknown) {
      const { value } = await call("browser.newContext()", { kind: "browser" }, "newContext", [options]);
      return contextProxy(tools, value as number);
    },
    async newPage(options?: unknown) {
      const { value, url, context } = await call("browser.newPage()", { kind: "browser" }, "newPage", [options]);
      return pageProxy(tools, value as number, url ?? "about:blank", context);
    },
    isConnected: () => true,
    userAgent: () => known("userAgent").userAgent,
    version: () => known("version").version,
  };
  const proxy = guarded("browser", browser);
  return { browser: proxy, devices: browserDevices() };
}

function contextProxy(tools: PageTools, handle: number): Methods {
  const target: BrowserTarget = { kind: "context", context: handle };
  return guarded("context", {
    ...methods(tools.call, "context", target),
    browser: tools.browser,
    async newPage() {
      const { value, url } = await tools.call("context.newPage()", target, "newPage", []);
      return pageProxy(tools, value as number, url ?? "about:blank", handle);
    },
  });
}

/**
 * Hands a page's event to its handlers. A handler runs as k6 runs it, apart from the call
 * that brought the event: what it throws or rejects with is logged, not thrown into that call.
 */
function dispatch(handlers: ReadonlyMap<string, readonly PageHandler[]>, event: PageEvent): void {
  for (const handler of handlers.get(`${event.page}:${event.event}`) ?? []) {
    const failed = (error: unknown) => console.error(`page.on("${event.event}") handler: ${error instanceof Error ? error.message : String(error)}`);
    try {
      const result = handler(event);
      if (result instanceof Promise) result.catch(failed);
    } catch (error) {
      failed(error);
    }
  }
}
