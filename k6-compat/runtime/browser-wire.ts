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

/**
 * One step of a locator, from the page it starts on: a Playwright method that narrows or
 * finds (page.getByRole, locator.filter, frameLocator(…).locator, …) with the script's
 * arguments, a RegExp among them crossing as a CrossingRegExp. k6 copies Playwright's
 * locator API, so the shard replays the steps on Playwright's objects as they are.
 */
export interface LocatorStep {
  readonly by: (typeof LOCATOR_STEPS)[number];
  readonly args: readonly unknown[];
}

/** The steps a locator may take, on a page, a locator or a frame locator (Playwright answers which has which). */
export const LOCATOR_STEPS = [
  "locator",
  "getByRole",
  "getByText",
  "getByLabel",
  "getByPlaceholder",
  "getByAltText",
  "getByTitle",
  "getByTestId",
  "filter",
  "first",
  "last",
  "nth",
  "frameLocator",
  "contentFrame",
] as const;

/** A RegExp as it crosses (structured clone keeps RegExps, Workers RPC need not): its source and flags. */
export interface CrossingRegExp {
  readonly $regexp: string;
  readonly flags: string;
}

/** The object a call is made on: the VU's browser, or a context, page, locator, element, keyboard, mouse, touchscreen or intercepted request by handle. */
export type BrowserTarget =
  | { readonly kind: "browser" }
  | { readonly kind: "context"; readonly context: number }
  | { readonly kind: "page"; readonly page: number }
  | { readonly kind: "locator"; readonly page: number; readonly steps: readonly LocatorStep[] }
  /** An ElementHandle (page.$), kept by the shard until its page closes or the script disposes it. */
  | { readonly kind: "element"; readonly page: number; readonly element: number }
  | { readonly kind: "keyboard"; readonly page: number }
  | { readonly kind: "mouse"; readonly page: number }
  | { readonly kind: "touchscreen"; readonly page: number }
  /** A request a page.route handler holds, until it aborts, continues or fulfills it. */
  | { readonly kind: "route"; readonly page: number; readonly route: number };

export interface BrowserCall {
  readonly target: BrowserTarget;
  readonly method: string;
  readonly args: readonly unknown[];
  /** Page events the script listens to since its last call (page.on), for the shard to collect from now on. */
  readonly listen?: readonly PageListen[];
}

/** The page events whose data the shard collects for the script's handlers and waits (page.on, waitForEvent). */
export const COLLECTED_PAGE_EVENTS = ["console", "request", "response", "requestfinished", "requestfailed"] as const;
export type CollectedPageEvent = (typeof COLLECTED_PAGE_EVENTS)[number];

/**
 * A page event the script listens to: one whose data the shard collects for its handlers
 * (k6's ConsoleMessage, Request, Response), `metric`, whose handlers only tag (metric.tag):
 * the tag rules they gave, which the shard applies to the page's metrics itself
 * (browser-host.ts), or the pages a context opens (context.waitForEvent("page")).
 */
export type PageListen =
  | { readonly page: number; readonly event: CollectedPageEvent }
  | { readonly page: number; readonly event: "metric"; readonly rules: readonly MetricTagRule[] }
  | { readonly context: number; readonly event: "page" };

/**
 * One metric.tag({ name, matches }) of a page.on("metric") handler (k6 v1.x common/page.go
 * MetricEvent.Tag): a browser metric of the page whose URL matches a `url` RegExp (with the
 * request's `method`, when given) gets `name` for its url and name tags.
 */
export interface MetricTagRule {
  readonly name: string;
  readonly matches: readonly { readonly url: CrossingRegExp | string; readonly method?: string }[];
}

/**
 * An event of a page (or a context's new page) as it crosses with an answer: a console message
 * as k6's ConsoleMessage gives it (type(), text(), args()[i].jsonValue()), a request or a
 * response, a request a page.route handler is to decide on (`route`: the handle its calls
 * name, `id`: the script's route), or a page a listened context opened.
 */
