/**
 * k6/browser's waits with a predicate (page.waitForEvent(event, predicate),
 * context.waitForEvent("page", { predicate })) in the script's isolate. The predicate is the
 * script's function, so it runs here: the shard collects the events (browser-wire.ts
 * PageListen) and they cross with the answers, each handed to the predicate until one
 * passes, as k6 tests each event in turn (page_mapping.go waitForEvent).
 *
 * The script may await nothing else while it waits, so the wait keeps one call at the shard
 * open (EVENT_POLL), answered as soon as events are waiting: that answer brings them. The
 * timeout is the shard's clock's (the isolate's clock stands still between its calls).
 */
import { type BrowserTarget, EVENT_POLL, type EventPoll, type PageEvent } from "../browser-wire.ts";
import type { ListenKey, PageTools } from "./browser-proxy.ts";

/** k6's default timeout of a wait (page.setDefaultTimeout changes the page's: browser-page.ts). */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** A wait's predicate and timeout, parsed as k6 parses waitForEvent's second argument. */
export interface WaitOptions {
  readonly predicate: ((value: unknown) => unknown) | null;
  readonly timeoutMs: number;
}

/**
 * waitForEvent's second argument (k6 v1.8.1 parsePageWaitForEventOptions and the context's
 * parseWaitForEventOptions): nothing, a predicate, or `{ predicate, timeout }`; anything else
 * named.
 */
export function waitOptions(what: string, options: unknown, defaultTimeoutMs: number): WaitOptions {
  if (options === undefined || options === null) return { predicate: null, timeoutMs: defaultTimeoutMs };
  if (typeof options === "function") return { predicate: options as WaitOptions["predicate"], timeoutMs: defaultTimeoutMs };
  if (typeof options !== "object") throw new Error(`${what}: the options must be a predicate function or { predicate, timeout }, not ${typeof options}`);
  let predicate: WaitOptions["predicate"] = null;
  let timeoutMs = defaultTimeoutMs;
  for (const [key, value] of Object.entries(options)) {
    if (key === "predicate") {
      if (typeof value !== "function") throw new Error(`${what}: predicate must be a function, not ${typeof value}`);
      predicate = value as WaitOptions["predicate"];
    } else if (key === "timeout") {
      timeoutMs = Math.trunc(Number(value));
      if (!Number.isFinite(timeoutMs) || timeoutMs < 0)
        throw new Error(`${what}: timeout must be a number of milliseconds, 0 or more, not ${JSON.stringify(value)}`);
    } else throw new Error(`${what}: waitForEvent does not support option: '${key}'`);
  }
  return { predicate, timeoutMs };
}

/** One wait: what it is called in errors, where its events come from, and what the script is given of each. */
export interface EventWait<T> {
  readonly what: string;
  readonly target: BrowserTarget;
  readonly key: ListenKey;
  readonly make: (event: PageEvent) => T;
  readonly options: WaitOptions;
}

/**
 * The first event of `wait.key` its predicate passes (the first at all without one), made
 * into what the script is given. Rejects when the predicate throws, when the timeout passes
 * (0: none, as k6 documents it) or when the page or context closes first.
 */
export function waitForEventWith<T>(tools: PageTools, wait: EventWait<T>): Promise<T> {
  const { predicate, timeoutMs } = wait.options;
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      remove();
      outcome();
    };
    const remove = tools.listen(wait.key, (event) => {
      if (settled) return;
      const value = wait.make(event as PageEvent);
      try {
        if (!predicate || predicate(value)) settle(() => resolve(value));
      } catch (error) {
        settle(() => reject(new Error(`${wait.what}: executing the predicate: ${error instanceof Error ? error.message : String(error)}`)));
      }
    });
    pollEvents(tools, wait.what, wait.target, timeoutMs > 0 ? timeoutMs : null, () => settled).then(
      (ended) => settle(() => reject(new Error(`${wait.what}: ${ended === "timeout" ? `timed out after ${timeoutMs} ms` : "closed before the event came"}`))),
      (error: unknown) => settle(() => reject(error)),
    );
  });
}

/**
 * Keeps a call open at the shard while `done()` is false, each answer bringing the events
 * waiting (handed to their handlers before it resolves: browser.ts). Resolves with why it
 * stopped: the shard's "timeout" or "closed", or "events" once done.
 */
export async function pollEvents(tools: PageTools, what: string, target: BrowserTarget, timeoutMs: number | null, done: () => boolean): Promise<EventPoll> {
  const id = tools.pollId();
  for (;;) {
    const { value } = await tools.call(what, target, EVENT_POLL, [id, timeoutMs]);
    if (done()) return "events";
    if (value !== "events") return value as EventPoll;
  }
}
