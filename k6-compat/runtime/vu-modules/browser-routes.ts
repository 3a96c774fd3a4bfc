/**
 * k6/browser's page.route and page.unroute in the script's isolate. The shard intercepts the
 * page's requests whose URL a route matches (workers/shard/browser-routes.ts) and holds each
 * one; the request crosses as a `route` event and the script's handler, which runs here,
 * aborts, continues or fulfills it by a call naming the held request (k6 v1.8.1
 * route_mapping.go).
 *
 * A held request waits for the script, and the script may be awaiting the very navigation
 * that made it (`await page.goto(…)`): so while the page has routes a call stays open at the
 * shard (browser-events.ts pollEvents), whose answer brings the held requests at once, until
 * the shard answers that the page has closed.
 */
import type { PageEvent } from "../browser-wire.ts";
import { pollEvents } from "./browser-events.ts";
import { requestOf } from "./browser-objects.ts";
import { type Call, crossing, guarded, type Methods, type PageTools } from "./browser-proxy.ts";

type RouteEvent = Extract<PageEvent, { event: "route" }>;
type RouteHandler = (route: Methods) => unknown;

/** What page.route and page.unroute do on one page. */
export interface PageRoutes {
  route(url: unknown, handler: unknown): Promise<void>;
  unroute(url: unknown): Promise<void>;
}

/**
 * A route's URL as it is compared for unroute: the same string, or a RegExp of the same
 * source and flags. (k6 v1.8.1 compares its quoted form of a string route with unroute's
 * plain string, so unroute there removes RegExp routes only; here it removes what it names.)
 */
const routeKey = (url: unknown) => (url instanceof RegExp ? `regexp:${String(url)}` : `string:${String(url)}`);

export function pageRoutes(tools: PageTools, page: number, isClosed: () => boolean): PageRoutes {
  const target = { kind: "page", page } as const;
  const routes: { id: number; key: string; handler: RouteHandler }[] = [];
  let nextId = 1;
  let pumping = false;
  tools.listen({ page, event: "route" }, (event) => {
    const held = event as RouteEvent;
    const route = routeProxy(tools.call, page, held);
    const found = routes.find((r) => r.id === held.id);
    // Unrouted while its request was on the way: it goes on, as one no route matches (k6 frame_manager.go requestStarted).
    if (!found) return void (route.continue as () => Promise<void>)();
    const failed = (error: unknown) =>
      console.error(`page.route('${found.key.replace(/^\w+:/, "")}'): ${error instanceof Error ? error.message : String(error)}`);
    try {
      const result = found.handler(route);
      if (result instanceof Promise) result.catch(failed);
    } catch (error) {
      failed(error);
    }
  });
  const idle = () => routes.length === 0 || isClosed();
  const pump = async () => {
    if (pumping) return;
    pumping = true;
    const ended = await pollEvents(tools, "page.route()", target, null, idle).catch(() => "failed" as const);
    pumping = false;
    // Only a pump that stopped for want of routes starts again, for a route added while its
    // last poll was answered. "closed" is the shard saying the page (or the iteration) is gone,
    // and it says so at once to every later poll: polling on until the script's page.close()
    // answered was a loop of calls that never waited, which starved that very close in workerd
    // (route.js, issue 52); a poll that failed would fail again. Pinned by browser-events.test.ts
    // "stops polling when the shard answers that the page closed…" and "…when a poll fails".
    if (ended === "events" && !idle()) void pump();
  };
  return {
    async route(url, handler) {
      if (typeof url !== "string" && !(url instanceof RegExp))
        throw new Error(`k6/browser's page.route(): the URL must be a string or a RegExp (k6 matches no function), not ${typeof url}`);
      if (typeof handler !== "function") throw new Error("k6/browser's page.route(url, handler): the handler must be a function");
      const id = nextId++;
      routes.push({ id, key: routeKey(url), handler: handler as RouteHandler });
      await tools.call("page.route()", target, "route", [id, ...crossing("page.route()", [url])]);
      void pump();
    },
    async unroute(url) {
      const key = routeKey(url);
      const ids = routes.filter((r) => r.key === key).map((r) => r.id);
      if (!ids.length) return;
      routes.splice(0, routes.length, ...routes.filter((r) => r.key !== key));
      await tools.call("page.unroute()", target, "unroute", ids);
    },
  };
}

/** k6's Route of a held request: request(), abort(), continue(), fulfill(); each decision a call, its options checked first. */
function routeProxy(call: Call, page: number, held: RouteEvent): Methods {
  const target = { kind: "route", page, route: held.route } as const;
  const decide = (method: "abort" | "continue" | "fulfill", options: () => unknown): Promise<void> => {
    const decided = (async () => {
      await call(`route.${method}()`, target, method, crossing(`route.${method}()`, [options()]));
    })();
    // k6's examples do not await it (`route.abort();`): its failure is the script's to await, not an unhandled rejection.
    decided.catch(() => {});
    return decided;
  };
  return guarded("route", {
    request: () => requestOf(held.request),
    // k6 aborts with "failed" when given no reason (http.go Route.Abort).
    abort: (reason?: unknown) => decide("abort", () => (reason === undefined || reason === null || reason === "" ? "failed" : String(reason))),
    continue: (options?: unknown) => decide("continue", () => continueOptions(options)),
    fulfill: (options?: unknown) => decide("fulfill", () => fulfillOptions(options)),
  });
}

/** k6's route.continue options (route_mapping.go parseContinueOptions): headers, method, postData and url; the rest ignored, as k6 does. */
export function continueOptions(options: unknown): Record<string, unknown> {
  const given = (options ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  if (given.headers !== undefined && given.headers !== null) out.headers = headersOf("route.continue()", given.headers);
  if (given.method !== undefined) out.method = String(given.method);
  if (given.postData !== undefined && given.postData !== null) out.postData = bytesOrText("route.continue()", "postData", given.postData);
  if (given.url !== undefined) out.url = String(given.url);
  return out;
}

/** k6's route.fulfill options (route_mapping.go parseFulfillOptions): body, contentType, headers and status; any other is refused, as k6 does. */
export function fulfillOptions(options: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries((options ?? {}) as Record<string, unknown>)) {
    if (key === "body") out.body = bytesOrText("route.fulfill()", "body", value);
    else if (key === "contentType") out.contentType = String(value);
    else if (key === "headers") out.headers = headersOf("route.fulfill()", value);
    else if (key === "status") out.status = Math.trunc(Number(value));
    else throw new Error(`route.fulfill(): unsupported fulfill option: '${key}'`);
  }
  return out;
}

/** Headers as strings by name, nullish values left out (k6's parseHeaders). */
function headersOf(what: string, headers: unknown): Record<string, string> {
  if (typeof headers !== "object" || headers === null) throw new Error(`${what}: headers must be an object of names and values, not ${typeof headers}`);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && value !== null) out[name] = String(value);
  return out;
}

/** A body as it crosses: text as it is, bytes as bytes (k6's ToBytes takes both). */
function bytesOrText(what: string, name: string, value: unknown): string | Uint8Array {
  if (typeof value === "string") return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new Error(`${what}: ${name} must be a string or bytes (an ArrayBuffer), not ${value === null ? "null" : typeof value}`);
}
