/**
 * The shard's side of k6/browser for one iteration: the Playwright contexts and pages a VU's
 * proxies name by handle (k6-compat/runtime/browser-wire.ts), in the shard's browser session
 * (browser-session.ts). Each iteration opens contexts of its own and closes them at its end,
 * as k6 starts a browser per iteration; the session stays. Locators are replayed from their
 * steps (browser-locate.ts); element handles (page.$) are kept here, and the events of the
 * pages the script listens to (browser-events.ts), handed back with the next answer. A page's
 * page.route handlers hold its requests here (browser-routes.ts); throttling and taps go by
 * CDP (browser-emulation.ts).
 *
 * What it records, through the iteration's host as any script sample: the web vitals of each
 * page (browser-vitals.ts: TTFB, FCP and LCP after a navigation, INP and CLS when it is left) and
 * browser_http_req_duration / browser_http_req_failed, browser_data_sent / _received for every
 * request a page makes (browser-page-metrics.ts). The
 * browser reaches only what the run may load: every request a context makes is checked
 * against the deployment's allowed targets and aborted when refused.
 */
import type { BrowserContext, CDPSession, ElementHandle, Page, Response, Route } from "@cloudflare/playwright";
import {
  answers,
  type BrowserAnswer,
  type BrowserCall,
  type BrowserIdentity,
  type BrowserTarget,
  type CollectedPageEvent,
  EVENT_POLL,
  type FunctionValue,
  type MetricTagRule,
  type PageListen,
} from "../../k6-compat/runtime/browser-wire.ts";
import { elementCall, inputInOrder, invoke, usesInput } from "./browser-element-calls.ts";
import { tap, throttleCPU, throttleNetwork } from "./browser-emulation.ts";
import { collectPageEvents, PageEventQueue } from "./browser-events.ts";
import { locate, revive } from "./browser-locate.ts";
import { recordRequest, requestFinished, taggedByRules, watchPageBytes } from "./browser-page-metrics.ts";
import { PageRoutes } from "./browser-routes.ts";
import { installVitals, recordNavigationVitals, reportVitals, watchVitals } from "./browser-vitals.ts";
import { type FunctionResult, PAGE_WAITS, pageWait, responseData } from "./browser-waits.ts";
import type { Sample } from "../../k6-compat/runtime/wire.ts";

/** What the host needs of its shard: a context in the shard's browser, and where screenshots go. */
export interface ShardBrowserPort {
  /** `options`: k6's NewBrowserContextOptions, which are Playwright's. */
  newContext(options?: unknown): Promise<BrowserContext>;
  /** The browser's user agent (without "Headless") and version, read when its session started (browser-session.ts). */
  identity(): Promise<BrowserIdentity>;
  /** Keeps a screenshot (R2, under the run: screenshotKey). */
  saveScreenshot(name: string, bytes: Uint8Array, contentType: string): Promise<void>;
}

/** Where a run's screenshots are kept in its R2 bucket. */
export const screenshotKey = (runId: string, shard: number, name: string) => `screenshots/${runId}/shard-${shard}/${name}`;

interface OpenPage {
  readonly page: Page;
  /** The context it was opened in (page.context()). */
  readonly context: number;
  /** Request metrics still being read (a response's status is awaited): the iteration waits for them. */
  readonly pending: Set<Promise<void>>;
  /** Its element handles (page.$), by handle: disposed with the page. */
  readonly elements: Map<number, ElementHandle>;
  /** The page's events the script listens to, collected since it said so (browser-events.ts). */
  readonly listening: Set<CollectedPageEvent>;
  /** The page's own CDP session: its vitals, its bytes, throttling and taps. */
  readonly cdp: CDPSession;
  /** Its page.route handlers and the requests they hold. */
  readonly routes: PageRoutes;
  /** The page's metric.tag() rules (page.on("metric")), in the order the script gave them. */
  readonly rules: MetricTagRule[];
  /** Records the page's samples, tagged by its rules. */
  readonly record: (samples: readonly Sample[]) => void;
  /** The page's input actions, one after another (inputInOrder). */
  inputs: Promise<unknown>;
}