export type PageEvent =
  | { readonly page: number; readonly event: "console"; readonly type: string; readonly text: string; readonly args: readonly unknown[] }
  | { readonly page: number; readonly event: "request" | "requestfinished" | "requestfailed"; readonly request: RequestData }
  | { readonly page: number; readonly event: "response"; readonly response: ResponseData }
  | { readonly page: number; readonly event: "route"; readonly route: number; readonly id: number; readonly request: RequestData }
  | { readonly context: number; readonly event: "page"; readonly page: number; readonly url: string };

/** What crosses of a request: k6's Request reads. */
export interface RequestData {
  readonly url: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly postData: string | null;
  readonly resourceType: string;
  readonly isNavigationRequest: boolean;
  /** k6's request.failure(): why it failed (requestfailed), else absent. */
  readonly failure?: { readonly errorText: string } | null;
  /** Its response, for a request that finished (requestfinished): k6's request.response(). */
  readonly response?: ResponseData | null;
}

/** What crosses of a response: k6's Response reads, with its request when a page event brought it. */
export interface ResponseData {
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly request?: RequestData;
}

/**
 * The shard's call that answers when events of listened pages are waiting (or the page closes,
 * or `timeoutMs` passes), for the VU to hand them to a page.route handler or a waitForEvent
 * predicate while the script awaits something else. Not a k6 method: no proxy has it.
 * Arguments: the VU's wait number and its timeout (null: none); answers an EventPoll.
 */
export const EVENT_POLL = "nextEvents";
export type EventPoll = "events" | "timeout" | "closed";

export interface BrowserAnswer {
  /** What the call returned (structured-clone data): a handle's number for newContext, newPage and page.$; a FunctionValue for waitForFunction. */
  readonly value: unknown;
  /** The page's URL after the call, for page.url(), which k6 answers without waiting. */
  readonly url?: string;
  /** A new page's context (page.context(), which k6 answers without waiting). */
  readonly context?: number;
  /** Events of the listened pages since the last answer, in order, for the script's handlers. */
  readonly events?: readonly PageEvent[];
  /** The shard's browser, with the answer of browser.newContext() and newPage(): its session is ready then. */
  readonly browser?: BrowserIdentity;
}

/**
 * What k6's browser.userAgent() and version() answer at once, without a call: the shard
 * reads them when its browser session starts (Browser.getVersion), with "Headless" taken out
 * of the user agent as k6 does (v1.8.1 common/browser.go fetchVersion), which is also a new
 * context's user agent unless the script gives one.
 */
export interface BrowserIdentity {
  readonly userAgent: string;
  /** The browser's version, as k6 answers it: "120.0.6099.28" of "HeadlessChrome/120.0.6099.28". */
  readonly version: string;
}

/**
 * What waitForFunction's function returned, as it crosses: an element stays in the page and
 * crosses as a handle (k6 answers an ElementHandle: e.innerHTML()), anything else as its value
 * (a JSHandle's jsonValue()).
 */
export type FunctionValue = { readonly kind: "element"; readonly element: number } | { readonly kind: "value"; readonly value: unknown };

/** The shard's side of k6/browser, a method of the iteration's host (workers/shard/script-flow.ts). */
export interface BrowserHostApi {
  /** Applies the samples recorded so far, then makes the call; rejects with the browser's error. */
  browser(samples: readonly Sample[], call: BrowserCall): Promise<BrowserAnswer>;
}

