/**
 * `http.asyncRequest` holds its VU's iteration as k6's event loop holds it (runtime/event-loop.ts
 * `track`, k6 v1.8.1 internal/js/eventloop): an iteration whose function returned while a
 * request it did not await is in flight ends only once that request settled, and a `.then`
 * of it that starts another request or a timer is the same iteration's work. A request the
 * shard cuts at the iteration's stop time settles (rejected), so the loop ends then. Plain
 * Node over a scripted host whose requests answer after `delayMs`.
 */
import { vuContext } from "../test/support/vu-context.ts";
import { describe, expect, it } from "vitest";
import { createVuModules } from "./runtime/vu-modules.ts";
import type { IterationHost } from "./runtime/wire.ts";

/** A VU whose host answers each request 200 after `delayMs`, or refuses it when `refuse` says. */
function vuWithSlowHost(delayMs: number, refuse: (url: string) => boolean = () => false) {
  const answered: string[] = [];
  const host: IterationHost = {
    async send(_samples, request) {
      await new Promise((r) => setTimeout(r, delayMs));
      if (refuse(request.url)) throw new Error("IterationInterrupted: in flight at the iteration's graceful stop");
      answered.push(request.url);
      return { status: 200, error: null, headers: {}, setCookies: [], body: "{}", durationMs: delayMs };
    },
    sleep: (_samples, ms) => new Promise((r) => setTimeout(r, ms)),
    socketSession: () => Promise.reject(new Error("no sockets here")),
    socketSend: async () => {},
    socketClose: async () => {},
  };
  const context = vuContext(host, { scenario: { name: "default", executor: "shared-iterations", startTimeMs: 0 } });
  const modules = createVuModules(context) as Record<string, any>;
  return { http: modules["k6/http"], timers: modules["k6/timers"], loop: context.loop!, answered };
}

describe("http.asyncRequest and the VU's event loop", () => {
  it("keeps the iteration until a request it did not await has settled (k6: 2 requests, not 1)", async () => {
    const { http, loop, answered } = vuWithSlowHost(40);
    // The iteration's function: one request not awaited, one awaited (the script).
    http.asyncRequest("GET", "http://t/slow");
    expect(loop.pending).toBe(1);
    await loop.drained();
    expect(answered).toEqual(["http://t/slow"]);
    expect(loop.pending).toBe(0);
  });

  it("waits for what a settled request's .then starts: another request, then a timer", async () => {
    const { http, timers, loop, answered } = vuWithSlowHost(20);
    const fired: string[] = [];
    http
      .asyncRequest("GET", "http://t/first")
      // A promise job between them: the loop looks only once the queued jobs have run.
      .then(() => Promise.resolve())
      .then(() => http.asyncRequest("GET", "http://t/second"))
      .then(() => timers.setTimeout(() => fired.push("timer"), 20));
    await loop.drained();
    expect(answered).toEqual(["http://t/first", "http://t/second"]);
    expect(fired).toEqual(["timer"]);
  });

  it("ends when the shard cuts the request at the iteration's stop time, the script seeing it rejected", async () => {
    const { http, loop } = vuWithSlowHost(20, (url) => url.endsWith("/cut"));
    let seen = "";
    http.asyncRequest("GET", "http://t/cut").catch((e: Error) => (seen = e.message));
    await loop.drained();
    expect(seen).toMatch(/IterationInterrupted/);
    expect(loop.pending).toBe(0);
  });
});
