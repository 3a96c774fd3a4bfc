/**
 * k6/browser's page and what hangs off it, as proxies in the script's isolate: the page, its
 * locators and frame locators, element handles (page.$), keyboard and mouse, a navigation's
 * response, a console message and a page event (browser-objects.ts). Each call crosses to
 * the shard (browser-proxy.ts), which replays it on Playwright's objects
 * (workers/shard/browser-host.ts).
 *
 * A locator is the list of steps that made it from its page (`getByRole("list")`, then
 * `.locator("li", { hasText })`, then `.first()`): k6 builds locators without waiting, so
 * nothing crosses until an action or a read, which carries the steps.
 */
import {
  BROWSER_METHODS,
  type BrowserTarget,
  COLLECTED_PAGE_EVENTS,
  type CollectedPageEvent,
  type FunctionValue,
  type LocatorStep,
  type MetricTagRule,
  type PageEvent,
  type RequestData,
  type ResponseData,
} from "../browser-wire.ts";
import { DEFAULT_TIMEOUT_MS, waitForEventWith, waitOptions } from "./browser-events.ts";
import { consoleMessage, pageEventObject, requestOf, responseOf } from "./browser-objects.ts";
import { type Call, crossing, guarded, LOCATOR_OF, type Methods, methods, type PageTools } from "./browser-proxy.ts";
import { pageRoutes } from "./browser-routes.ts";

/** The steps that find by what the user sees: a page, a locator and a frame locator each have them. */
const FINDERS = ["getByRole", "getByText", "getByLabel", "getByPlaceholder", "getByAltText", "getByTitle", "getByTestId"] as const;

export function pageProxy(tools: PageTools, handle: number, firstUrl: string, context: number | undefined): Methods {
  const { call } = tools;
  const target: BrowserTarget = { kind: "page", page: handle };
  let url = firstUrl;
  let closed = false;
  /** page.setDefaultTimeout's, for the waits that run here (a predicate's). */
  let defaultTimeoutMs = DEFAULT_TIMEOUT_MS;
  const routes = pageRoutes(tools, handle, () => closed);
  /** A call that may move the page: its URL comes back with the answer. */
  const track = async (what: string, method: string, args: readonly unknown[]) => {
    const answer = await call(what, target, method, args);
    if (answer.url !== undefined) url = answer.url;
    return answer.value;
  };
  const navigation =
    (method: string) =>
    async (...args: unknown[]) => {
      const response = (await track(`page.${method}()`, method, args)) as ResponseData | null;
      return response && responseOf(response);
    };
  const element = (value: unknown) => (typeof value === "number" ? elementProxy(call, handle, value) : null);
  const page: Methods = {};
  for (const method of BROWSER_METHODS.page) page[method] = (...args: unknown[]) => track(`page.${method}()`, method, args);
  const events = pageEvents(
    tools,
    handle,
    track,
    () => proxy,
    () => defaultTimeoutMs,
  );
  // page.route and page.unroute (browser-routes.ts).
  Object.assign(page, finders(tools.call, handle, []), events, routes, {
    url: () => url,
    isClosed: () => closed,
    frameLocator: (selector: string) => frameLocatorProxy(call, handle, [{ by: "frameLocator", args: [String(selector)] }]),
    keyboard: guarded("keyboard", methods(call, "keyboard", { kind: "keyboard", page: handle })),
    mouse: guarded("mouse", methods(call, "mouse", { kind: "mouse", page: handle })),
    touchscreen: guarded("touchscreen", methods(call, "touchscreen", { kind: "touchscreen", page: handle })),
    setDefaultTimeout(timeout: unknown) {
      if (typeof timeout === "number" && timeout >= 0) defaultTimeoutMs = timeout;
      return track("page.setDefaultTimeout()", "setDefaultTimeout", [timeout]);
    },
    context() {
      if (context === undefined) throw new Error("page.context(): this page's context is not known");
      return tools.context(context);
    },
    goto: navigation("goto"),
    reload: navigation("reload"),
    waitForNavigation: navigation("waitForNavigation"),
    // The function's source crosses, not the function: it runs in the page, as in k6, with every argument after it.
    evaluate: (fn: unknown, ...args: unknown[]) => track("page.evaluate()", "evaluate", [String(fn), typeof fn === "function", ...args]),
    // k6 returns the image; the shard keeps it in R2 too, under the run (named by options.path or the VU's iteration).
    screenshot: (options?: { type?: unknown }) => track("page.screenshot()", "screenshot", [options, tools.screenshotName(options?.type)]),
    waitForSelector: async (selector: string, options?: unknown) =>
      element(await track("page.waitForSelector()", "waitForSelector", [String(selector), options])),
    // As evaluate: the function's source crosses, with k6's options and every argument after them.
    waitForFunction: async (fn: unknown, options?: unknown, ...args: unknown[]) =>
      functionHandle(
        call,
        handle,
        (await track("page.waitForFunction()", "waitForFunction", [String(fn), typeof fn === "function", options ?? null, ...args])) as FunctionValue,
      ),
    waitForResponse: async (url: unknown, options?: unknown) =>
      responseOf((await track("page.waitForResponse()", "waitForResponse", [waitedUrl("waitForResponse", url), options])) as ResponseData),
    waitForRequest: async (url: unknown, options?: unknown) =>
      requestOf((await track("page.waitForRequest()", "waitForRequest", [waitedUrl("waitForRequest", url), options])) as RequestData),
    $: async (selector: string) => element(await track("page.$()", "$", [String(selector)])),
    $$: async (selector: string) => ((await track("page.$$()", "$$", [String(selector)])) as number[]).map(element),
    waitForTimeout: (ms: number) => tools.sleep(Math.max(0, Number(ms) || 0)),
    async close() {
      await track("page.close()", "close", []);
      closed = true;
    },
  });
  const proxy = guarded("page", page);
  return proxy;
}

