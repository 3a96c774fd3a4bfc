/**
 * k6/browser's page events, waits with a predicate, page.route, the touchscreen and throttling
 * on the VU's side (issue 52): over a host that answers as the shard would
 * (workers/shard/browser-host.ts), events queued by the test crossing with the next answer and
 * a poll (EVENT_POLL) answered as soon as some are queued.
 */
import { describe, expect, it } from "vitest";
import { noSockets } from "../../../test/support/no-sockets.ts";
import { type BrowserCall, type BrowserHostApi, EVENT_POLL, type PageEvent, type RequestData } from "../browser-wire.ts";
import { CookieJar } from "../cookie-jar.ts";
import { createVuModules, type VuContext } from "../vu-modules.ts";
import type { IterationHost } from "../wire.ts";

const REQUEST: RequestData = {
  url: "http://t/api/pizza",
  method: "POST",
  headers: { "content-type": "application/json" },
  postData: "{}",
  resourceType: "fetch",
  isNavigationRequest: false,
};

/**
 * A VU whose host answers newContext/newPage with handles and polls with the events `emit`
 * queued. Its page.close() closes the page at once, as Playwright's does, but is answered only
 * when the test calls `answerClose()`; from then on polls answer "closed". `pollsFail`: every
 * poll rejects, as one on an iteration that has ended would.
 */
function browserVu({ pollsFail = false } = {}) {
  const calls: BrowserCall[] = [];
  let queued: PageEvent[] = [];
  const wakePolls: (() => void)[] = [];
  let handle = 0;
  let closedAtShard = false;
  let answerClose = () => {};
  /** Polls past this many are never answered: a VU that polls in a loop stops there, and the test counts. */
  const MAX_POLLS = 100;
  let polls = 0;
  const host: IterationHost & BrowserHostApi = {
    send: () => Promise.reject(new Error("no requests here")),
    sleep: async () => {},
    ...noSockets,
    async browser(_samples, call) {
      calls.push(call);
      if (call.method === EVENT_POLL) {
        if (++polls > MAX_POLLS) await new Promise(() => {});
        if (pollsFail) throw new Error("the iteration is over");
        // A poll with a short timeout times out when nothing is queued; any other waits for an event.
        if (!queued.length && !closedAtShard && typeof call.args[1] === "number" && call.args[1] < 1000) return { value: "timeout" };
        if (!queued.length && !closedAtShard) await new Promise<void>((resolve) => wakePolls.push(resolve));
        if (!queued.length && closedAtShard) return { value: "closed" };
      }
      if (call.method === "close") {
        closedAtShard = true;
        for (const wake of wakePolls.splice(0)) wake();
        await new Promise<void>((resolve) => {
          answerClose = resolve;
        });
      }
      const value = call.method === "newPage" ? ++handle : call.method === "newContext" ? 50 : undefined;
      const events = queued;
      queued = [];
      return { value: call.method === EVENT_POLL ? "events" : value, url: "http://t/", context: 50, ...(events.length ? { events } : {}) };
    },
  };
  const vu: VuContext = {
    id: 1,
    iteration: 0,
    iterationInTest: 0,
    scenario: { name: "ui", executor: "shared-iterations", startTimeMs: 0 },
    samples: [],
    host,
    jar: new CookieJar(),
    shared: new Map(),
  };
  const emit = (...events: PageEvent[]) => {
    queued.push(...events);
    for (const wake of wakePolls.splice(0)) wake();
  };
  const k6browser = (createVuModules(vu) as Record<string, any>)["k6/browser"];
  return { k6browser, calls, emit, answerClose: () => answerClose() };
}

