/**
 * k6 options a shard acts on for a script's iterations, in plain Node under virtual time:
 * minIterationDuration (the flow's minIterationMs, waited out after a short iteration) and a
 * request's own timeout (params.timeout, the FlowRequest's timeoutMs) over the run's.
 */
import { describe, expect, it } from "vitest";
import type { ShardAssignment, ShardWindow } from "../../core/run/protocol.ts";
import { MetricStats } from "../../core/metrics/metric-stats.ts";
import { ITERATION_DURATION } from "../../core/metrics/aggregate.ts";
import type { Flow } from "../../scenarios/flow.ts";
import { ShardEngine } from "./engine.ts";
import { VirtualTime } from "../../test/support/virtual-time.ts";
import { testAssignment } from "../../test/support/shard-assignment-fixture.ts";

function assignment(time: VirtualTime, spec: Record<string, unknown>, maxInFlight: number): ShardAssignment {
  return testAssignment(spec, { runId: "r-k6-options", t0Ms: time.now, maxInFlight });
}

/** A target answering after 10 ms of virtual time, noting when each request came. */
function target(time: VirtualTime) {
  const calls: number[] = [];
  const fetcher = (async () => {
    calls.push(time.now);
    await time.sleep(10);
    return new Response("ok");
  }) as unknown as typeof fetch;
  return { fetcher, calls };
}

/** A target that never answers: each request ends only when its signal aborts it. */
const neverAnswers = ((_url: string, init: RequestInit) =>
  new Promise((_, reject) => init.signal!.addEventListener("abort", () => reject(init.signal!.reason)))) as unknown as typeof fetch;

/** A script-like flow: one request an iteration, timed as k6's iteration_duration. */
const oneRequest = (minIterationMs?: number): Flow => ({
  timesIterations: true,
  ...(minIterationMs !== undefined ? { minIterationMs } : {}),
  async run(io) {
    await io.send(0, { url: "http://127.0.0.1:9/", method: "GET" });
  },
});

async function run(a: ShardAssignment, fetcher: typeof fetch, flow: Flow, time: VirtualTime): Promise<MetricStats> {
  const windows: Array<Omit<ShardWindow, "part">> = [];
  await time.run(new ShardEngine(a, time.clock, fetcher, (w) => windows.push(w), flow).run(0, Infinity));
  const all = new MetricStats();
  for (const w of windows) for (const [, stats] of w.steps) all.mergeWire(stats);
  return all;
}

describe("minIterationDuration", () => {
  it.each([
    // k6: 1 VU for 3 s of 10 ms iterations with minIterationDuration 1s runs 3, one a second.
    [1_000, [0, 1_000, 2_000]],
    // Without it the VU runs them back to back: 3 s / 10 ms.
    [undefined, 300],
  ])("paces a VU's iterations to %s ms, iteration_duration without the wait", async (minIterationMs, expected) => {
    const time = new VirtualTime();
    const a = assignment(time, { executor: "constant-vus", vus: 1, duration: "3s" }, 1);
    const t = target(time);
    const stats = await run(a, t.fetcher, oneRequest(minIterationMs), time);
    if (Array.isArray(expected)) expect(t.calls.map((c) => c - a.t0Ms)).toEqual(expected);
    else expect(t.calls).toHaveLength(expected);
    const iterations = Array.isArray(expected) ? expected.length : expected;
    expect(stats.counters.iterations).toBe(iterations);
    // k6 times the iteration itself (runFn's end), not the wait after it.
    expect(stats.custom.trends.get(ITERATION_DURATION)!.max / 1000).toBeLessThan(20);
  });

  it("keeps an arrival-rate VU busy through the wait, as k6 does: the iterations due meanwhile find no VU and are dropped", async () => {
    const time = new VirtualTime();
    // 10 iterations due in 1 s, one VU, each iteration held to 500 ms: the ones due at 0 and
    // 500 ms run, the 8 others are dropped.
    const a = assignment(time, { executor: "constant-arrival-rate", rate: 10, duration: "1s", preAllocatedVUs: 1, maxVUs: 1 }, 1);
    const t = target(time);
    const stats = await run(a, t.fetcher, oneRequest(500), time);
    expect(t.calls.map((c) => c - a.t0Ms)).toEqual([0, 500]);
    expect([stats.counters.iterations, stats.counters.dropped]).toEqual([2, 8]);
  });

  it("is cut by the iteration's hard stop: a wait past the graceful stop does not hold the run", async () => {
    const time = new VirtualTime();
    const a = assignment(time, { executor: "constant-vus", vus: 1, duration: "1s", gracefulStop: "1s" }, 1);
    const t = target(time);
    const stats = await run(a, t.fetcher, oneRequest(60_000), time);
    expect(t.calls).toHaveLength(1);
    expect(stats.counters.iterations).toBe(1);
    expect(time.now - a.t0Ms).toBeLessThanOrEqual(2_000 + 1_000);
  });
});

describe("a request's own timeout", () => {
  it("aborts it at its params.timeout, not the run's, and counts it a timeout", async () => {
    const time = new VirtualTime();
    const a = assignment(time, { executor: "constant-arrival-rate", rate: 1, duration: "1s", timeout: "30s" }, 10);
    const flow: Flow = {
      async run(io) {
        const r = await io.send(0, { url: "http://127.0.0.1:9/", method: "GET", timeoutMs: 500 });
        io.check(r.status === 0 && r.error === "timeout");
      },
    };
    const started = time.now;
    const stats = await run(a, neverAnswers, flow, time);
    expect([stats.counters.timeouts, stats.counters.failed, stats.counters.checksPassed]).toEqual([1, 1, 1]);
    expect(stats.errors).toEqual({ "timeout after 500 ms": 1 });
    expect(time.now - started).toBeLessThan(30_000);
  });
});

describe("a k6 Gauge", () => {
  it("keeps the value set last, stamped with the shard's clock, beside its samples as a trend", async () => {
    const time = new VirtualTime();
    const a = assignment(time, { executor: "constant-vus", vus: 1, duration: "3s" }, 1);
    let n = 0;
    const flow: Flow = {
      async run(io) {
        await io.send(0, { url: "http://127.0.0.1:9/", method: "GET" });
        n++;
        io.trend("depth", n);
        io.gauge?.("depth", n);
        await io.sleep(1_000);
      },
    };
    const stats = await run(a, target(time).fetcher, flow, time);
    // Iterations at 0, 1.01 and 2.02 s set it to 1, 2 and 3: the last is the third's.
    expect(stats.custom.gauges.get("depth")).toEqual([a.t0Ms + 2_030, 3]);
    expect(stats.custom.trends.get("depth")!.max / 1000).toBe(3);
  });
});