export class BrowserHost {
  readonly #port: ShardBrowserPort;
  readonly #refusal: (url: URL) => string | null;
  readonly #record: (samples: readonly Sample[]) => void;
  readonly #contexts = new Map<number, BrowserContext>();
  readonly #pages = new Map<number, OpenPage>();
  /** The listened pages' events, in order, until the next answer. */
  readonly #events = new PageEventQueue();
  /** The contexts whose new pages the script waits for (context.waitForEvent("page")). */
  readonly #pageWatched = new Set<number>();
  #nextHandle = 1;

  /** `refusal`: why a URL may not be loaded (the deployment's allowed targets), or null. */
  constructor(port: ShardBrowserPort, refusal: (url: URL) => string | null, record: (samples: readonly Sample[]) => void) {
    this.#port = port;
    this.#refusal = refusal;
    this.#record = record;
  }

  async call({ target, method, args, listen }: BrowserCall): Promise<BrowserAnswer> {
    const polls = method === EVENT_POLL && (target.kind === "page" || target.kind === "context");
    if (!polls && !answers(target.kind, method)) throw new Error(`k6/browser's ${target.kind}.${method}() is not built in edgeload`);
    for (const wanted of listen ?? []) this.#listen(wanted);
    const answer = polls ? await this.#poll(target, args) : await this.#answer(target, method, args);
    const events = await this.#events.drain();
    return events.length ? { ...answer, events } : answer;
  }

