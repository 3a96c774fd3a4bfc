/**
 * The shard engine in plain Node, under a discrete-event virtual clock: time only moves
 * when every pending promise has settled, so pacing, drops and slot waits are exact and
 * the test is immune to machine load.
 */
import { describe, expect, it } from "vitest";
import { parseRunSpec } from "../../core/run-spec.ts";
import type { ShardAssignment, ShardWindow } from "../../core/protocol.ts";
import { MetricStats } from "../../core/stats.ts";
import { customStepsFlow } from "../../scenarios/custom-steps.ts";
import type { Flow } from "../../scenarios/flow.ts";
import { ShardEngine } from "./engine.ts";

/** An engine running the spec's own steps, as LoadShard builds it. */
const engineFor = (a: ShardAssignment, ...rest: [ConstructorParameters<typeof ShardEngine>[1], typeof fetch, (w: Omit<ShardWindow, "part">) => void]) =>
  new ShardEngine(a, ...rest, customStepsFlow(a.spec));

class VirtualTime {
  now = 1_000_000;
  #timers: Array<{ at: number; resolve: () => void }> = [];

  sleep = (ms: number): Promise<void> => new Promise((resolve) => this.#timers.push({ at: this.now + ms, resolve }));
  readonly clock = { now: () => this.now, sleep: this.sleep };

  /** Runs until `done` settles: settle microtasks, then jump to the next timer. */
  async run<T>(done: Promise<T>): Promise<T> {
    let finished = false;
    const result = done.finally(() => (finished = true));
    while (!finished) {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      if (finished) break;
      this.#timers.sort((a, b) => a.at - b.at);
      const next = this.#timers.shift();
      if (!next) throw new Error("deadlock: nothing scheduled and the engine is not done");
      this.now = Math.max(this.now, next.at);
      next.resolve();
    }
    return result;
  }
}

function assignment(time: VirtualTime, spec: Record<string, unknown>, shard = { index: 0, weights: [1] }, maxInFlight = 1000): ShardAssignment {
  const parsed = parseRunSpec({ target: "http://127.0.0.1:9", steps: [{ path: "/" }], executor: "constant-arrival-rate", ...spec });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return {
    runId: "r-test", weights: shard.weights, iterationsPerInvocation: 1_000_000, t0Ms: time.now, mode: "local", flushGraceMs: 0,
    deadlineMs: time.now + parsed.spec.durationMs + parsed.spec.timeoutMs, spec: parsed.spec,
    shard: { index: shard.index, region: "wnam", weight: 1, segment: "0/1:1/1", maxInFlight },
  };
}

/** A fake target: answers after `delayMs` of virtual time, tracking calls and concurrency. */
function fakeTarget(time: VirtualTime, delayMs: number | ((n: number) => number), status = 200) {
  const calls: number[] = [];
  let awaitingHeaders = 0;
  let peakAwaitingHeaders = 0;
  const fetcher = (async () => {
    const n = calls.push(time.now) - 1;
    awaitingHeaders++;
    peakAwaitingHeaders = Math.max(peakAwaitingHeaders, awaitingHeaders);
    await time.sleep(typeof delayMs === "number" ? delayMs : delayMs(n));
    awaitingHeaders--;
    return new Response("ok", { status });
  }) as unknown as typeof fetch;
  return { fetcher, calls, peak: () => peakAwaitingHeaders };
}

function totals(windows: Array<Omit<ShardWindow, "part">>): MetricStats {
  const all = new MetricStats();
  for (const w of windows) for (const [, stats] of w.steps) all.mergeWire(stats);
  return all;
}

describe("ShardEngine", () => {
  it("sends every owned iteration at its due time, never early, and accounts for each once", async () => {
    const time = new VirtualTime();
    const a = assignment(time, { rate: 100, duration: "2s" }, { index: 1, weights: [1, 1] });
    const target = fakeTarget(time, 5);
    const windows: Array<Omit<ShardWindow, "part">> = [];
    const engine = engineFor(a, time.clock, target.fetcher, (w) => windows.push(w));
    const result = await time.run(engine.run(0, Infinity));
    expect(result.end).toBe("finished");
    expect(target.calls).toHaveLength(100); // half of 200 iterations
    target.calls.forEach((sentAt, k) => {
      const due = a.t0Ms + engine.share.dueMs(k);
      expect(sentAt).toBeGreaterThanOrEqual(due);
      expect(sentAt - due).toBeLessThanOrEqual(1); // wakes on the next millisecond
    });
    const t = totals(windows);
    expect(t.counters.completed).toBe(100);
    expect(t.counters.dropped).toBe(0);
    expect(t.trends.duration.quantile(0.5)).toBe(5000);
    expect(windows.map((w) => w.windowS)).toEqual([0, 1, 2].slice(0, windows.length));
  });

  it("counts dropped iterations when the in-flight cap is reached instead of delaying them", async () => {
    const time = new VirtualTime();
    // 100/s with 100 ms responses needs 10 in flight; the cap allows 5.
    const a = assignment(time, { rate: 100, duration: "2s", connectionSlots: 100 }, undefined, 5);
    const target = fakeTarget(time, 100);
    const windows: Array<Omit<ShardWindow, "part">> = [];
    const engine = engineFor(a, time.clock, target.fetcher, (w) => windows.push(w));
    await time.run(engine.run(0, Infinity));
    const t = totals(windows);
    expect(t.counters.sent + t.counters.dropped).toBe(200);
    expect(t.counters.dropped).toBeGreaterThan(80);
    expect(t.trends.lag.max).toBeLessThanOrEqual(1000); // sent ones were on time
  });

  it("enforces the connection-slot limit and measures the wait as lag and slot wait", async () => {
    const time = new VirtualTime();
    // 100/s with 50 ms to headers needs 5 slots; only 2 exist, so requests queue.
    const a = assignment(time, { rate: 100, duration: "1s", connectionSlots: 2 });
    const target = fakeTarget(time, 50);
    const windows: Array<Omit<ShardWindow, "part">> = [];
    const engine = engineFor(a, time.clock, target.fetcher, (w) => windows.push(w));
    await time.run(engine.run(0, Infinity));
    expect(target.peak()).toBe(2);
    const t = totals(windows);
    expect(t.counters.completed).toBe(100);
    expect(t.trends.slotWait.max).toBeGreaterThan(500_000); // queued for over half a second
    expect(t.trends.corrected.quantile(0.99)).toBeGreaterThan(t.trends.duration.quantile(0.99) * 5);
  });

  it("classifies timeouts, connection errors and status classes", async () => {
    const time = new VirtualTime();
    const a = assignment(time, { rate: 40, duration: "1s", steps: [{ path: "/", expect: { status: 200 }, checks: [{ status: 200 }] }] });
    let n = 0;
    const fetcher = (async () => {
      const i = n++ % 4;
      if (i === 0) throw new DOMException("timed out", "TimeoutError");
      if (i === 1) throw new TypeError("connection refused");
      return new Response("x", { status: i === 2 ? 503 : 200 });
    }) as unknown as typeof fetch;
    const windows: Array<Omit<ShardWindow, "part">> = [];
    await time.run(engineFor(a, time.clock, fetcher, (w) => windows.push(w)).run(0, Infinity));
    const c = totals(windows).counters;
    expect([c.completed, c.timeouts, c.connectionErrors, c.status5xx, c.failed]).toEqual([40, 10, 10, 10, 30]);
    expect([c.checksPassed, c.checksFailed]).toEqual([10, 30]); // errored requests fail their checks, as in k6
  });

  it("times out requests the target never answers, from the actual send, without a timer each", async () => {
    const time = new VirtualTime();
    const a = assignment(time, { rate: 10, duration: "1s", timeout: "500ms" });
    const fetcher = ((_url: string, init: RequestInit) =>
      new Promise((_, reject) => init.signal!.addEventListener("abort", () => reject(init.signal!.reason)))) as unknown as typeof fetch;
    const windows: Array<Omit<ShardWindow, "part">> = [];
    const result = await time.run(engineFor(a, time.clock, fetcher, (w) => windows.push(w)).run(0, Infinity));
    expect(result.end).toBe("finished");
    const t = totals(windows);
    expect([t.counters.completed, t.counters.timeouts, t.counters.failed]).toEqual([10, 10, 10]);
    // Each gave up between 500 ms and one loop turn later.
    expect(t.trends.corrected.min).toBeGreaterThanOrEqual(500_000);
    expect(t.trends.corrected.max).toBeLessThanOrEqual(502_000);
  });

  it("stops at a budget (handoff) and continues from the cursor without loss or overlap", async () => {
    const time = new VirtualTime();
    const a = assignment(time, { rate: 50, duration: "2s" });
    const target = fakeTarget(time, 2);
    const windows: Array<Omit<ShardWindow, "part">> = [];
    const first = engineFor(a, time.clock, target.fetcher, (w) => windows.push(w));
    const r1 = await time.run(first.run(0, 30));
    expect(r1).toMatchObject({ end: "handoff", cursor: 30, sent: 30 });
    const second = engineFor(a, time.clock, target.fetcher, (w) => windows.push(w));
    const r2 = await time.run(second.run(r1.cursor, Infinity));
    expect(r2.end).toBe("finished");
    expect(totals(windows).counters.completed).toBe(100);
    // The second the handoff fell in is reported by both invocations, in two parts.
    const seconds = windows.map((w) => w.windowS);
    expect(new Set(seconds).size).toBe(seconds.length - 1);
  });

  it("stops at its deadline whatever the schedule says", async () => {
    const time = new VirtualTime();
    const a = { ...assignment(time, { rate: 10, duration: "10s" }) };
    const cut = { ...a, deadlineMs: a.t0Ms + 2_050 };
    const target = fakeTarget(time, 1);
    const result = await time.run(engineFor(cut, time.clock, target.fetcher, () => {}).run(0, Infinity));
    expect(result.end).toBe("deadline");
    expect(target.calls.length).toBe(21); // due at 0, 100, …, 2000 ms
  });

  it("runs multi-step flows: per-step metrics, custom metrics in the window, and a flow that sends nothing counts as dropped", async () => {
    const time = new VirtualTime();
    const a = assignment(time, { rate: 10, duration: "1s" });
    const target = fakeTarget(time, 5);
    const windows: Array<Omit<ShardWindow, "part">> = [];
    const flow: Flow = {
      async run(io, it) {
        if (it.global % 5 === 4) return; // e.g. no free refresh family
        const first = await io.send(0, { url: "http://127.0.0.1:9/a", method: "GET" });
        await io.send(1, { url: "http://127.0.0.1:9/b", method: "GET" });
        io.check(first.status === 200);
        io.rate("flow_success", true);
        io.count("typed{type:x}", 2);
        io.trend("flow_duration", 10);
      },
    };
    await time.run(new ShardEngine(a, time.clock, target.fetcher, (w) => windows.push(w), flow).run(0, Infinity));
    const perStep = [0, 1].map((step) => {
      const s = new MetricStats();
      for (const w of windows) for (const [i, stats] of w.steps) if (i === step) s.mergeWire(stats);
      return s;
    });
    expect(target.calls).toHaveLength(16);
    expect(perStep[0]!.counters.completed).toBe(8);
    expect(perStep[1]!.counters.completed).toBe(8);
    // Checks and custom metrics land under the step of the last request sent.
    expect(perStep[1]!.counters.checksPassed).toBe(8);
    expect(perStep[1]!.custom.rates.get("flow_success")).toEqual([8, 8]);
    expect(perStep[1]!.custom.counters.get("typed{type:x}")).toBe(16);
    expect(perStep[1]!.custom.trends.get("flow_duration")!.count).toBe(8);
    expect(perStep[0]!.counters.dropped).toBe(2);
    // One iteration per flow, not per request.
    expect(perStep[0]!.counters.iterations + perStep[1]!.counters.iterations).toBe(8);
    // The second request of a flow answers to the moment it was asked for, not the schedule.
    expect(perStep[1]!.trends.lag.max).toBe(0);
  });
});