/** The promise jobs queued now, and those they queue, run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("page.on for a page's requests", () => {
  it("tells the shard of each kind once and hands each handler k6's Request or Response, with failure() and response()", async () => {
    const { k6browser, calls, emit } = browserVu();
    const page = await k6browser.browser.newPage();
    const seen: unknown[] = [];
    page.on("request", (r: any) => seen.push(["request", r.url(), r.method(), r.resourceType(), r.failure()]));
    page.on("requestfailed", (r: any) => seen.push(["failed", r.url(), r.failure()?.errorText]));
    page.on("requestfinished", async (r: any) => seen.push(["finished", (await r.response()).status()]));
    page.on("response", async (r: any) => seen.push(["response", r.status(), r.request().method(), await r.headerValue("X-Size")]));
    emit(
      { page: 1, event: "request", request: REQUEST },
      { page: 1, event: "requestfailed", request: { ...REQUEST, failure: { errorText: "net::ERR_NAME_NOT_RESOLVED" } } },
      { page: 1, event: "response", response: { status: 201, statusText: "Created", url: REQUEST.url, headers: { "x-size": "3" }, request: REQUEST } },
      {
        page: 1,
        event: "requestfinished",
        request: { ...REQUEST, response: { status: 201, statusText: "Created", url: REQUEST.url, headers: {} } },
      },
    );
    await page.title();
    await settle();
    expect(calls[1]?.listen).toEqual([
      { page: 1, event: "request" },
      { page: 1, event: "requestfailed" },
      { page: 1, event: "requestfinished" },
      { page: 1, event: "response" },
    ]);
    expect(seen).toEqual([
      ["request", REQUEST.url, "POST", "fetch", null],
      ["failed", REQUEST.url, "net::ERR_NAME_NOT_RESOLVED"],
      ["response", 201, "POST", "3"],
      ["finished", 201],
    ]);
  });
});

describe("waitForEvent with a predicate", () => {
  it("runs the predicate on each event the poll brings until one passes, as page_waitForEvent.js waits", async () => {
    const { k6browser, calls, emit } = browserVu();
    const page = await k6browser.browser.newPage();
    const waited = page.waitForEvent("console", (msg: any) => msg.text().includes("hello"));
    await settle();
    emit({ page: 1, event: "console", type: "log", text: "some other message", args: [] });
    await settle();
    emit({ page: 1, event: "console", type: "log", text: "hello from page", args: [] });
    expect((await waited).text()).toBe("hello from page");
    // The poll told the shard to collect the console, with its timeout, k6's 30 s.
    expect(calls.find((c) => c.method === EVENT_POLL)).toMatchObject({
      target: { kind: "page", page: 1 },
      args: [1, 30_000],
      listen: [{ page: 1, event: "console" }],
    });
  });

  it("rejects when the shard's poll times out, and names a bad option", async () => {
    const { k6browser } = browserVu();
    const page = await k6browser.browser.newPage();
    await expect(page.waitForEvent("response", { predicate: () => true, timeout: 5 })).rejects.toThrow('page.waitForEvent("response"): timed out after 5 ms');
    await expect(page.waitForEvent("response", { predicate: 1 })).rejects.toThrow("predicate must be a function, not number");
    await expect(page.waitForEvent("response", { predicate: () => true, url: "x" })).rejects.toThrow("waitForEvent does not support option: 'url'");
  });

  it('resolves context.waitForEvent("page") with the page its predicate passes, the one newPage gave, as waitForEvent.js waits for the second', async () => {
    const { k6browser, emit } = browserVu();
    const context = await k6browser.browser.newContext();
    let counter = 0;
    const waited = context.waitForEvent("page", { predicate: () => ++counter === 2 });
    await settle();
    const first = await context.newPage();
    const second = await context.newPage();
    emit({ context: 50, event: "page", page: 1, url: "about:blank" }, { context: 50, event: "page", page: 2, url: "about:blank" });
    expect([(await waited) === second, first === second, counter]).toEqual([true, false, 2]);
    await expect(context.waitForEvent("close")).rejects.toThrow('incorrect event "close", "page" is the only event supported');
  });
});

describe("page.route", () => {
  it("registers the route, and its handler decides on each request held for it while the script awaits a navigation", async () => {
    const { k6browser, calls, emit } = browserVu();
    const page = await k6browser.browser.newPage();
    await page.route(/(\.png$)|(\.jpg$)/, (route: any) => route.abort());
    await page.route("http://t/api/pizza", (route: any) =>
      route.continue({ postData: JSON.stringify({ customName: "My Pizza" }), headers: { a: 1, b: null }, other: true }),
    );
    emit(
      { page: 1, event: "route", route: 7, id: 1, request: { ...REQUEST, url: "http://t/logo.png" } },
      { page: 1, event: "route", route: 8, id: 2, request: REQUEST },
    );
    await settle();
    await settle();
    const decided = calls.filter((c) => c.target.kind === "route").map((c) => [c.target, c.method, c.args]);
    // The routes, one poll kept open for their requests, the handlers' decisions on what it brought, the poll again.
    expect(calls.slice(1).map((c) => [c.method, c.args])).toEqual([
      ["route", [1, { $regexp: "(\\.png$)|(\\.jpg$)", flags: "" }]],
      ["nextEvents", [1, null]],
      ["route", [2, "http://t/api/pizza"]],
      ["abort", ["failed"]],
      ["continue", [{ headers: { a: "1" }, postData: '{"customName":"My Pizza"}' }]],
      ["nextEvents", [1, null]],
    ]);
    expect(decided).toEqual([
      // k6 aborts with "failed" when given no reason; continue takes headers, method, postData and url.
      [{ kind: "route", page: 1, route: 7 }, "abort", ["failed"]],
      [{ kind: "route", page: 1, route: 8 }, "continue", [{ headers: { a: "1" }, postData: '{"customName":"My Pizza"}' }]],
    ]);
  });

  it("stops polling when the shard answers that the page closed, before the script's page.close() is answered (route.js looped here)", async () => {
    const { k6browser, calls, answerClose } = browserVu();
    const page = await k6browser.browser.newPage();
    await page.route(/\.png$/, (route: any) => route.abort());
    await settle();
    // route.js's `finally { await page.close() }`: the shard closes the page, which ends the
    // open poll, and answers the close itself only after its own awaits (the page's vitals).
    const closing = page.close();
    await settle();
    await settle();
    const pollsBeforeCloseAnswered = calls.filter((c) => c.method === EVENT_POLL).length;
    answerClose();
    await closing;
    await settle();
    // The one poll the route opened, answered "closed": none after it, and none once the page is closed here too.
    expect([pollsBeforeCloseAnswered, calls.filter((c) => c.method === EVENT_POLL).length, page.isClosed()]).toEqual([1, 1, true]);
  });

  it("stops polling when a poll fails, rather than polling again at once", async () => {
    const { k6browser, calls } = browserVu({ pollsFail: true });
    const page = await k6browser.browser.newPage();
    await page.route("http://t/api/tools", (route: any) => route.abort());
    await settle();
    await settle();
    expect(calls.filter((c) => c.method === EVENT_POLL)).toHaveLength(1);
  });

  it("refuses a function as the URL and an option fulfill does not have; unroute sends the routes of that URL", async () => {
    const { k6browser, calls } = browserVu();
    const page = await k6browser.browser.newPage();
    await expect(
      page.route(
        () => true,
        () => {},
      ),
    ).rejects.toThrow("page.route(): the URL must be a string or a RegExp (k6 matches no function), not function");
    await page.route(/a/, () => {});
    await page.route("http://t/", () => {});
    await page.route(/a/, () => {});
    await page.unroute(/a/);
    expect(calls.at(-1)?.args).toEqual([1, 3]);
    const { fulfillOptions } = await import("./browser-routes.ts");
    expect(() => fulfillOptions({ status: 404, json: {} })).toThrow("route.fulfill(): unsupported fulfill option: 'json'");
  });
});

describe("the touchscreen and throttling", () => {
  it("sends touchscreen.tap by page, throttleNetwork with k6's networkProfiles, throttleCPU's rate", async () => {
    const { k6browser, calls } = browserVu();
    const page = await k6browser.browser.newPage();
    await page.touchscreen.tap(10, 20);
    await page.throttleNetwork(k6browser.networkProfiles["Slow 3G"]);
    await page.throttleCPU({ rate: 4 });
    expect(calls.slice(1).map((c) => [c.target, c.method, c.args])).toEqual([
      [{ kind: "touchscreen", page: 1 }, "tap", [10, 20]],
      [{ kind: "page", page: 1 }, "throttleNetwork", [{ latency: 2000, download: 50_000, upload: 50_000 }]],
      [{ kind: "page", page: 1 }, "throttleCPU", [{ rate: 4 }]],
    ]);
    expect(k6browser.networkProfiles["Fast 3G"]).toEqual({ latency: 562.5, download: 180_000, upload: 84_375 });
    expect(k6browser.networkProfiles["No Throttling"]).toEqual({ latency: 0, download: -1, upload: -1 });
  });
});
