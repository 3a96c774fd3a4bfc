/**
 * What crosses between a script's isolate and its shard for k6/browser (Workers RPC, plain
 * data). The script's isolate has no bindings and no network, so the shard holds the
 * browser (Browser Run, workers/shard/browser-host.ts) and the script's browser, contexts,
 * pages and locators are proxies (vu-modules/browser.ts) whose calls travel here: an object
 * named by a handle, a method, its arguments.
 *
 * The methods each kind of object answers are listed once, here, for both sides: the VU
 * builds its proxies from them and the shard refuses anything else. What k6 has and this
 * list has not is refused when the script is bundled (k6-compat/browser-refusals.ts).
 */
import type { Sample } from "./wire.ts";

/** The object a call is made on: the VU's browser, or a context, page, locator or keyboard by handle. */
export type BrowserTarget =
  | { readonly kind: "browser" }
  | { readonly kind: "context"; readonly context: number }
  | { readonly kind: "page"; readonly page: number }
  /** `page.locator(selector)`; a chained `locator.locator(inner)` joins them with ` >> `, as Playwright does. */
  | { readonly kind: "locator"; readonly page: number; readonly selector: string }
  | { readonly kind: "keyboard"; readonly page: number };

export interface BrowserCall {
  readonly target: BrowserTarget;
  readonly method: string;
  readonly args: readonly unknown[];
}

export interface BrowserAnswer {
  /** What the call returned (structured-clone data): a handle's number for newContext and newPage. */
  readonly value: unknown;
  /** The page's URL after the call, for page.url(), which k6 answers without waiting. */
  readonly url?: string;
}

/** The shard's side of k6/browser, a method of the iteration's host (workers/shard/script-flow.ts). */
export interface BrowserHostApi {
  /** Applies the samples recorded so far, then makes the call; rejects with the browser's error. */
  browser(samples: readonly Sample[], call: BrowserCall): Promise<BrowserAnswer>;
}

/** What a page (given a selector) and a locator both do to an element. */
const ELEMENT_ACTIONS = [
  "click",
  "fill",
  "type",
  "press",
  "check",
  "uncheck",
  "hover",
  "focus",
  "textContent",
  "innerText",
  "innerHTML",
  "inputValue",
  "getAttribute",
  "isVisible",
  "isHidden",
  "isEnabled",
  "isDisabled",
  "isChecked",
  "isEditable",
  "selectOption",
] as const;

/**
 * What each kind answers. Same names and arguments as Playwright's, which k6's browser
 * module copies: the shard calls them on Playwright's objects as they are. Page's goto,
 * evaluate and screenshot are the shard's own (web vitals, a function's source, R2).
 */
export const BROWSER_METHODS = {
  browser: ["newContext", "newPage"],
  context: ["newPage", "close"],
  // A page answers the element actions for a selector it is given first (Playwright's page.click(selector)).
  page: ["goto", "title", "content", "close", "evaluate", "screenshot", "waitForSelector", ...ELEMENT_ACTIONS, "setContent", "bringToFront"],
  locator: ["dblclick", "clear", "waitFor", ...ELEMENT_ACTIONS],
  keyboard: ["press", "type", "down", "up", "insertText"],
} as const satisfies Record<BrowserTarget["kind"], readonly string[]>;

/** Whether `method` is one `kind` answers. */
export const answers = (kind: BrowserTarget["kind"], method: string): boolean => (BROWSER_METHODS[kind] as readonly string[]).includes(method);

/**
 * k6's browser metrics edgeload records (k6 v1.x internal/js/modules/k6/browser/k6ext/metrics.go):
 * trends in milliseconds, the failure rate by request.
 */
export const BROWSER_METRICS = {
  browser_web_vital_ttfb: "trend",
  browser_web_vital_fcp: "trend",
  browser_web_vital_lcp: "trend",
  browser_http_req_duration: "trend",
  browser_http_req_failed: "rate",
} as const;

/**
 * k6 v1.x browser methods (@types/k6 browser) not built yet, by the reason given. Browser Run
 * gives CDP, so throttling and page events can come; the rest is plain work still to do.
 */
export const UNBUILT_BROWSER_CALLS: Readonly<Record<string, string>> = Object.fromEntries([
  ...[
    "waitForNavigation",
    "waitForURL",
    "waitForLoadState",
    "waitForResponse",
    "waitForRequest",
    "waitForEvent",
    "waitForFunction",
    "frameLocator",
    "getByRole",
    "getByText",
    "getByLabel",
    "getByTestId",
    "getByPlaceholder",
    "getByAltText",
    "getByTitle",
    "setInputFiles",
    "setViewportSize",
    "setExtraHTTPHeaders",
    "emulateMedia",
    "emulateVisionDeficiency",
    "addCookies",
    "clearCookies",
    "grantPermissions",
    "clearPermissions",
    "setGeolocation",
    "setOffline",
    "addInitScript",
    "exposeFunction",
    "evaluateHandle",
    "dispatchEvent",
    "setDefaultTimeout",
    "setDefaultNavigationTimeout",
    "closeContext",
    "unrouteAll",
  ].map((name) => [name, "not built in edgeload's k6/browser yet"]),
  ...["throttleNetwork", "throttleCPU"].map((name) => [name, "throttling needs raw CDP, not built yet"]),
  ...["route", "unroute"].map((name) => [name, "request interception is the shard's (it keeps the browser on the allowed targets), not the script's yet"]),
]);

/** Properties of k6's page that are objects of their own, not built. */
export const UNBUILT_PROPERTIES: Readonly<Record<string, string>> = { mouse: "not built yet", touchscreen: "not built yet" };
