/**
 * What k6/browser does to a page through raw CDP, on the page's own CDP session
 * (context.newCDPSession(page), browser-host.ts): page.throttleNetwork, page.throttleCPU and
 * page.touchscreen.tap, sent as k6 v1.8.1 sends them (network_manager.go ThrottleNetwork,
 * frame_session.go throttleCPU, touchscreen.go). Playwright's own touchscreen refuses a
 * context without `hasTouch`, where k6's taps any page: so the touch events go raw here too.
 */
import type { CDPSession } from "@cloudflare/playwright";

/** page.throttleNetwork(profile): k6's NetworkProfile, `latency` ms and throughputs in bytes/s (-1: none; a field left out is 0, as in k6). */
export async function throttleNetwork(cdp: CDPSession, profile: unknown): Promise<void> {
  if (typeof profile !== "object" || profile === null)
    throw new Error(
      `page.throttleNetwork(): the profile must be { latency, download, upload } (networkProfiles["Slow 3G"]), not ${profile === null ? "null" : typeof profile}`,
    );
  const given = profile as Record<string, unknown>;
  const field = (name: string) => {
    const value = given[name] === undefined ? 0 : Number(given[name]);
    if (!Number.isFinite(value)) throw new Error(`page.throttleNetwork(): ${name} must be a number, not ${JSON.stringify(given[name])}`);
    return value;
  };
  await cdp.send("Network.emulateNetworkConditions", {
    offline: false,
    latency: field("latency"),
    downloadThroughput: field("download"),
    uploadThroughput: field("upload"),
  });
}

/** page.throttleCPU({ rate }): the slowdown factor, 1 for none. */
export async function throttleCPU(cdp: CDPSession, profile: unknown): Promise<void> {
  const rate = Number((profile as { rate?: unknown } | null | undefined)?.rate);
  if (!Number.isFinite(rate) || rate < 1)
    throw new Error(
      `page.throttleCPU(): rate must be a slowdown factor of 1 or more (1: none, 4: four times slower), not ${JSON.stringify((profile as { rate?: unknown } | null)?.rate)}`,
    );
  await cdp.send("Emulation.setCPUThrottlingRate", { rate });
}

/** page.touchscreen.tap(x, y): a touch starting and ending at the point, in CSS pixels of the viewport. */
export async function tap(cdp: CDPSession, x: unknown, y: unknown): Promise<void> {
  const point = { x: Number(x), y: Number(y) };
  if (!Number.isFinite(point.x) || !Number.isFinite(point.y)) throw new Error(`touchscreen.tap(x, y): x and y must be numbers, not ${JSON.stringify([x, y])}`);
  await cdp.send("Input.dispatchTouchEvent", { type: "touchStart", touchPoints: [point] });
  await cdp.send("Input.dispatchTouchEvent", { type: "touchEnd", touchPoints: [] });
}