  /** The iteration is over: its pages' INP, CLS and request metrics are recorded, its contexts closed. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#pages.values()].map((open) => reportVitals(open.page, open.record)));
    for (const open of this.#pages.values()) await Promise.allSettled(open.pending);
    for (const open of this.#pages.values()) open.routes.clear();
    this.#pages.clear();
    await Promise.allSettled([...this.#contexts.values()].map((c) => c.close()));
    this.#contexts.clear();
    this.#events.closed();
  }

  /** A VU's poll (EVENT_POLL: its number, its timeout or null): answered once events wait, or its page or context closed, or it timed out. */
  async #poll(target: BrowserTarget, [id, timeoutMs]: readonly unknown[]): Promise<BrowserAnswer> {
    const open =
      target.kind === "context"
        ? () => this.#contexts.has(target.context)
        : () => !(this.#pages.get((target as { page: number }).page)?.page.isClosed() ?? true);
    return { value: await this.#events.poll(Number(id), typeof timeoutMs === "number" ? timeoutMs : null, open, Date.now) };
  }

  async #answer(target: BrowserTarget, method: string, args: readonly unknown[]): Promise<BrowserAnswer> {
    if (target.kind === "browser") {
      const { context, handle, browser } = await this.#newContext(args[0]);
      // The session is ready: the script learns what browser.userAgent() and version() answer at once.
      if (method === "newContext") return { value: handle, browser };
      return { ...(await this.#newPage(context, handle)), browser };
    }
    if (target.kind === "context") return this.#contextCall(target.context, method, args);
    const open = this.#pages.get(target.page);
    if (!open) throw new Error(`page ${target.page} is not open (k6 closes a VU's pages when its iteration ends)`);
    const { page } = open;
    const revived = revive(args, page) as unknown[];
    const run = (): Promise<unknown> => {
      if (target.kind === "locator") return elementCall(locate(page, target.steps), method, revived);
      if (target.kind === "element") return this.#elementCall(open, target.element, method, revived);
      if (target.kind === "keyboard") return invoke(page.keyboard, method, revived);
      if (target.kind === "mouse") return invoke(page.mouse, method, revived);
      if (target.kind === "touchscreen") return tap(open.cdp, args[0], args[1]);
      if (target.kind === "route") return open.routes.decide(target.route, method, args);
      return this.#pageCall(open, method, args);
    };
    return { value: await (usesInput(target.kind, method) ? inputInOrder(open, run) : run()), url: page.url() };
  }

  async #contextCall(handle: number, method: string, args: readonly unknown[]): Promise<BrowserAnswer> {
    const context = this.#contexts.get(handle);
    if (!context) throw new Error(`browser context ${handle} is not open (k6 closes a VU's contexts when its iteration ends)`);
    if (method === "newPage") return this.#newPage(context, handle);
    if (method === "close") {
      await context.close();
      this.#contexts.delete(handle);
      return { value: undefined };
    }
    // k6's context.cookies(...urls); Playwright's takes them as one array.
    if (method === "cookies") return { value: await context.cookies(args.length ? (args as string[]) : undefined) };
    return { value: await invoke(context, method, args) };
  }

  async #pageCall(open: OpenPage, method: string, args: readonly unknown[]): Promise<unknown> {
    const { page } = open;
    if (method === "goto") return this.#goto(open, String(args[0]), args[1]);
    // Registered before anything is awaited: the action that brings what it waits for may be the next call.
    if (method === "waitForFunction") return this.#functionValue(open, await (pageWait(page, method, args) as Promise<FunctionResult>));
    if (PAGE_WAITS.has(method)) return pageWait(page, method, args);
    if (method === "waitForNavigation" || method === "reload") {
      if (method === "reload") await reportVitals(page, open.record);
      const response = (await invoke(page, method, revive(args, page) as unknown[])) as Response | null;
      await recordNavigationVitals(page, open.record);
      return responseData(response);
    }
    if (method === "evaluate") {
      const [source, isFunction, ...values] = args;
      // The function's source, called with its arguments, as an expression in the page.
      const call = `(${String(source)})(${values.map((v) => (v === undefined ? "undefined" : JSON.stringify(v))).join(", ")})`;
      return page.evaluate(isFunction ? call : String(source));
    }
    if (method === "route") return open.routes.route(Number(args[0]), args[1]);
    if (method === "unroute") return open.routes.unroute(args);
    if (method === "throttleNetwork") return throttleNetwork(open.cdp, args[0]);
    if (method === "throttleCPU") return throttleCPU(open.cdp, args[0]);
    if (method === "screenshot") return this.#screenshot(page, args[0] as ScreenshotOptions | undefined, String(args[1]));
    if (method === "waitForSelector" || method === "$") return this.#keep(open, (await invoke(page, method, args)) as ElementHandle | null);
    if (method === "$$") return ((await page.$$(String(args[0]))) as ElementHandle[]).map((e) => this.#keep(open, e));
    if (method === "close") {
      await reportVitals(page, open.record);
      await page.close();
      open.routes.clear();
      await Promise.allSettled(open.pending);
      for (const element of open.elements.values()) await element.dispose().catch(() => {});
      return undefined;
    }
    if (method === "isEditable") return elementCall(page.locator(String(args[0])), method, []);
    return invoke(page, method, revive(args, page) as unknown[]);
  }

  async #elementCall(open: OpenPage, handle: number, method: string, args: unknown[]): Promise<unknown> {
    const element = open.elements.get(handle);
    if (!element) throw new Error(`element handle ${handle} is disposed (k6 disposes a page's elements when it closes)`);
    if (method === "$") return this.#keep(open, await element.$(String(args[0])));
    if (method === "$$") return (await element.$$(String(args[0]))).map((e) => this.#keep(open, e));
    if (method === "dispose") open.elements.delete(handle);
    return elementCall(element, method, args);
  }

  /** An element handle kept for the script, by the number it gets; null for no element. */
  #keep(open: OpenPage, element: ElementHandle | null): number | null {
    if (!element) return null;
    const handle = this.#nextHandle++;
    open.elements.set(handle, element);
    return handle;
  }

  /** waitForFunction's result as it crosses: an element kept for the script as page.$'s, else its value. */
  #functionValue(open: OpenPage, result: FunctionResult): FunctionValue {
    if (result.kind === "value") return result;
    return { kind: "element", element: this.#keep(open, result.element) as number };
  }

