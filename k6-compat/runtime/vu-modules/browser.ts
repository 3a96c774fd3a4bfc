/**
 * k6/browser for one VU, made when the script first imports it: only then are k6's browser
 * metrics declared, so the summary shows them only for browser scripts.
 *
 * The script's isolate has no browser and no network: its browser, contexts, pages, locators
 * and keyboard are proxies whose calls cross to the shard (the host's `browser` method,
 * runtime/browser-wire.ts), which holds the Playwright objects (workers/shard/browser-host.ts).
 * Every call returns a promise, as k6's do; what k6 answers at once (page.url(),
 * page.locator(), isClosed()) is answered here from what the calls brought back.
 *
 * A method k6 has and edgeload does not build yet is refused when the script is bundled
 * (k6-compat/browser-refusals.ts); one reached another way is named when called.
 */
import {
  BROWSER_METHODS,
  BROWSER_METRICS,
  type BrowserAnswer,
  type BrowserHostApi,
  type BrowserTarget,
  UNBUILT_BROWSER_CALLS,
  UNBUILT_PROPERTIES,
} from "../browser-wire.ts";
import type { IterationHost } from "../wire.ts";
import type { VuScope } from "./context.ts";

type Call = (what: string, target: BrowserTarget, method: string, args: readonly unknown[]) => Promise<BrowserAnswer>;
type Methods = Record<string, unknown>;

export function createBrowserModule(scope: VuScope): { browser: Methods } {
  const { vu, host, drain } = scope;
  for (const [metric, type] of Object.entries(BROWSER_METRICS)) vu.declare?.(metric, type, type === "trend");
  const call: Call = (what, target, method, args) => {
    const shard = host(what) as IterationHost & Partial<BrowserHostApi>;
    if (!shard.browser) throw new Error(`${what}: this shard cannot drive a browser`);
    return shard.browser(drain(), { target, method, args: crossing(what, args) });
  };
  const sleep = (ms: number) => host("page.waitForTimeout()").sleep(drain(), ms);
  let screenshots = 0;
  const screenshotName = (type: unknown) => `vu${vu.id}-iter${vu.iteration}-${++screenshots}.${type === "jpeg" ? "jpeg" : "png"}`;
  const pages = { call, sleep, screenshotName };

  const browser: Methods = {
    ...methods(call, "browser", { kind: "browser" }),
    async newContext(options?: unknown) {
      const { value } = await call("browser.newContext()", { kind: "browser" }, "newContext", [options]);
      return contextProxy(pages, value as number);
    },
    async newPage(options?: unknown) {
      const { value, url } = await call("browser.newPage()", { kind: "browser" }, "newPage", [options]);
      return pageProxy(pages, value as number, url ?? "about:blank");
    },
    isConnected: () => true,
  };
  return { browser: guarded("browser", browser) };
}

interface PageTools {
  readonly call: Call;
  readonly sleep: (ms: number) => Promise<void>;
  readonly screenshotName: (type: unknown) => string;
}

function contextProxy(tools: PageTools, handle: number): Methods {
  const target: BrowserTarget = { kind: "context", context: handle };
  return guarded("context", {
    ...methods(tools.call, "context", target),
    async newPage() {
      const { value, url } = await tools.call("context.newPage()", target, "newPage", []);
      return pageProxy(tools, value as number, url ?? "about:blank");
    },
  });
}

