/**
 * The events of an iteration's pages the script listens to (page.on, waitForEvent with a
 * predicate, page.route, context.waitForEvent("page")), queued in the order they happen and
 * handed back with the next answer (k6-compat/runtime/browser-wire.ts PageEvent). Their data
 * is read when they happen: a console message's arguments and a request's response die with
 * the page.
 *
 * A VU that waits for events while it awaits nothing else keeps a poll open (EVENT_POLL):
 * it is answered as soon as an event is queued, its page or context closes, or its timeout
 * passes, on this side's clock.
 */
import type { ConsoleMessage, Page, Request, Response } from "@cloudflare/playwright";
import type { CollectedPageEvent, EventPoll, PageEvent, RequestData } from "../../k6-compat/runtime/browser-wire.ts";
import { consoleData, requestData, responseData } from "./browser-waits.ts";

export class PageEventQueue {
  #queued: Promise<PageEvent>[] = [];
  readonly #wakers = new Set<() => void>();
  /** When each VU poll (by its number) stops waiting, from its first call. */
  readonly #deadlines = new Map<number, number>();

  /** An event, its data still being read (it is handed back in the order it happened). */
  push(event: Promise<PageEvent>): void {
    this.#queued.push(event);
    this.#wake();
  }

  /** Every event queued, in order, leaving none. */
  drain(): Promise<PageEvent[]> {
    return Promise.all(this.#queued.splice(0));
  }

  /** A page or context closed (or the iteration ended): the polls look whether theirs is still open. */
  closed(): void {
    this.#wake();
  }

  /**
   * Answers a VU's poll: "events" once any is queued, "closed" once `open()` is false,
   * "timeout" when `timeoutMs` (from the poll's first call, null: none) has passed.
   */
  async poll(id: number, timeoutMs: number | null, open: () => boolean, nowMs: () => number): Promise<EventPoll> {
    if (timeoutMs !== null && !this.#deadlines.has(id)) this.#deadlines.set(id, nowMs() + timeoutMs);
    const deadline = this.#deadlines.get(id);
    for (;;) {
      if (this.#queued.length) return "events";
      if (!open()) return "closed";
      const leftMs = deadline === undefined ? null : deadline - nowMs();
      if (leftMs !== null && leftMs <= 0) {
        this.#deadlines.delete(id);
        return "timeout";
      }
      await new Promise<void>((resolve) => {
        const timer = leftMs === null ? undefined : setTimeout(wake, leftMs);
        function wake() {
          clearTimeout(timer);
          resolve();
        }
        this.#wakers.add(wake);
      });
    }
  }

  #wake(): void {
    const wakers = [...this.#wakers];
    this.#wakers.clear();
    for (const wake of wakers) wake();
  }
}

/**
 * Starts queueing `page`'s events of one kind for the script, as k6 maps them (page_mapping.go
 * mapPageOn): a console message, a request (a failed one with its failure, a finished one with
 * its response), a response with its request.
 */
export function collectPageEvents(page: Page, handle: number, event: CollectedPageEvent, queue: PageEventQueue): void {
  if (event === "console") page.on("console", (message: ConsoleMessage) => queue.push(consoleData(message).then((data) => ({ page: handle, event, ...data }))));
  else if (event === "response")
    page.on("response", (response: Response) =>
      queue.push(Promise.resolve({ page: handle, event, response: { ...responseData(response)!, request: requestData(response.request()) } })),
    );
  else {
    const collect = (request: Request) => queue.push(requestEvent(handle, event, request));
    if (event === "request") page.on("request", collect);
    else if (event === "requestfinished") page.on("requestfinished", collect);
    else page.on("requestfailed", collect);
  }
}

async function requestEvent(page: number, event: "request" | "requestfinished" | "requestfailed", request: Request): Promise<PageEvent> {
  const data: RequestData = requestData(request);
  if (event === "requestfailed") return { page, event, request: { ...data, failure: request.failure() } };
  if (event === "requestfinished") return { page, event, request: { ...data, response: responseData(await request.response().catch(() => null)) } };
  return { page, event, request: data };
}