/** What a page (given a selector), a locator and an element handle all do to an element. */
const ELEMENT_ACTIONS = [
  "click",
  "dblclick",
  "fill",
  "type",
  "press",
  "check",
  "uncheck",
  "setChecked",
  "hover",
  "focus",
  "tap",
  "dispatchEvent",
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
 * waitForNavigation, evaluate, screenshot, $ and $$ are the shard's own (web vitals, a
 * function's source, R2, element handles), and so are its waits on what the page does
 * (waitForFunction, waitForResponse, waitForRequest, waitForEvent: workers/shard/browser-waits.ts)
 * and a context's cookies (k6 takes URLs as arguments where Playwright takes one array).
 */
export const BROWSER_METHODS = {
  browser: ["newContext", "newPage"],
  context: [
    "newPage",
    "close",
    "cookies",
    "addCookies",
    "clearCookies",
    "grantPermissions",
    "clearPermissions",
    "setDefaultTimeout",
    "setDefaultNavigationTimeout",
    "setExtraHTTPHeaders",
    "setGeolocation",
    "setOffline",
  ],
  // A page answers the element actions for a selector it is given first (Playwright's page.click(selector)).
  page: [
    "goto",
    "reload",
    "waitForNavigation",
    "waitForLoadState",
    "waitForURL",
    "title",
    "content",
    "close",
    "evaluate",
    "screenshot",
    "waitForSelector",
    "waitForFunction",
    "waitForResponse",
    "waitForRequest",
    "waitForEvent",
    "$",
    "$$",
    ...ELEMENT_ACTIONS,
    "setContent",
    "bringToFront",
    "setViewportSize",
    "viewportSize",
    "setExtraHTTPHeaders",
    "emulateMedia",
    "setDefaultTimeout",
    "setDefaultNavigationTimeout",
    "route",
    "unroute",
    "throttleNetwork",
    "throttleCPU",
  ],
  locator: ["clear", "waitFor", "count", "boundingBox", "scrollIntoViewIfNeeded", "selectText", "blur", ...ELEMENT_ACTIONS],
  element: ["boundingBox", "scrollIntoViewIfNeeded", "selectText", "waitForElementState", "$", "$$", "dispose", ...ELEMENT_ACTIONS],
  keyboard: ["press", "type", "down", "up", "insertText"],
  mouse: ["click", "dblclick", "down", "up", "move", "wheel"],
  touchscreen: ["tap"],
  route: ["abort", "continue", "fulfill"],
} as const satisfies Record<BrowserTarget["kind"], readonly string[]>;

/** Whether `method` is one `kind` answers. */
export const answers = (kind: BrowserTarget["kind"], method: string): boolean => (BROWSER_METHODS[kind] as readonly string[]).includes(method);

/**
 * k6's browser metrics edgeload records (k6 v1.x internal/js/modules/k6/browser/k6ext/metrics.go):
 * trends in milliseconds but CLS (a score: BROWSER_UNITLESS), the failure rate by request, the
 * bytes of the pages' requests and responses as counters (workers/shard/browser-page-metrics.ts).
 */
export const BROWSER_METRICS = {
  browser_web_vital_ttfb: "trend",
  browser_web_vital_fcp: "trend",
  browser_web_vital_lcp: "trend",
  browser_web_vital_inp: "trend",
  browser_web_vital_cls: "trend",
  browser_http_req_duration: "trend",
  browser_http_req_failed: "rate",
  browser_data_sent: "counter",
  browser_data_received: "counter",
} as const;

/** The browser trends that are not times. */
export const BROWSER_UNITLESS: ReadonlySet<string> = new Set(["browser_web_vital_cls"]);

/** k6 v1.x browser methods (@types/k6 browser) not built yet, by the reason given: plain work still to do. */
export const UNBUILT_BROWSER_CALLS: Readonly<Record<string, string>> = Object.fromEntries(
  ["setInputFiles", "emulateVisionDeficiency", "addInitScript", "exposeFunction", "evaluateHandle", "closeContext", "unrouteAll"].map((name) => [
    name,
    "not built in edgeload's k6/browser yet",
  ]),
);

/** Properties of k6's page that are objects of their own, not built: none now (page.touchscreen is). */
export const UNBUILT_PROPERTIES: Readonly<Record<string, string>> = {};

/**
 * k6's `networkProfiles` of k6/browser, for page.throttleNetwork (v1.8.1 common/network_profile.go):
 * latency in ms, throughputs in bytes per second, -1 for none.
 */
export const NETWORK_PROFILES = {
  "No Throttling": { latency: 0, download: -1, upload: -1 },
  "Slow 3G": { latency: 400 * 5, download: ((500 * 1000) / 8) * 0.8, upload: ((500 * 1000) / 8) * 0.8 },
  "Fast 3G": { latency: 150 * 3.75, download: ((1.6 * 1000 * 1000) / 8) * 0.9, upload: ((750 * 1000) / 8) * 0.9 },
} as const;
