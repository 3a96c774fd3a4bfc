/**
 * What k6/browser's proxies share (vu-modules/browser.ts, browser-page.ts): the one way a
 * call reaches the shard, the plain methods of a kind built from the wire's list, and the
 * guard that names a k6 method edgeload has not built when a script reaches it.
 */
import {
  BROWSER_METHODS,
  type BrowserAnswer,
  type BrowserTarget,
  type CollectedPageEvent,
  type MetricTagRule,
  UNBUILT_BROWSER_CALLS,
  UNBUILT_PROPERTIES,
} from "../browser-wire.ts";

/** One call to the shard: `what` names it in errors (`page.click()`). */
export type Call = (what: string, target: BrowserTarget, method: string, args: readonly unknown[]) => Promise<BrowserAnswer>;
export type Methods = Record<string, unknown>;

/** A page event's handler: it is given the event as it crossed (browser-wire.ts PageEvent). */
export type PageHandler = (event: unknown) => unknown;

/**
 * Whose events a handler takes: a page's of one kind (`route`: the requests its page.route
 * handlers decide on), or the pages a context opens.
 */
export type ListenKey = { readonly page: number; readonly event: CollectedPageEvent | "route" } | { readonly context: number; readonly event: "page" };

/** What a page's proxies need of the module: the call, the VU's clock, names and events. */
export interface PageTools {
  readonly call: Call;
  readonly sleep: (ms: number) => Promise<void>;
  /** The R2 name of the VU's next screenshot of `type`. */
  readonly screenshotName: (type: unknown) => string;
  /**
   * Registers a handler of events: the shard starts collecting them with the next call (route
   * events it sends as soon as the page has routes). Returns the handler's removal.
   */
  readonly listen: (key: ListenKey, handler: PageHandler) => () => void;
  /** Sends the tag rules of a page.on("metric") handler with the next call. */
  readonly tagMetrics: (page: number, rules: readonly MetricTagRule[]) => void;
  /** The proxy of a context by handle (page.context()). */
  readonly context: (handle: number) => Methods;
  /** A number for the next event poll, unique in the VU (browser-events.ts). */
  readonly pollId: () => number;
  /** The proxy of a page by handle, one a page: made with its first URL and its context's handle when first named. */
  readonly page: (handle: number, url: string, context: number | undefined) => Methods;
  /** The module's browser (context.browser()). */
  readonly browser: () => Methods;
}

/** The plain methods of `kind`: each one call to the shard, answered with its value. */
export function methods(call: Call, kind: BrowserTarget["kind"], target: BrowserTarget): Methods {
  const out: Methods = {};
  for (const method of BROWSER_METHODS[kind]) out[method] = async (...args: unknown[]) => (await call(`${kind}.${method}()`, target, method, args)).value;
  return out;
}

/** `object`, naming the k6 methods not built when the script reaches one (await's `then` and the rest stay undefined). */
export function guarded(kind: string, object: Methods): Methods {
  return new Proxy(object, {
    get(target, property, receiver) {
      if (typeof property === "string" && !(property in target)) {
        if (Object.hasOwn(UNBUILT_BROWSER_CALLS, property)) throw new Error(`k6/browser's ${kind}.${property}: ${UNBUILT_BROWSER_CALLS[property]}`);
        if (Object.hasOwn(UNBUILT_PROPERTIES, property)) throw new Error(`k6/browser's ${kind}.${property}: ${UNBUILT_PROPERTIES[property]}`);
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

/**
 * The arguments as they cross: trailing undefineds dropped, RegExps as their source and
 * flags (getByText(/Your bet/), filter({ hasNotText: /x/ })), a locator as its steps (on
 * the same page: filter({ has: page.locator("h3") })), functions refused (only
 * evaluate's source crosses, as a string).
 */
export function crossing(what: string, args: readonly unknown[]): unknown[] {
  const out = [...args];
  while (out.length && out[out.length - 1] === undefined) out.pop();
  return out.map((a) => encoded(what, a));
}

/** Where a locator proxy keeps its steps, for a locator given as an argument (filter({ has }), locator.or(…)). */
export const LOCATOR_OF = Symbol("k6/browser locator steps");

function encoded(what: string, value: unknown): unknown {
  const steps = (value as { [LOCATOR_OF]?: unknown } | null)?.[LOCATOR_OF];
  if (steps !== undefined) return { $locator: steps };
  if (typeof value === "function") throw new Error(`${what}: a function cannot cross to the browser here (page.evaluate takes one)`);
  if (value instanceof RegExp) return { $regexp: value.source, flags: value.flags };
  if (Array.isArray(value)) return value.map((v) => encoded(what, v));
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return value;
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encoded(what, v)]));
  return value;
}
