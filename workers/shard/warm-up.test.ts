import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WARM_UP_LEAD_MS } from "../../core/schedule/shard-assignment.ts";
import { firstAlarmAtMs, sendWarmUp, shouldWarmUp } from "./warm-up.ts";

describe("a shard's warm-up", () => {
  it("wakes WARM_UP_LEAD_MS before t0, or at once when that has passed", () => {
    expect(firstAlarmAtMs(10_000, 5_000)).toBe(10_000 - WARM_UP_LEAD_MS);
    expect(firstAlarmAtMs(10_000, 9_500)).toBe(9_500);
    expect(firstAlarmAtMs(10_000, 12_000)).toBe(12_000);
  });

  it("warms up once, and only before t0", () => {
    expect(shouldWarmUp(10_000, 9_000, false)).toBe(true);
    expect(shouldWarmUp(10_000, 9_000, true)).toBe(false);
    expect(shouldWarmUp(10_000, 10_000, false)).toBe(false);
  });

  describe("the warm-up request", () => {
    const seen: Array<{ method: string; url: string }> = [];
    const server = createServer((request, response) => {
      seen.push({ method: request.method!, url: request.url! });
      response.writeHead(405).end();
    });
    let origin = "";
    beforeAll(async () => {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it("is a HEAD of the target's origin, whatever it answers", async () => {
      const warmUp = await sendWarmUp(fetch, `${origin}/api/v1/users?limit=5`, { now: () => performance.now() });
      expect(seen).toEqual([{ method: "HEAD", url: "/" }]);
      expect(warmUp).toMatchObject({ url: `${origin}/`, status: 405 });
      expect(warmUp!.durationMs).toBeGreaterThanOrEqual(0);
    });

    it("says why there was no answer, and sends nothing without a target", async () => {
      const refused = await sendWarmUp(fetch, "http://127.0.0.1:1/", { now: () => performance.now() });
      expect(refused).toMatchObject({ url: "http://127.0.0.1:1/", status: 0 });
      expect(refused!.error).toBeTruthy();
      expect(await sendWarmUp(fetch, "", { now: () => 0 })).toBeNull();
    });
  });
});
