/**
 * options.rps (runtime/rps-limit.ts): the pure bucket of burst 1 against k6's rate.Limiter
 * behaviour, a shard's part of the rate, the option as k6 reads it, and a VU's requests
 * waiting their turn through the shard's sleep before they are sent.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RpsLimiter, rpsOption, rpsSlot, scenarioShare, shardLimiter, shardRps } from "./runtime/rps-limit.ts";
import { createVuModules } from "./runtime/vu-modules.ts";
import type { IterationHost, WireResponse } from "./runtime/wire.ts";
import { noSockets } from "../test/support/no-sockets.ts";
import { vuContext } from "../test/support/vu-context.ts";

describe("rpsSlot", () => {
  it.each([
    // An idle bucket (its slot long past) holds one token: the request goes now.
    [1_000, 0, 200, { waitMs: 0, nextFreeMs: 1_200 }],
    // Its slot is now: no wait.
    [1_000, 1_000, 200, { waitMs: 0, nextFreeMs: 1_200 }],
    // A request 100 ms before the free slot waits those 100 ms; the next goes one interval after.
    [1_000, 1_100, 200, { waitMs: 100, nextFreeMs: 1_300 }],
    // Many queued turns ahead: it waits for all of them (no burst beyond 1).
    [1_000, 3_000, 200, { waitMs: 2_000, nextFreeMs: 3_200 }],
    // A never-used bucket.
    [5, Number.NEGATIVE_INFINITY, 1_000 / 3, { waitMs: 0, nextFreeMs: 5 + 1_000 / 3 }],
  ])("now %d, free at %d, every %d ms → %o", (now, free, interval, expected) => {
    expect(rpsSlot(now, free, interval)).toEqual(expected);
  });

  it("never sends early and never sends two within an interval, whatever the arrival times", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 500 }), { minLength: 1, maxLength: 50 }), fc.integer({ min: 1, max: 1000 }), (gaps, interval) => {
        let now = 0;
        let free = Number.NEGATIVE_INFINITY;
        let lastSent = Number.NEGATIVE_INFINITY;
        for (const gap of gaps) {
          now += gap;
          const slot = rpsSlot(now, free, interval);
          const sentAt = now + slot.waitMs;
          expect(slot.waitMs).toBeGreaterThanOrEqual(0);
          expect(sentAt).toBeGreaterThanOrEqual(free);
          expect(sentAt - lastSent).toBeGreaterThanOrEqual(interval);
          lastSent = sentAt;
          free = slot.nextFreeMs;
        }
      }),
    );
  });
});

describe("RpsLimiter", () => {
  it("lets 5 requests a second through when 20 ask at once: the 20th waits 3.8 s", () => {
    const limiter = new RpsLimiter(5, () => 10_000);
    const waits = Array.from({ length: 20 }, () => limiter.reserve());
    expect(waits.slice(0, 3)).toEqual([0, 200, 400]);
    expect(waits[19]).toBe(3_800);
  });

  it("refuses a rate that is not above 0", () => {
    expect(() => new RpsLimiter(0)).toThrow("requests per second must be above 0, got 0");
  });
});

describe("a shard's part of rps", () => {
  it.each([
    // One shard: the whole rate.
    [5, 1, 1, 5],
    // Four even shards: a quarter each.
    [5, 0.25, 1, 1.25],
    // Uneven shards (weights 3 and 1): 3/4 and 1/4 of the rate.
    [8, 3 / 4, 1, 6],
    [8, 1 / 4, 1, 2],
    // A scenario with half the test's VUs, its shard half of it.
    [10, 0.5, 0.5, 2.5],
  ])("rps %d, %d of its scenario, scenario %d of the test → %d/s", (rps, ofScenario, ofTest, expected) => {
    expect(shardRps(rps, ofScenario, ofTest)).toBeCloseTo(expected, 10);
  });

  it("the parts of uneven shards sum to rps", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 20 }), fc.integer({ min: 1, max: 10_000 }), (weights, rps) => {
        const cycle = weights.reduce((a, b) => a + b, 0);
        const sum = weights.reduce((total, w) => total + shardRps(rps, w / cycle, 1), 0);
        expect(sum).toBeCloseTo(rps, 6);
      }),
    );
  });

  it("refuses a share outside (0, 1]", () => {
    expect(() => shardRps(5, 0, 1)).toThrow("a shard's share of its scenario is in (0, 1], got 0");
  });

  it("splits the test's rate over scenarios by their peak VUs", () => {
    const options = {
      scenarios: {
        browse: { executor: "constant-vus", vus: 30 },
        ramp: { executor: "ramping-vus", startVUs: 0, stages: [{ target: 50 }, { target: 10 }] },
        orders: { executor: "constant-arrival-rate", preAllocatedVUs: 5, maxVUs: 20 },
      },
    };
    expect(scenarioShare(options, "browse")).toBeCloseTo(30 / 100, 10);
    expect(scenarioShare(options, "ramp")).toBeCloseTo(50 / 100, 10);
    expect(scenarioShare(options, "orders")).toBeCloseTo(20 / 100, 10);
    // One scenario, or options without scenarios: the whole rate.
    expect(scenarioShare({ scenarios: { default: { executor: "constant-vus", vus: 50 } } }, "default")).toBe(1);
    expect(scenarioShare(null, "default")).toBe(1);
  });

  it("keeps one bucket per shard, at its part of the rate", () => {
    const limiters = new Map<number, RpsLimiter>();
    const a = shardLimiter(limiters, 4, { index: 0, ofScenario: 0.5 }, () => 1);
    expect(shardLimiter(limiters, 4, { index: 0, ofScenario: 0.5 }, () => 1)).toBe(a);
    const b = shardLimiter(limiters, 4, { index: 1, ofScenario: 0.5 }, () => 1);
    expect(b).not.toBe(a);
    // 2/s: the second request of shard 0 waits 500 ms, shard 1's first does not wait.
    a!.reserve();
    expect(a!.reserve()).toBeGreaterThan(400);
    expect(b!.reserve()).toBe(0);
    expect(shardLimiter(limiters, undefined, { index: 0, ofScenario: 1 }, () => 1)).toBeNull();
  });
});

describe("rpsOption", () => {
  it.each([
    [5, 5],
    [undefined, undefined],
    [null, undefined],
    // k6 makes no limiter for 0 or less.
    [0, undefined],
    [-3, undefined],
  ])("%s → %s", (value, expected) => {
    expect(rpsOption(value)).toBe(expected);
  });

  it.each([[2.5], ["5"], [true]])("refuses %j, naming the option", (value) => {
    expect(() => rpsOption(value)).toThrow(`options.rps must be a whole number of requests per second, got ${JSON.stringify(value)}`);
  });
});

describe("a VU's requests under options.rps", () => {
  it("wait their turn through the shard's sleep before being sent, the samples going with the wait", async () => {
    const calls: string[] = [];
    const answer: WireResponse = { status: 200, error: null, headers: {}, setCookies: [], body: "", durationMs: 1 };
    const host: IterationHost = {
      async send(samples, request) {
        calls.push(`send ${request.url} (${samples.length} samples)`);
        return answer;
      },
      async sleep(samples, ms) {
        calls.push(`sleep ${ms} (${samples.length} samples)`);
      },
      ...noSockets,
    };
    const context = vuContext(host, { id: 1 });
    context.rpsLimit = new RpsLimiter(2, () => 0);
    const modules = createVuModules(context) as Record<string, any>;
    modules.k6.check(1, { one: () => true });
    await modules["k6/http"].get("http://a.test/1");
    modules.k6.check(1, { two: () => true });
    await modules["k6/http"].get("http://a.test/2");
    expect(calls).toEqual(["send http://a.test/1 (1 samples)", "sleep 500 (1 samples)", "send http://a.test/2 (0 samples)"]);
  });

  it("does not wait without a limit", async () => {
    const slept: number[] = [];
    const host: IterationHost = {
      send: async () => ({ status: 200, error: null, headers: {}, setCookies: [], body: "", durationMs: 1 }),
      sleep: async (_, ms) => void slept.push(ms),
      ...noSockets,
    };
    const modules = createVuModules(vuContext(host, { id: 1 })) as Record<string, any>;
    await modules["k6/http"].get("http://a.test/1");
    await modules["k6/http"].get("http://a.test/2");
    expect(slept).toEqual([]);
  });
});
