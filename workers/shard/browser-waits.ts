/**
 * k6/browser's waits on what a page does, on the shard's Playwright page: waitForFunction,
 * waitForResponse, waitForRequest and waitForEvent, and the plain data a response, a request
 * and a console message cross back as (k6-compat/runtime/vu-modules/browser-page.ts makes
 * k6's objects of it).
 *
 * A wait is registered as soon as its call reaches the shard, before the host awaits anything
 * (browser-host.ts), so the action a script starts beside it (`Promise.all([page.waitForResponse(…),
 * button.click()])`, k6's way) cannot bring its response before the wait listens. A wait with a
 * predicate (a function of the script, which stays in its isolate) is the VU's: the events
 * cross to it (browser-events.ts).
 */
import type { ConsoleMessage, ElementHandle, Page, Request, Response } from "@cloudflare/playwright";
import type { CrossingRegExp, RequestData, ResponseData } from "../../k6-compat/runtime/browser-wire.ts";

/** The waits this file answers. */
export const PAGE_WAITS: ReadonlySet<string> = new Set(["waitForFunction", "waitForResponse", "waitForRequest", "waitForEvent"]);

/** The page events waitForEvent waits for (k6 v1.x page_mapping.go: every page.on event but metric). */
const WAITED_EVENTS: ReadonlySet<string> = new Set(["console", "request", "response", "requestfinished", "requestfailed"]);

/** What waitForFunction's function returned: an element (its handle, for the host to keep), else its value. */
export type FunctionResult = { readonly kind: "element"; readonly element: ElementHandle } | { readonly kind: "value"; readonly value: unknown };

/** Starts the wait `method` (one of PAGE_WAITS) on `page` at once; resolves with what it waited for, as data (waitForFunction: a FunctionResult). */
export function pageWait(page: Page, method: string, args: readonly unknown[]): Promise<unknown> {
  if (method === "waitForFunction") return waitForFunction(page, args);
  if (method === "waitForResponse" || method === "waitForRequest") {
    const [pattern, options] = args;
    const matches = urlMatcher(`page.${method}()`, pattern);
    const timeout = timeoutOf(options);
    if (method === "waitForResponse") return page.waitForResponse((r) => matches(r.url()), timeout).then(responseData);
    return page.waitForRequest((r) => matches(r.url()), timeout).then(requestData);
  }
  const [event, options] = args;
  if (!WAITED_EVENTS.has(String(event)))
    return Promise.reject(new Error(`page.waitForEvent("${String(event)}"): k6 waits for ${[...WAITED_EVENTS].map((e) => `"${e}"`).join(", ")}`));
  const waited = page.waitForEvent(String(event) as "console", timeoutOf(options)) as Promise<unknown>;
  if (event === "console") return waited.then((message) => consoleData(message as ConsoleMessage));
  if (event === "response") return waited.then((response) => responseData(response as Response));
  return waited.then((request) => requestData(request as Request));
}

/**
 * k6's waitForFunction(pageFunction, options, ...args): the function's source called with its
 * arguments, as an expression the page polls until it is truthy (Playwright's waitForFunction
 * of a string; Workers cannot make a function of text). k6's `polling: "mutation"` is polled
 * every frame ("raf"), which Playwright has: the same answer, a frame later at most.
 */
async function waitForFunction(page: Page, args: readonly unknown[]): Promise<FunctionResult> {
  const [source, isFunction, options, ...values] = args;
  const expression = isFunction ? `(${String(source)})(${values.map((v) => (v === undefined ? "undefined" : JSON.stringify(v))).join(", ")})` : String(source);
  const { polling, timeout } = (options ?? {}) as { polling?: unknown; timeout?: unknown };
  if (polling !== undefined && polling !== "raf" && polling !== "mutation" && !(typeof polling === "number" && polling > 0))
    throw new Error(`page.waitForFunction(): polling must be "raf", "mutation" or a number of milliseconds above 0, not ${JSON.stringify(polling)}`);
  const handle = await page.waitForFunction(expression, undefined, {
    polling: typeof polling === "number" ? polling : "raf",
    ...(typeof timeout === "number" ? { timeout } : {}),
  });
  // k6 answers an ElementHandle for an element, which stays in the page; else a JSHandle, whose
  // value is what crosses (jsonValue()), and the page's handle is let go.
  const element = handle.asElement();
  if (element) return { kind: "element", element };
  const value = await handle.jsonValue().catch(() => null);
  await handle.dispose().catch(() => {});
  return { kind: "value", value };
}

/** k6's URL match of waitForResponse/Request and page.route: a RegExp tested on the URL, else the URL itself. */
export function urlMatcher(what: string, pattern: unknown): (url: string) => boolean {
  if (typeof pattern === "string") return (url) => url === pattern;
  const regexp = pattern as CrossingRegExp | null;
  if (typeof regexp?.$regexp === "string") {
    const re = new RegExp(regexp.$regexp, regexp.flags);
    return (url) => {
      re.lastIndex = 0;
      return re.test(url);
    };
  }
  throw new Error(`${what}: the URL to wait for must be a string or a RegExp, not ${JSON.stringify(pattern)}`);
}

/** Playwright's options of a wait: k6's `timeout` (ms), else the page's default. */
function timeoutOf(options: unknown): { timeout?: number } {
  const timeout = (options as { timeout?: unknown } | null | undefined)?.timeout;
  return typeof timeout === "number" ? { timeout } : {};
}

/** What a navigation or a wait brings back of a response (null: none, as for a same-document navigation). */
export function responseData(response: Response | null): ResponseData | null {
  if (!response) return null;
  return { status: response.status(), statusText: response.statusText(), url: response.url(), headers: response.headers() };
}

/** What a wait or an event brings back of a request: k6's Request reads. */
export function requestData(request: Request): RequestData {
  return {
    url: request.url(),
    method: request.method(),
    headers: request.headers(),
    postData: request.postData(),
    resourceType: request.resourceType(),
    isNavigationRequest: request.isNavigationRequest(),
  };
}

/** A console message as k6's ConsoleMessage gives it, its arguments' JSON values read now (their handles die with the page). */
export async function consoleData(message: ConsoleMessage): Promise<{ type: string; text: string; args: unknown[] }> {
  const args = await Promise.all(message.args().map((arg) => arg.jsonValue().catch(() => null)));
  return { type: message.type(), text: message.text(), args };
}