function pageProxy(tools: PageTools, handle: number, firstUrl: string): Methods {
  const { call } = tools;
  const target: BrowserTarget = { kind: "page", page: handle };
  let url = firstUrl;
  let closed = false;
  /** A call that may move the page: its URL comes back with the answer. */
  const track = async (what: string, method: string, args: readonly unknown[]) => {
    const answer = await call(what, target, method, args);
    if (answer.url !== undefined) url = answer.url;
    return answer.value;
  };
  const page: Methods = {};
  for (const method of BROWSER_METHODS.page) page[method] = (...args: unknown[]) => track(`page.${method}()`, method, args);
  Object.assign(page, {
    url: () => url,
    isClosed: () => closed,
    locator: (selector: string) => locatorProxy(call, handle, String(selector)),
    keyboard: guarded("keyboard", methods(call, "keyboard", { kind: "keyboard", page: handle })),
    async goto(to: string, options?: unknown) {
      const response = (await track("page.goto()", "goto", [String(to), options])) as ResponseData | null;
      return response && responseOf(response);
    },
    // The function's source crosses, not the function: it runs in the page, as in k6.
    evaluate: (fn: unknown, arg?: unknown) => track("page.evaluate()", "evaluate", [String(fn), typeof fn === "function", arg]),
    // k6 returns the image; the shard keeps it in R2 too, under the run (named by options.path or the VU's iteration).
    screenshot: (options?: { type?: unknown }) => track("page.screenshot()", "screenshot", [options, tools.screenshotName(options?.type)]),
    async waitForSelector(selector: string, options?: unknown) {
      const found = await track("page.waitForSelector()", "waitForSelector", [String(selector), options]);
      // k6 answers an ElementHandle: here a locator of its selector's first match.
      return found ? locatorProxy(call, handle, `${selector} >> nth=0`) : null;
    },
    waitForTimeout: (ms: number) => tools.sleep(Math.max(0, Number(ms) || 0)),
    on(event: unknown) {
      throw new Error(`k6/browser's page.on("${String(event)}"): page events are not built yet`);
    },
    async close() {
      await track("page.close()", "close", []);
      closed = true;
    },
  });
  return guarded("page", page);
}

function locatorProxy(call: Call, page: number, selector: string): Methods {
  const target: BrowserTarget = { kind: "locator", page, selector };
  return guarded("locator", {
    ...methods(call, "locator", target),
    locator: (inner: string) => locatorProxy(call, page, `${selector} >> ${inner}`),
    first: () => locatorProxy(call, page, `${selector} >> nth=0`),
    last: () => locatorProxy(call, page, `${selector} >> nth=-1`),
    nth: (index: number) => locatorProxy(call, page, `${selector} >> nth=${Math.trunc(Number(index))}`),
  });
}

/** What page.goto() brings back of the main response. */
interface ResponseData {
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  readonly headers: Record<string, string>;
}

/** k6's Response, as far as its data crossed: status(), ok(), url(), headers(). */
function responseOf(data: ResponseData): Methods {
  return guarded("response", {
    status: () => data.status,
    statusText: () => data.statusText,
    ok: () => data.status >= 200 && data.status <= 299,
    url: () => data.url,
    headers: () => ({ ...data.headers }),
    headerValue: (name: string) => data.headers[String(name).toLowerCase()] ?? null,
  });
}

/** The plain methods of `kind`: each one call to the shard, answered with its value. */
function methods(call: Call, kind: BrowserTarget["kind"], target: BrowserTarget): Methods {
  const out: Methods = {};
  for (const method of BROWSER_METHODS[kind]) out[method] = async (...args: unknown[]) => (await call(`${kind}.${method}()`, target, method, args)).value;
  return out;
}

/** The arguments as they cross: trailing undefineds dropped, functions refused (only evaluate's source crosses). */
function crossing(what: string, args: readonly unknown[]): unknown[] {
  const out = [...args];
  while (out.length && out[out.length - 1] === undefined) out.pop();
  for (const a of out) if (typeof a === "function") throw new Error(`${what}: a function cannot cross to the browser here (page.evaluate takes one)`);
  return out;
}

/** `object`, naming the k6 methods not built when the script reaches one (await's `then` and the rest stay undefined). */
function guarded(kind: string, object: Methods): Methods {
  return new Proxy(object, {
    get(target, property, receiver) {
      if (typeof property === "string" && !(property in target)) {
        const reason = UNBUILT_BROWSER_CALLS[property] ?? UNBUILT_PROPERTIES[property];
        if (Object.hasOwn(UNBUILT_BROWSER_CALLS, property) || Object.hasOwn(UNBUILT_PROPERTIES, property))
          throw new Error(`k6/browser's ${kind}.${property}: ${reason}`);
      }
      return Reflect.get(target, property, receiver);
    },
  });
}