/**
 * A page's events: page.on(event, handler) and waitForEvent(event, predicate or options), as
 * k6 maps them (page_mapping.go mapPageOn, waitForEvent). `track` makes a call of the page,
 * `page` is its proxy, `timeoutMs` its default timeout now.
 */
function pageEvents(
  tools: PageTools,
  handle: number,
  track: (what: string, method: string, args: readonly unknown[]) => Promise<unknown>,
  page: () => Methods,
  timeoutMs: () => number,
): Methods {
  const target: BrowserTarget = { kind: "page", page: handle };
  return {
    async waitForEvent(event: unknown, options?: unknown) {
      const what = `page.waitForEvent("${String(event)}")`;
      const parsed = waitOptions(what, options, timeoutMs());
      // With a predicate the events cross and it runs here (browser-events.ts); without one the shard waits for the first.
      if (parsed.predicate) {
        if (!(COLLECTED_PAGE_EVENTS as readonly unknown[]).includes(event))
          throw new Error(`${what}: k6 waits for ${COLLECTED_PAGE_EVENTS.map((e) => `"${e}"`).join(", ")}`);
        const key = { page: handle, event: event as CollectedPageEvent };
        return waitForEventWith(tools, { what, target, key, make: (e) => pageEventObject(e, page()), options: parsed });
      }
      const data = await track("page.waitForEvent()", "waitForEvent", [String(event), options]);
      if (event === "console") return consoleMessage({ page: handle, event: "console", ...(data as { type: string; text: string; args: unknown[] }) }, page());
      return event === "response" ? responseOf(data as ResponseData) : requestOf(data as RequestData);
    },
    on(event: unknown, handler: unknown) {
      if (event !== "metric" && !(COLLECTED_PAGE_EVENTS as readonly unknown[]).includes(event))
        throw new Error(`k6/browser's page.on("${String(event)}"): k6 has the page events "metric", ${COLLECTED_PAGE_EVENTS.map((e) => `"${e}"`).join(", ")}`);
      if (typeof handler !== "function") throw new Error(`page.on("${String(event)}", handler): the handler must be a function`);
      if (event === "metric") tools.tagMetrics(handle, metricTagRules(handler as (event: unknown) => unknown));
      else tools.listen({ page: handle, event: event as CollectedPageEvent }, (e) => handler(pageEventObject(e as PageEvent, page())));
    },
  };
}

/** page.locator, page.getBy…: each starts a locator (or adds a step to `steps`). */
function finders(call: Call, page: number, steps: readonly LocatorStep[]): Methods {
  const out: Methods = { locator: (selector: string, options?: unknown) => locatorProxy(call, page, [...steps, step("locator", [String(selector), options])]) };
  for (const by of FINDERS) out[by] = (...args: unknown[]) => locatorProxy(call, page, [...steps, step(by, args)]);
  return out;
}

/** A step with its arguments as they cross (RegExps as their source and flags), checked when it is made, as k6 does. */
const step = (by: LocatorStep["by"], args: readonly unknown[]): LocatorStep => ({ by, args: crossing(`locator.${by}()`, args) });