  async #goto(open: OpenPage, url: string, options: unknown): Promise<unknown> {
    const { page } = open;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new Error(`page.goto(): invalid URL "${url}"`);
    }
    const refused = this.#refusal(parsed);
    if (refused) throw new Error(`page.goto(${parsed.href}) refused before it was sent: ${refused}`);
    await reportVitals(page, open.record);
    const response = await page.goto(parsed.href, options as Parameters<Page["goto"]>[1]);
    await recordNavigationVitals(page, open.record);
    return responseData(response);
  }

  async #screenshot(page: Page, options: ScreenshotOptions | undefined, defaultName: string): Promise<ArrayBuffer> {
    const { path, ...rest } = options ?? {};
    const type = rest.type === "jpeg" ? "jpeg" : "png";
    const bytes = await page.screenshot({ ...rest, type });
    // k6 writes `path` to its disk; here it names the object kept in R2 (its last segment, made safe).
    const name = typeof path === "string" && path.trim() ? (path.split(/[\\/]/).pop() ?? "").replace(/[^A-Za-z0-9._-]/g, "_") || defaultName : defaultName;
    await this.#port.saveScreenshot(name, bytes, `image/${type}`);
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async #newContext(options: unknown): Promise<{ context: BrowserContext; handle: number; browser: BrowserIdentity }> {
    const browser = await this.#port.identity();
    const context = await this.#port.newContext(withUserAgent(options, browser.userAgent));
    const handle = this.#nextHandle++;
    this.#contexts.set(handle, context);
    await installVitals(context);
    // Every request the context's pages make, refused off the deployment's allowed targets.
    await context.route("**/*", (route: Route) => {
      const refused = this.#refusal(new URL(route.request().url()));
      return refused ? route.abort("blockedbyclient") : route.continue();
    });
    return { context, handle, browser };
  }

  async #newPage(context: BrowserContext, contextHandle: number): Promise<BrowserAnswer> {
    const page = await context.newPage();
    const rules: MetricTagRule[] = [];
    const record = (samples: readonly Sample[]) => this.#record(rules.length ? samples.map((sample) => taggedByRules(sample, rules)) : samples);
    // One CDP session of the page's own: its hidden documents' vitals, its requests' bytes, throttling and taps.
    const cdp = await context.newCDPSession(page);
    const handle = this.#nextHandle++;
    const routes = new PageRoutes(
      page,
      handle,
      (event) => this.#events.push(event),
      this.#refusal,
      () => this.#nextHandle++,
    );
    const open: OpenPage = {
      page,
      context: contextHandle,
      pending: new Set(),
      elements: new Map(),
      listening: new Set(),
      cdp,
      routes,
      rules,
      record,
      inputs: Promise.resolve(),
    };
    await watchVitals(cdp, record);
    await watchPageBytes(cdp, record);
    const track = (work: Promise<void>) => {
      open.pending.add(work);
      void work.finally(() => open.pending.delete(work));
    };
    page.on("requestfinished", (request) => track(requestFinished(request, record)));
    page.on("requestfailed", (request) => recordRequest(request, null, true, 0, record));
    // A poll on the page ends when it closes, by the script or by itself.
    page.on("close", () => this.#events.closed());
    this.#pages.set(handle, open);
    if (this.#pageWatched.has(contextHandle)) this.#events.push(Promise.resolve({ context: contextHandle, event: "page", page: handle, url: page.url() }));
    return { value: handle, url: page.url(), context: contextHandle };
  }

  /** Starts collecting a page's events of a kind for the script (page.on, waitForEvent), once; keeps its metric.tag() rules; watches a context's new pages. */
  #listen(wanted: PageListen): void {
    if ("context" in wanted) {
      this.#pageWatched.add(wanted.context);
      return;
    }
    const open = this.#pages.get(wanted.page);
    if (!open) return;
    if (wanted.event === "metric") {
      open.rules.push(...wanted.rules);
      return;
    }
    if (open.listening.has(wanted.event)) return;
    open.listening.add(wanted.event);
    collectPageEvents(open.page, wanted.page, wanted.event, this.#events);
  }
}

/**
 * A context's options with the browser's user agent when the script gives none (or a blank
 * one), as k6 does (v1.8.1 common/browser_context.go NewBrowserContext): its pages then send
 * the user agent browser.userAgent() answers, without "Headless".
 */
export function withUserAgent(options: unknown, userAgent: string): Record<string, unknown> {
  const given = typeof options === "object" && options !== null ? (options as Record<string, unknown>) : {};
  return typeof given.userAgent === "string" && given.userAgent.trim() !== "" ? given : { ...given, userAgent };
}

type ScreenshotOptions = { path?: unknown; type?: unknown } & Record<string, unknown>;
