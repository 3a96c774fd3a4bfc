/**
 * A page's page.route handlers, the shard's side (the script's handlers run in its isolate:
 * k6-compat/runtime/vu-modules/browser-routes.ts). A request whose URL a route matches is held
 * here and crosses as a `route` event; the script's route.abort(), continue() or fulfill()
 * comes back naming it. As in k6 (frame_manager.go requestStarted) the newest matching route
 * takes the request, which Playwright's page.route order gives: the newest handler runs first,
 * and none of ours falls back.
 *
 * The browser still reaches only what the run may load: a request continued to a URL of the
 * script's (`continue({ url })`) is checked against the allowed targets as any other, and a
 * page route's continue skips the context's route that checks them, so it is checked here.
 */
import type { Page, Route } from "@cloudflare/playwright";
import type { PageEvent } from "../../k6-compat/runtime/browser-wire.ts";
import { requestData, urlMatcher } from "./browser-waits.ts";

interface ScriptRoute {
  readonly matcher: (url: URL) => boolean;
  readonly handler: (route: Route) => void;
}

export class PageRoutes {
  readonly #page: Page;
  readonly #handle: number;
  readonly #push: (event: Promise<PageEvent>) => void;
  readonly #refusal: (url: URL) => string | null;
  readonly #nextHandle: () => number;
  /** The script's routes by the number its VU gave them. */
  readonly #routes = new Map<number, ScriptRoute>();
  /** The requests waiting for the script's decision, by the handle their event carried. */
  readonly #held = new Map<number, Route>();

  constructor(page: Page, handle: number, push: (event: Promise<PageEvent>) => void, refusal: (url: URL) => string | null, nextHandle: () => number) {
    this.#page = page;
    this.#handle = handle;
    this.#push = push;
    this.#refusal = refusal;
    this.#nextHandle = nextHandle;
  }

  /** page.route(url, handler): route `id` (the VU's) takes the requests whose URL matches `pattern` (a URL, "" for any, or a RegExp). */
  async route(id: number, pattern: unknown): Promise<void> {
    const matches = pattern === "" ? () => true : urlMatcher("page.route()", pattern);
    const handler = (route: Route) => {
      const held = this.#nextHandle();
      this.#held.set(held, route);
      this.#push(Promise.resolve({ page: this.#handle, event: "route", route: held, id, request: requestData(route.request()) }));
    };
    const matcher = (url: URL) => matches(url.href);
    this.#routes.set(id, { matcher, handler });
    await this.#page.route(matcher, handler);
  }

  /** page.unroute(url): the routes the VU found by that URL, by their numbers. */
  async unroute(ids: readonly unknown[]): Promise<void> {
    for (const id of ids) {
      const route = this.#routes.get(Number(id));
      if (!route) continue;
      this.#routes.delete(Number(id));
      await this.#page.unroute(route.matcher, route.handler);
    }
  }

  /** The script's decision on held request `handle`: abort(errorCode), continue(options) or fulfill(options), k6's options as Playwright's. */
  async decide(handle: number, method: string, args: readonly unknown[]): Promise<void> {
    const route = this.#held.get(handle);
    if (!route) throw new Error(`route.${method}(): this request was already handled (a route's request is aborted, continued or fulfilled once)`);
    this.#held.delete(handle);
    const options = (args[0] ?? {}) as Record<string, unknown>;
    if (method === "abort") return route.abort(String(args[0] ?? "failed"));
    if (method === "fulfill") return route.fulfill(withBytes(options, "body") as Parameters<Route["fulfill"]>[0]);
    const url = typeof options.url === "string" ? options.url : route.request().url();
    let refused: string | null;
    try {
      refused = this.#refusal(new URL(url));
    } catch {
      refused = `"${url}" is not a URL`;
    }
    if (refused) {
      await route.abort("blockedbyclient");
      throw new Error(`route.continue(): ${url} refused: ${refused}`);
    }
    return route.continue(withBytes(options, "postData") as Parameters<Route["continue"]>[0]);
  }

  /** The page closed: what it held is let go with it. */
  clear(): void {
    this.#held.clear();
    this.#routes.clear();
  }
}

/** Options with their body (`name`) as Playwright takes bytes: a Buffer. */
function withBytes(options: Record<string, unknown>, name: string): Record<string, unknown> {
  const value = options[name];
  return value instanceof Uint8Array ? { ...options, [name]: Buffer.from(value) } : options;
}
