/**
 * The shard's browser as k6 shows it to a script (workers/shard/browser-session.ts,
 * browser-host.ts), on the local Browser Run binding's Chromium: its user agent without
 * "Headless" and its version, told with a new context's answer (browser.userAgent(),
 * version()) and sent by the context's pages unless the script gives a user agent, and a
 * k6 device descriptor given to newContext (k6's device_emulation example) emulated as
 * Playwright takes it: viewport, deviceScaleFactor, isMobile, hasTouch and userAgent.
 */
import type { BrowserContextOptions } from "@cloudflare/playwright";
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { BrowserAnswer, BrowserIdentity } from "../../k6-compat/runtime/browser-wire.ts";
import { browserDevices } from "../../k6-compat/runtime/vu-modules/browser-devices.ts";
import { BrowserHost } from "../../workers/shard/browser-host.ts";
import { ShardBrowser } from "../../workers/shard/browser-session.ts";

/** What a page of a context made with `options` reads of itself, and what the context's answer told. */
async function pageOf(options: unknown): Promise<{ told: BrowserIdentity | undefined; seen: Record<string, unknown> }> {
  const stub = env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`browser-identity-${crypto.randomUUID()}`));
  return runInDurableObject(stub, async (_instance, state) => {
    const session = new ShardBrowser(env.BROWSER!, state.storage.kv);
    const host = new BrowserHost(
      {
        newContext: (o) => session.newContext(o as BrowserContextOptions | undefined),
        identity: () => session.identity(),
        saveScreenshot: async () => {},
      },
      () => null,
      () => {},
    );
    try {
      const context: BrowserAnswer = await host.call({ target: { kind: "browser" }, method: "newContext", args: options === undefined ? [] : [options] });
      const { value: page } = await host.call({ target: { kind: "context", context: context.value as number }, method: "newPage", args: [] });
      // A mobile browser lays a page without a viewport tag out 980 pixels wide: this one has one, as test.k6.io has.
      const meta = '<meta name="viewport" content="width=device-width, initial-scale=1"><p>k6</p>';
      await host.call({ target: { kind: "page", page: page as number }, method: "setContent", args: [meta] });
      const read =
        "() => ({ userAgent: navigator.userAgent, width: document.documentElement.clientWidth, height: document.documentElement.clientHeight, scale: window.devicePixelRatio, touch: navigator.maxTouchPoints > 0 })";
      const { value } = await host.call({ target: { kind: "page", page: page as number }, method: "evaluate", args: [read, true] });
      return { told: context.browser, seen: value as Record<string, unknown> };
    } finally {
      await host.close();
      await session.endInvocation(true);
    }
  });
}

describe("the shard's browser as k6 shows it", () => {
  it("tells its user agent without Headless and its version with a new context, and its pages send that user agent unless the script gives one", async () => {
    const plain = await pageOf(undefined);
    const given = await pageOf({ userAgent: "k6 test user agent" });
    expect(plain.told?.userAgent).toMatch(/^Mozilla\/5\.0 .*Chrome\/\d+/);
    expect(plain.told?.userAgent).not.toContain("Headless");
    expect(plain.told?.version).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    // Chrome's user agent gives only the major version (Chrome/156.0.0.0).
    expect(plain.told?.userAgent).toContain(`Chrome/${plain.told?.version.split(".")[0]}.`);
    expect(plain.seen.userAgent).toBe(plain.told?.userAgent);
    // The script's own user agent is the page's; browser.userAgent() stays the browser's.
    expect([given.seen.userAgent, given.told]).toEqual(["k6 test user agent", plain.told]);
  }, 60_000);

  it("emulates a k6 device descriptor given to newContext: its viewport, scale, touch and user agent", async () => {
    const device = browserDevices()["iPhone X"]!;
    const { seen } = await pageOf(Object.assign({ locale: "es-ES" }, device));
    expect(seen).toEqual({ userAgent: device.userAgent, width: 375, height: 812, scale: 3, touch: true });
  }, 60_000);
});
