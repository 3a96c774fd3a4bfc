/**
 * The shard's queue of page events (browser-events.ts) and the CDP commands of throttling and
 * taps (browser-emulation.ts), in Node: a VU's poll is answered when an event is queued, when
 * its page closes, or when its timeout (from its first call) has passed; events drain in the
 * order they happened; throttling and taps send k6's CDP commands, bad input named.
 */
import type { CDPSession } from "@cloudflare/playwright";
import { describe, expect, it } from "vitest";
import type { PageEvent } from "../../k6-compat/runtime/browser-wire.ts";
import { tap, throttleCPU, throttleNetwork } from "./browser-emulation.ts";
import { PageEventQueue } from "./browser-events.ts";

const message = (text: string): PageEvent => ({ page: 1, event: "console", type: "log", text, args: [] });

describe("PageEventQueue", () => {
  it("answers a waiting poll once an event is queued, and drains events in the order they happened, not the order their data was read", async () => {
    const queue = new PageEventQueue();
    const polled = queue.poll(1, null, () => true, Date.now);
    let readLater: (event: PageEvent) => void = () => {};
    queue.push(new Promise((resolve) => (readLater = resolve)));
    queue.push(Promise.resolve(message("second")));
    expect(await polled).toBe("events");
    readLater(message("first"));
    expect((await queue.drain()).map((e) => (e as { text: string }).text)).toEqual(["first", "second"]);
    expect(await queue.drain()).toEqual([]);
  });

  it("answers closed once its page closes, and timeout when its time from its first call has passed", async () => {
    const queue = new PageEventQueue();
    let open = true;
    const closing = queue.poll(1, null, () => open, Date.now);
    open = false;
    queue.closed();
    expect(await closing).toBe("closed");
    // A clock the test moves: the poll's deadline is its first call's time plus its timeout.
    let nowMs = 1000;
    const first = queue.poll(
      2,
      50,
      () => true,
      () => nowMs,
    );
    nowMs = 1060;
    queue.closed();
    expect(await first).toBe("timeout");
    // The same poll number again starts a new wait, the last one having timed out.
    nowMs = 2000;
    const again = queue.poll(
      2,
      50,
      () => true,
      () => nowMs,
    );
    queue.push(Promise.resolve(message("in time")));
    expect(await again).toBe("events");
  });
});

/** A CDP session recording what it is sent. */
function recordingSession() {
  const sent: [string, unknown][] = [];
  const cdp = { send: async (method: string, params: unknown) => void sent.push([method, params]) } as unknown as CDPSession;
  return { cdp, sent };
}

describe("throttling and taps by CDP", () => {
  it("sends k6's commands: network conditions (a field left out is 0, as in k6), the CPU rate, a touch start and end", async () => {
    const { cdp, sent } = recordingSession();
    await throttleNetwork(cdp, { latency: 2000, download: 50_000, upload: 50_000 });
    await throttleNetwork(cdp, { latency: 100 });
    await throttleCPU(cdp, { rate: 4 });
    await tap(cdp, 10.5, 20);
    expect(sent).toEqual([
      ["Network.emulateNetworkConditions", { offline: false, latency: 2000, downloadThroughput: 50_000, uploadThroughput: 50_000 }],
      ["Network.emulateNetworkConditions", { offline: false, latency: 100, downloadThroughput: 0, uploadThroughput: 0 }],
      ["Emulation.setCPUThrottlingRate", { rate: 4 }],
      ["Input.dispatchTouchEvent", { type: "touchStart", touchPoints: [{ x: 10.5, y: 20 }] }],
      ["Input.dispatchTouchEvent", { type: "touchEnd", touchPoints: [] }],
    ]);
  });

  it.each([
    // A profile by a name that is not one of networkProfiles' (undefined).
    [
      () => throttleNetwork(recordingSession().cdp, undefined),
      'page.throttleNetwork(): the profile must be { latency, download, upload } (networkProfiles["Slow 3G"]), not undefined',
    ],
    [() => throttleNetwork(recordingSession().cdp, { latency: "slow" }), 'page.throttleNetwork(): latency must be a number, not "slow"'],
    // No rate, or one that would speed the page up.
    [
      () => throttleCPU(recordingSession().cdp, {}),
      "page.throttleCPU(): rate must be a slowdown factor of 1 or more (1: none, 4: four times slower), not undefined",
    ],
    [
      () => throttleCPU(recordingSession().cdp, { rate: 0.5 }),
      "page.throttleCPU(): rate must be a slowdown factor of 1 or more (1: none, 4: four times slower), not 0.5",
    ],
    [() => tap(recordingSession().cdp, "left", 2), 'touchscreen.tap(x, y): x and y must be numbers, not ["left",2]'],
  ])("%# names bad input", async (run, error) => {
    await expect(run()).rejects.toThrow(error);
  });
});