function locatorProxy(call: Call, page: number, steps: readonly LocatorStep[]): Methods {
  const target: BrowserTarget = { kind: "locator", page, steps };
  const narrow =
    (by: LocatorStep["by"]) =>
    (...args: unknown[]) =>
      locatorProxy(call, page, [...steps, step(by, args)]);
  const locator: Methods = {
    ...methods(call, "locator", target),
    ...finders(call, page, steps),
    [LOCATOR_OF]: steps,
    filter: narrow("filter"),
    first: narrow("first"),
    last: narrow("last"),
    nth: (index: number) => locatorProxy(call, page, [...steps, step("nth", [Math.trunc(Number(index))])]),
    frameLocator: (selector: string) => frameLocatorProxy(call, page, [...steps, step("frameLocator", [String(selector)])]),
    contentFrame: () => frameLocatorProxy(call, page, [...steps, step("contentFrame", [])]),
    /** Playwright's locator.all(): a locator of each match now, by its index. */
    async all() {
      const count = Number((await call("locator.all()", target, "count", [])).value);
      return Array.from({ length: count }, (_, i) => locatorProxy(call, page, [...steps, step("nth", [i])]));
    },
  };
  return guarded("locator", locator);
}

/** k6's FrameLocator: what finds inside the frame; it has no actions of its own. */
function frameLocatorProxy(call: Call, page: number, steps: readonly LocatorStep[]): Methods {
  const frameStep =
    (by: "first" | "last" | "nth") =>
    (...args: unknown[]) =>
      frameLocatorProxy(call, page, [...steps, step(by, args)]);
  return guarded("frameLocator", {
    ...finders(call, page, steps),
    frameLocator: (selector: string) => frameLocatorProxy(call, page, [...steps, step("frameLocator", [String(selector)])]),
    first: frameStep("first"),
    last: frameStep("last"),
    nth: frameStep("nth"),
  });
}

/** k6's ElementHandle (page.$): the shard keeps the element until its page closes or dispose(). */
function elementProxy(call: Call, page: number, handle: number): Methods {
  const target: BrowserTarget = { kind: "element", page, element: handle };
  const element = (value: unknown) => (typeof value === "number" ? elementProxy(call, page, value) : null);
  return guarded("elementHandle", {
    ...methods(call, "element", target),
    $: async (selector: string) => element((await call("elementHandle.$()", target, "$", [String(selector)])).value),
    $$: async (selector: string) => ((await call("elementHandle.$$()", target, "$$", [String(selector)])).value as number[]).map(element),
  });
}

/** waitForResponse/waitForRequest's URL: k6 takes a string (the URL itself) or a RegExp. */
function waitedUrl(method: string, url: unknown): unknown {
  if (typeof url === "string" || url instanceof RegExp) return url;
  throw new Error(`k6/browser's page.${method}(): the URL to wait for must be a string or a RegExp, not ${typeof url}`);
}

/**
 * waitForFunction's handle, as k6 answers it: an element handle when the function returned an
 * element (kept by the shard, as page.$'s), else a JSHandle of the value that crossed
 * (jsonValue()), with no page object to hold.
 */
function functionHandle(call: Call, page: number, result: FunctionValue): Methods {
  if (result.kind === "element") return elementProxy(call, page, result.element);
  return guarded("jsHandle", { jsonValue: async () => result.value, asElement: () => null, dispose: async () => {} });
}

/** The HTTP methods k6's metric.tag() accepts in a match. */
const METHODS = new Set(["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "CONNECT", "TRACE"]);

/**
 * The metric.tag() rules a page.on("metric") handler gives, by calling it once with an event
 * that records them. A rule k6 would refuse (an empty name, an unknown method) is left out
 * with a warning, as k6 logs it and tags nothing.
 */
function metricTagRules(handler: (event: unknown) => unknown): MetricTagRule[] {
  const rules: MetricTagRule[] = [];
  const tag = (value: unknown) => {
    const { name, matches } = (value ?? {}) as { name?: unknown; matches?: unknown };
    const trimmed = String(name ?? "").trim();
    const list = Array.isArray(matches) ? (matches as { url?: unknown; method?: unknown }[]) : [];
    const bad = list.find((m) => m.method !== undefined && !METHODS.has(String(m.method).trim().toUpperCase()));
    if (!trimmed || bad) {
      console.warn(
        `page.on("metric"): metric.tag() ignored: ${!trimmed ? `name ${JSON.stringify(name)} is invalid` : `method ${JSON.stringify(bad?.method)} is invalid`}`,
      );
      return;
    }
    rules.push({
      name: trimmed,
      matches: list.map((m) => ({
        url: m.url instanceof RegExp ? { $regexp: m.url.source, flags: m.url.flags } : String(m.url),
        ...(m.method === undefined || String(m.method).trim() === "" ? {} : { method: String(m.method).trim().toUpperCase() }),
      })),
    });
  };
  handler(guarded("metricEvent", { tag }));
  return rules;
}
