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
 * Page events cross with the answers: a page.on("console") (or "request", "response", …)
 * handler is registered here, the shard is told with the next call to collect that page's
 * events of the kind, and each answer brings those since the last one, which are handed to the
 * handlers before the call resolves. Waits with a predicate and page.route handlers keep a
 * call open for them (browser-events.ts, browser-routes.ts). A
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
  NETWORK_PROFILES,
  type PageEvent,
  type PageListen,
} from "../browser-wire.ts";
import type { IterationHost } from "../wire.ts";
import { type BrowserDevice, browserDevices } from "./browser-devices.ts";
import { DEFAULT_TIMEOUT_MS, waitForEventWith, waitOptions } from "./browser-events.ts";
import { type Call, crossing, guarded, type ListenKey, type Methods, methods, type PageHandler, type PageTools } from "./browser-proxy.ts";
import { pageProxy } from "./browser-page.ts";
import type { VuScope } from "./context.ts";

export function createBrowserModule(scope: VuScope): {
  browser: Methods;
  devices: Record<string, BrowserDevice>;
  networkProfiles: Record<keyof typeof NETWORK_PROFILES, { latency: number; download: number; upload: number }>;
} {
  const { vu, host, drain } = scope;
  /** The shard's browser, as the last newContext/newPage answer told it (the VU's module outlives its iterations). */
  let identity: BrowserIdentity | null = null;
  for (const [metric, type] of Object.entries(BROWSER_METRICS)) vu.declare?.(metric, type, type === "trend" && !BROWSER_UNITLESS.has(metric));
  const state = iterationState();
  const { handlers, pages, untold } = state;
  const call = shardCall(scope, state, (told) => {
    identity = told;
  });
  const sleep = (ms: number) => host("page.waitForTimeout()").sleep(drain(), ms);
  let screenshots = 0;
  let polls = 0;
  const tools: PageTools = {
    call,
    sleep,
    screenshotName: (type) => `vu${vu.id}-iter${vu.iteration}-${++screenshots}.${type === "jpeg" ? "jpeg" : "png"}`,
    listen(listened, handler) {
      const key = keyOf(listened);
      // The shard sends a page's route events as soon as it has routes: it need not be told.
      if (!handlers.has(key) && listened.event !== "route") untold.push(listened as PageListen);
      handlers.set(key, [...(handlers.get(key) ?? []), handler]);
      return () =>
        handlers.set(
          key,
          (handlers.get(key) ?? []).filter((h) => h !== handler),
        );
    },
    tagMetrics(page, rules) {
      if (rules.length) untold.push({ page, event: "metric", rules });
    },
    context: (handle) => contextProxy(tools, handle),
    browser: () => proxy,
    pollId: () => ++polls,
    page(handle, url, context) {
      let page = pages.get(handle);
      if (!page) pages.set(handle, (page = pageProxy(tools, handle, url, context)));
      return page;
    },
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
      return tools.page(value as number, url ?? "about:blank", context);
    },
    isConnected: () => true,
    userAgent: () => known("userAgent").userAgent,
    version: () => known("version").version,
  };
  const proxy = guarded("browser", browser);
  // Each VU its own copy: a script that changes a profile changes only its own.
  return { browser: proxy, devices: browserDevices(), networkProfiles: structuredClone(NETWORK_PROFILES) as never };
}

/** What the VU keeps of its iteration's browser: all of it is gone when the next iteration starts. */
interface IterationState {
  readonly handlers: Map<string, PageHandler[]>;
  /** The proxies of the iteration's pages, by handle: a page a context's waitForEvent gives is the one newPage gave. */
  readonly pages: Map<number, Methods>;
  /** Listens the shard has not been told of yet: they go with the next call, until one is answered. */
  readonly untold: PageListen[];
  /** The iteration the handles are of: the shard numbers its pages anew in each (workers/shard/browser-host.ts). */
  current: { readonly host: IterationHost; readonly iteration: number } | null;
}

const iterationState = (): IterationState => ({ handlers: new Map(), pages: new Map(), untold: [], current: null });

/** The one way a call reaches the shard: with the listens not told yet, its answer's events handed to their handlers. */
function shardCall(scope: VuScope, state: IterationState, identified: (identity: BrowserIdentity) => void): Call {
  const { vu, host, drain } = scope;
  const { handlers, untold } = state;
  return async (what, target, method, args) => {
    const shard = host(what) as IterationHost & Partial<BrowserHostApi>;
    if (!shard.browser) throw new Error(`${what}: this shard cannot drive a browser`);
    if (state.current?.host !== shard || state.current.iteration !== vu.iteration) {
      // A new iteration: the last one's pages, handlers and listens are gone with its contexts.
      state.current = { host: shard, iteration: vu.iteration };
      handlers.clear();
      untold.length = 0;
      state.pages.clear();
    }
    const made = state.current;
    const sent = [...untold];
    const answer = await shard.browser(drain(), { target, method, args: crossing(what, args), ...(sent.length ? { listen: sent } : {}) });
    // Only what this call told: a call answered before it may have told some, a later listen is still untold.
    for (const listen of sent) if (untold.includes(listen)) untold.splice(untold.indexOf(listen), 1);
    if (answer.browser) identified(answer.browser);
    // An answer of a call the last iteration left open (a poll) names that iteration's pages: not dispatched.
    if (made === state.current) for (const event of answer.events ?? []) dispatch(handlers, event);
    return answer;
  };
}

function contextProxy(tools: PageTools, handle: number): Methods {
  const target: BrowserTarget = { kind: "context", context: handle };
  return guarded("context", {
    ...methods(tools.call, "context", target),
    browser: tools.browser,
    async newPage() {
      const { value, url } = await tools.call("context.newPage()", target, "newPage", []);
      return tools.page(value as number, url ?? "about:blank", handle);
    },
    /** k6's context.waitForEvent("page", predicate or { predicate, timeout }): the context's next page its predicate passes. */
    async waitForEvent(event: unknown, options?: unknown) {
      const what = `context.waitForEvent("${String(event)}")`;
      if (event !== "page") throw new Error(`${what}: incorrect event "${String(event)}", "page" is the only event supported`);
      const parsed = waitOptions(what, options, DEFAULT_TIMEOUT_MS);
      const make = (e: PageEvent) => tools.page(e.page, "url" in e ? e.url : "about:blank", handle);
      return waitForEventWith(tools, { what, target, key: { context: handle, event: "page" }, make, options: parsed });
    },
  });
}

/** The handlers' key of what a listen names or an event came from. */
function keyOf(source: ListenKey | PageEvent): string {
  return "context" in source ? `context ${source.context}:page` : `${source.page}:${source.event}`;
}

/**
 * Hands a page's event to its handlers. A handler runs as k6 runs it, apart from the call
 * that brought the event: what it throws or rejects with is logged, not thrown into that call.
 */
function dispatch(handlers: ReadonlyMap<string, readonly PageHandler[]>, event: PageEvent): void {
  for (const handler of handlers.get(keyOf(event)) ?? []) {
    const failed = (error: unknown) => console.error(`page.on("${event.event}") handler: ${error instanceof Error ? error.message : String(error)}`);
    try {
      const result = handler(event);
      if (result instanceof Promise) result.catch(failed);
    } catch (error) {
      failed(error);
    }
  }
}
