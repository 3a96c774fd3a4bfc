/**
 * The shard engine in plain Node, under a discrete-event virtual clock: time only moves
 * when every pending promise has settled, so pacing, drops and slot waits are exact and
 * the test is immune to machine load.
 */
import { describe, expect, it } from "vitest";
import { parseRunSpec } from "../../core/spec/run-spec.ts";
import type { ShardAssignment, ShardWindow } from "../../core/run/protocol.ts";
import { MetricStats } from "../../core/metrics/metric-stats.ts";
import { ShardVus, VuSchedule } from "../../core/schedule/vu-schedule.ts";
import { afterEndMs } from "../../core/schedule/graceful-stop.ts";
import { customStepsFlow } from "../../scenarios/custom-steps.ts";
import type { Flow } from "../../scenarios/flow.ts";
import { ShardEngine } from "./engine.ts";
import { subMetricFilters } from "../../core/metrics/sub-metrics.ts";
import { parseRunThresholds } from "../../core/run/run-thresholds.ts";
import { VirtualTime } from "../../test/support/virtual-time.ts";
import { testAssignment } from "../../test/support/shard-assignment-fixture.ts";
import { RECORDED_RESPONSE_HEADERS } from "../../test/fixtures/cloudflare/cloudflare-response-headers.ts";
import { shardSliceOf } from "../../core/schedule/shard-slice.ts";

/** An engine running the spec's own steps, as LoadShard builds it. */
const engineFor = (a: ShardAssignment, ...rest: [ConstructorParameters<typeof ShardEngine>[1], typeof fetch, (w: Omit<ShardWindow, "part">) => void]) =>
  new ShardEngine(a, ...rest, customStepsFlow(a.spec));

function assignment(time: VirtualTime, spec: Record<string, unknown>, shard = { index: 0, weights: [1] }, maxInFlight = 1000): ShardAssignment {
  return testAssignment({ executor: "constant-arrival-rate", ...spec }, { runId: "r-test", t0Ms: time.now, ...shard, maxInFlight });
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

/** A target that never answers: each request ends only when its signal aborts it. */
const neverAnswers = ((_url: string, init: RequestInit) =>
  new Promise((_, reject) => init.signal!.addEventListener("abort", () => reject(init.signal!.reason)))) as unknown as typeof fetch;

describe("ShardEngine", () => {
  it("records the sub-metrics the run's thresholds name, a spec's untagged steps with k6's default tags (name and url the URL, method, status)", async () => {
    const time = new VirtualTime();
    const thresholds = { "http_reqs{status:503}": ["count==10"], "http_req_failed{method:GET}": ["rate<0.5"], "http_req_duration{status:200}": ["p(95)<1000"] };
    const spec = assignment(time, { rate: 20, duration: "1s", thresholds });
    const a = { ...spec, subMetrics: subMetricFilters(parseRunThresholds(spec.spec).thresholds) };
    let n = 0;
    const fetcher = (async () => new Response("x", { status: n++ % 2 ? 503 : 200 })) as unknown as typeof fetch;
    const windows: Array<Omit<ShardWindow, "part">> = [];
    await time.run(engineFor(a, time.clock, fetcher, (w) => windows.push(w)).run(0, Infinity));
    const custom = totals(windows).custom;
    expect(custom.counters.get("http_reqs{status:503}")).toBe(10);
    expect(custom.rates.get("http_req_failed{method:GET}")).toEqual([10, 20]);
    expect(custom.trends.get("http_req_duration{status:200}")!.count).toBe(10);
  });

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

  it("records client_delay: 0 while the loop is free, the stall (erring low) when the isolate held a response", async () => {
    const time = new VirtualTime();
    const a = assignment(time, { rate: 10, duration: "2s" });
    let n = 0;
    // Every fourth response is handled only after the isolate was busy for 30 ms: the
    // virtual clock moves while no timer can run, as a window flush would hold workerd.
    const fetcher = (async () => {
      const stalled = n++ % 4 === 3;
      await time.sleep(20);
      if (stalled) time.now += 30;
      return new Response("ok");
    }) as unknown as typeof fetch;
    const windows: Array<Omit<ShardWindow, "part">> = [];
    await time.run(engineFor(a, time.clock, fetcher, (w) => windows.push(w)).run(0, Infinity));
    const t = totals(windows);
    expect(t.trends.clientDelay.count).toBe(20);
    expect(t.trends.clientDelay.quantile(0.5)).toBe(0);
    // Five stalled responses: each took 50 ms, of which the estimate gives the generator
    // 30 ms less at most one probe period, never more than the stall itself.
    const stalled = t.trends.clientDelay.buckets().filter(([us]) => us > 0);
    expect(stalled.reduce((sum, [, count]) => sum + count, 0)).toBe(5);
    for (const [us] of stalled) expect(us).toBeGreaterThan(30_000 - 5_000);
    expect(t.trends.clientDelay.max).toBeLessThanOrEqual(30_000);
    expect(t.trends.clientDelay.min).toBe(0);
    expect(t.trends.duration.max).toBeGreaterThanOrEqual(50_000);
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
      return new Response("x", { status: i === 2 ? 503 : 200, statusText: i === 2 ? "Service Unavailable" : "OK" });
    }) as unknown as typeof fetch;
    const windows: Array<Omit<ShardWindow, "part">> = [];
    await time.run(engineFor(a, time.clock, fetcher, (w) => windows.push(w)).run(0, Infinity));
    const c = totals(windows).counters;
    expect([c.completed, c.timeouts, c.connectionErrors, c.status5xx, c.failed]).toEqual([40, 10, 10, 10, 30]);
    // Which error, not only its class: the samples the end-of-run summary lists.
    expect(totals(windows).errors).toEqual({ "timeout after 10000 ms": 10, "connection error: connection refused": 10, "HTTP 503 Service Unavailable": 10 });
    expect([c.checksPassed, c.checksFailed]).toEqual([10, 30]); // errored requests fail their checks, as in k6
  });

  it("times out requests the target never answers, from the actual send, without a timer each", async () => {
    const time = new VirtualTime();
    const a = assignment(time, { rate: 10, duration: "1s", timeout: "500ms" });
    const fetcher = neverAnswers;
    const windows: Array<Omit<ShardWindow, "part">> = [];
    const result = await time.run(engineFor(a, time.clock, fetcher, (w) => windows.push(w)).run(0, Infinity));
    expect(result.end).toBe("finished");
    const t = totals(windows);
    expect([t.counters.completed, t.counters.timeouts, t.counters.failed]).toEqual([10, 10, 10]);
    // Each gave up between 500 ms and one loop turn later.
    expect(t.trends.corrected.min).toBeGreaterThanOrEqual(500_000);
    expect(t.trends.corrected.max).toBeLessThanOrEqual(502_000);
  });

  it("times a request out at its own shorter timeout, though one sent before it waits on the run's longer one", async () => {
    const time = new VirtualTime();
    const a = assignment(time, { rate: 2, duration: "1s", timeout: "60s" });
    const windows: Array<Omit<ShardWindow, "part">> = [];
    // Iteration 0 on the run's 60 s, iteration 1 (sent 500 ms later) with a script's params.timeout of 500 ms.
    const flow: Flow = {
      async run(io, it) {
        await io.send(0, { url: "http://127.0.0.1:9/a", method: "GET", ...(it.global === 1 ? { timeoutMs: 500 } : {}) });
      },
    };
    const engine = new ShardEngine(a, time.clock, neverAnswers, (w) => windows.push(w), flow);
    const running = engine.run(0, Infinity);
    // Stop 2 s in: the short one has timed out by then; the long one is cut by the stop, not counted.
    void time.clock.sleep(2_000).then(() => engine.stop());
    await time.run(running);
    const t = totals(windows);
    expect([t.counters.timeouts, t.counters.completed]).toEqual([1, 1]);
    expect(t.trends.corrected.max).toBeLessThanOrEqual(502_000);
  });

  it("cuts requests still in flight one second after stop(), whatever the timeout: sent, interrupted, not counted", async () => {
    const time = new VirtualTime();
    const a = assignment(time, { rate: 10, duration: "10s", timeout: "60s" });
    const fetcher = neverAnswers;
    const windows: Array<Omit<ShardWindow, "part">> = [];
    const engine = engineFor(a, time.clock, fetcher, (w) => windows.push(w));
    const t0 = time.now;
    void time.sleep(2_050).then(() => engine.stop());
    const result = await time.run(engine.run(0, Infinity));
    expect(result.end).toBe("stopped");
    expect(time.now - t0).toBeLessThanOrEqual(3_100); // stop at 2.05 s + 1 s to drain
    const t = totals(windows);
    // Six connection slots: six were in flight; the 15 queued for a slot never left.
    expect(t.counters.sent).toBe(6);
    expect([t.counters.completed, t.counters.timeouts, t.counters.iterations]).toEqual([0, 0, 0]);
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

  it.each([
    // 1 s of 1/s: the one iteration (a request, then 3 s of think) is still in progress at
    // the end. Within a 5 s gracefulStop it finishes and counts; with 1 s it is interrupted.
    ["5s", 1],
    ["1s", 0],
  ])("gives an arrival-rate iteration in progress at the end gracefulStop %s to finish (%d counted)", async (gracefulStop, iterations) => {
    const time = new VirtualTime();
    const a = assignment(time, { rate: 1, duration: "1s", gracefulStop, steps: [{ path: "/", think: "3s" }] });
    const target = fakeTarget(time, 10);
    const windows: Array<Omit<ShardWindow, "part">> = [];
    await time.run(engineFor(a, time.clock, target.fetcher, (w) => windows.push(w)).run(0, Infinity));
    expect(target.calls).toHaveLength(1);
    expect(totals(windows).counters.iterations).toBe(iterations);
  });

  it("counts what never started by its deadline as dropped and unstarted: a shard that wakes after it still accounts for its share (chaos tree seed 1)", async () => {
    const time = new VirtualTime();
    const a = assignment(time, { rate: 10, duration: "2s" });
    const windows: Array<Omit<ShardWindow, "part">> = [];
    const target = fakeTarget(time, 1);
    // Its first alarm came 3 s late (R2 failing, retried), past a deadline of 2.5 s.
    time.now += 3_000;
    const result = await time.run(engineFor({ ...a, deadlineMs: a.t0Ms + 2_500 }, time.clock, target.fetcher, (w) => windows.push(w)).run(0, Infinity));
    expect(result.end).toBe("deadline");
    expect(target.calls.length).toBe(0);
    expect(totals(windows).counters.dropped).toBe(20);
    // Not the target's doing: edgeload never sent them (the verdict's "not sent" figure).
    expect(totals(windows).counters.unstarted).toBe(20);
    expect(totals(windows).counters.interrupted).toBe(0);
    expect(result.cursor).toBe(20);
  });

  it("stores with each closed window the cursor those windows cover: a restart after a catch-up burst counts what died with it interrupted, never neither sent nor dropped (chaos flat seed 123)", async () => {
    const time = new VirtualTime();
    // Shard 1 of 2 at 40/s: a share of 20/s, its windows closing 300 ms into the next second.
    const a = assignment(time, { rate: 40, duration: "4s" }, { index: 1, weights: [1, 1] });
    const target = fakeTarget(time, 5);
    // What LoadShard stores when a window closes: the window, and the engine's cursor with it.
    const stored: Array<Omit<ShardWindow, "part">> = [];
    let storedCursor = 0;
    let killed = false;
    const counted = (windows: Array<Omit<ShardWindow, "part">>) => totals(windows).counters.sent + totals(windows).counters.dropped;
    const first = engineFor(a, time.clock, target.fetcher, (w) => {
      if (killed) return;
      stored.push(w);
      storedCursor = first.covered.cursor;
      expect(first.covered.past).toEqual([]);
      // The stored cursor is exactly what the stored windows count (one request per iteration).
      expect(storedCursor).toBe(counted(stored));
    });
    // Its first alarm came 1.5 s late (R2 missing): it starts with a burst of the 30 iterations due meanwhile.
    time.now += 1_500;
    void first.run(0, Infinity);
    // Killed at 2.6 s: window 1 (the burst) closed at 2.3 s; window 2 (2.0–2.6 s) dies with it.
    await time.run(time.sleep(1_100));
    killed = true;
    first.stop();
    expect(stored.map((w) => w.windowS)).toEqual([1]);
    expect(storedCursor).toBe(40); // due before 2.0 s (the cursor as it stood at the close, 46, lost 6)
    // The restart, as LoadShard resumes: at the current time, what fell due since the stored cursor skipped.
    const second = engineFor(a, time.clock, target.fetcher, (w) => stored.push(w));
    const resumeAt = second.share.firstDueAtOrAfter(time.now - a.t0Ms);
    second.skip(storedCursor, resumeAt, time.now);
    await time.run(second.run(resumeAt, Infinity));
    const t = totals(stored);
    // Every iteration of the share is sent or dropped, once.
    expect(counted(stored)).toBe(second.share.total);
    expect(t.counters.interrupted).toBe(resumeAt - 40);
    // The target received what the dead window had sent (12, 2.0–2.6 s): those results are lost, each counted interrupted.
    expect(target.calls.length - t.counters.sent).toBe(12);
    expect(target.calls.length - t.counters.sent).toBeLessThanOrEqual(t.counters.interrupted);
  });

  it("stores the iterations past the cursor already accounted: one waiting for a slot across a close while later ones are dropped at the cap is neither lost nor counted twice by a restart (chaos tree seeds 45 and 69)", async () => {
    const time = new VirtualTime();
    // 20/s, answers that take 2.5 s against a 2 s timeout, 2 connection slots and 4 iterations in flight at most:
    // iterations wait for a slot across window closes while later ones are dropped at the cap.
    const a = assignment(time, { rate: 20, duration: "4s", timeout: "2s", connectionSlots: 2 }, undefined, 4);
    const target = fakeTarget(time, 2_500);
    const stored: Array<Omit<ShardWindow, "part">> = [];
    let covered = { cursor: 0, past: [] as ReadonlyArray<readonly [number, number]> };
    let killed = false;
    const counted = (windows: Array<Omit<ShardWindow, "part">>) => totals(windows).counters.sent + totals(windows).counters.dropped;
    let holes = 0;
    const first = engineFor(a, time.clock, target.fetcher, (w) => {
      if (killed) return;
      stored.push(w);
      covered = first.covered;
      const past = covered.past.reduce((n, [from, to]) => n + to - from, 0);
      holes = Math.max(holes, past);
      // What the stored windows count is exactly what the stored cursor and the iterations past it say.
      expect(covered.cursor + past).toBe(counted(stored));
    });
    void first.run(0, Infinity);
    await time.run(time.sleep(2_500));
    killed = true;
    first.stop();
    expect(holes).toBeGreaterThan(0); // the case happened: iterations past the cursor were accounted
    const second = engineFor(a, time.clock, target.fetcher, (w) => stored.push(w));
    const resumeAt = second.share.firstDueAtOrAfter(time.now - a.t0Ms);
    second.skip(covered.cursor, resumeAt, time.now, covered.past);
    await time.run(second.run(resumeAt, Infinity));
    // Every iteration of the share is sent or dropped, once.
    expect(counted(stored)).toBe(second.share.total);
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

/** A closed-model assignment for shard `index` of `weights`. */
function vuAssignment(time: VirtualTime, spec: Record<string, unknown>, shard = { index: 0, weights: [1] }): ShardAssignment {
  const parsed = parseRunSpec({ target: "http://127.0.0.1:9", steps: [{ path: "/" }], ...spec });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return {
    runId: "r-vus",
    slice: shardSliceOf(shard.weights, shard.index),
    iterationsPerInvocation: 1_000_000,
    t0Ms: time.now,
    mode: "local",
    flushGraceMs: 0,
    deadlineMs: time.now + parsed.spec.durationMs + afterEndMs(parsed.spec),
    spec: parsed.spec,
    shard: { index: shard.index, region: "wnam", weight: 1, segment: "0/1:1/1", maxInFlight: 1 },
  };
}

/**
 * The auth lifecycle's target in memory: register → 201 {username}, login → {token},
 * GET /user and DELETE /logout with `Bearer <token>`. Remembers which token each logout
 * presented and whether that token was live.
 */
function authTarget(time: VirtualTime, delayMs = 20) {
  const users = new Map<string, string>(); // username → password
  const tokens = new Map<string, string>(); // live token → username
  const issued: string[] = [];
  const logouts: Array<{ token: string; live: boolean }> = [];
  let next = 0;
  const fetcher = (async (url: string, init: RequestInit) => {
    await time.sleep(delayMs);
    const path = new URL(url).pathname;
    const body = typeof init.body === "string" ? JSON.parse(init.body) : {};
    const token = String((init.headers as Record<string, string> | undefined)?.authorization ?? "").replace(/^Bearer /, "");
    if (path === "/app/v1/user") {
      if (users.has(body.username)) return new Response("{}", { status: 409 });
      users.set(body.username, body.password);
      return Response.json({ username: body.username }, { status: 201 });
    }
    if (path === "/app/login") {
      if (users.get(body.username) !== body.password) return new Response("{}", { status: 401 });
      const t = `tok-${next++}`;
      tokens.set(t, body.username);
      issued.push(t);
      return Response.json({ token: t });
    }
    if (path === "/app/user") return tokens.has(token) ? Response.json({ username: tokens.get(token) }) : new Response("{}", { status: 401 });
    if (path === "/app/logout") {
      logouts.push({ token, live: tokens.delete(token) });
      return new Response(null, { status: 204 });
    }
    return new Response("{}", { status: 404 });
  }) as unknown as typeof fetch;
  return { fetcher, users, issued, logouts };
}

describe("ShardEngine, closed model (VUs)", () => {
  it("holds the active iterations at the stage targets across shards, ramping up and down like k6", async () => {
    const time = new VirtualTime();
    // 0→10 VUs over 2 s, hold 2 s, 10→0 over 2 s; an iteration takes 50 ms + 100 ms think.
    const spec = {
      executor: "ramping-vus",
      startVUs: 0,
      stages: [
        { target: 10, duration: "2s" },
        { target: 10, duration: "2s" },
        { target: 0, duration: "2s" },
      ],
      steps: [{ path: "/", think: "100ms" }],
      connectionSlots: 100,
    };
    const weights = [1, 1, 1];
    const t0 = time.now;
    const schedule = new VuSchedule(vuAssignment(time, spec).spec.vus!);
    let active = 0;
    const samples: Array<{ t: number; active: number }> = [];
    const target = fakeTarget(time, 50);
    const flow = customStepsFlow(vuAssignment(time, spec).spec);
    const counting: Flow = {
      async run(io, it) {
        active++;
        samples.push({ t: time.now - t0, active });
        try {
          await flow.run(io, it);
        } finally {
          active--;
        }
      },
    };
    const windows: Array<Omit<ShardWindow, "part">> = [];
    const engines = weights.map(
      (_, index) => new ShardEngine(vuAssignment(time, spec, { index, weights }), time.clock, target.fetcher, (w) => windows.push(w), counting),
    );
    const results = await time.run(Promise.all(engines.map((e) => e.run(0, Infinity))));
    expect(results.map((r) => r.end)).toEqual(["finished", "finished", "finished"]);
    for (const { t, active: n } of samples) {
      const want = schedule.activeAt(t);
      // Up and hold: exactly the target. Down: VUs already removed may finish their
      // iteration (150 ms, under one 200 ms step), so at most one more.
      if (t < 4_000) expect(n).toBe(want);
      else expect(n - want).toBeGreaterThanOrEqual(0), expect(n - want).toBeLessThanOrEqual(1);
    }
    // During the hold, each VU's iterations follow back to back: 10 VUs × 2 s / 150 ms.
    const hold = samples.filter((s) => s.t >= 2_000 && s.t < 4_000).length;
    expect(hold).toBeGreaterThanOrEqual(130);
    expect(hold).toBeLessThanOrEqual(140);
    // No schedule lag or corrected latency in the closed model; duration is there.
    const t = totals(windows);
    expect(t.trends.lag.count).toBe(0);
    expect(t.trends.corrected.count).toBe(0);
    expect(t.trends.duration.quantile(0.5)).toBe(50_000);
    // Every started iteration is counted, but one a VU began just before the end was cut short.
    expect(t.counters.iterations).toBeGreaterThanOrEqual(samples.length - 1);
    expect(t.counters.iterations).toBeLessThanOrEqual(samples.length);
  });

  it("respects think time between a VU's steps, fixed and random within its range", async () => {
    const time = new VirtualTime();
    const spec = {
      executor: "constant-vus",
      vus: 3,
      duration: "5s",
      flow: "sequence",
      steps: [
        { name: "a", path: "/a?vu={{vu}}", think: "1s" },
        { name: "b", path: "/b?vu={{vu}}", think: { min: "200ms", max: "400ms" } },
      ],
    };
    const a = vuAssignment(time, spec);
    const sends: Array<{ at: number; path: string; vu: string }> = [];
    const fetcher = (async (url: string) => {
      const u = new URL(url);
      sends.push({ at: time.now, path: u.pathname, vu: u.searchParams.get("vu")! });
      await time.sleep(10);
      return new Response("ok");
    }) as unknown as typeof fetch;
    await time.run(new ShardEngine(a, time.clock, fetcher, () => {}, customStepsFlow(a.spec)).run(0, Infinity));
    expect(new Set(sends.map((s) => s.vu))).toEqual(new Set(["1", "2", "3"]));
    for (const vu of ["1", "2", "3"]) {
      const own = sends.filter((s) => s.vu === vu);
      for (let i = 1; i < own.length; i++) {
        const gap = own[i]!.at - own[i - 1]!.at - 10; // minus the response time
        if (own[i - 1]!.path === "/a") expect(gap).toBe(1000);
        else expect(gap).toBeGreaterThanOrEqual(200), expect(gap).toBeLessThanOrEqual(400);
      }
      // Each iteration ~1.32 s on average: 3–4 iterations in 5 s.
      expect(own.filter((s) => s.path === "/a").length).toBeGreaterThanOrEqual(3);
    }
  });

  it("flows a captured token from login to logout in every iteration of every VU", async () => {
    const time = new VirtualTime();
    const spec = {
      executor: "constant-vus",
      vus: 4,
      duration: "6s",
      // Iterations in progress at the end are cut at once (k6's gracefulStop 0s).
      gracefulStop: "0s",
      flow: "sequence",
      vars: { password: "pw-123456" },
      metrics: { login_duration: { type: "trend" }, login_success_rate: { type: "rate" } },
      steps: [
        {
          name: "register",
          method: "POST",
          path: "/app/v1/user",
          body: { username: "u_{{randomString(12)}}", password: "{{vars.password}}" },
          capture: { username: { json: "$.username" } },
          expect: { status: 201 },
          think: "1s",
        },
        {
          name: "login",
          method: "POST",
          path: "/app/login",
          body: { username: "{{captured.username}}", password: "{{vars.password}}" },
          capture: { token: { json: "$.token" } },
          think: "1s",
          record: { login_duration: "duration", login_success_rate: "success" },
        },
        { name: "user", path: "/app/user", headers: { authorization: "Bearer {{captured.token}}" }, checks: [{ status: 200 }], think: "1s" },
        { name: "logout", method: "DELETE", path: "/app/logout", headers: { authorization: "Bearer {{captured.token}}" }, think: "2s" },
      ],
    };
    const a = vuAssignment(time, spec);
    const target = authTarget(time);
    const windows: Array<Omit<ShardWindow, "part">> = [];
    await time.run(new ShardEngine(a, time.clock, target.fetcher, (w) => windows.push(w), customStepsFlow(a.spec)).run(0, Infinity));
    // An iteration takes 4 × 20 ms + 5 s: each VU completes one, and its second is cut
    // after registering (the run ends during the think time before its login).
    expect(target.users.size).toBe(8);
    expect(target.logouts).toHaveLength(4);
    expect(target.logouts.every((l) => l.live)).toBe(true); // logout used a token its login got
    expect(new Set(target.logouts.map((l) => l.token))).toEqual(new Set(target.issued.slice(0, 4)));
    const t = totals(windows);
    expect(t.custom.trends.get("login_duration")!.quantile(0.5)).toBe(20_000);
    expect(t.custom.rates.get("login_success_rate")).toEqual([4, 4]);
    expect([t.counters.checksPassed, t.counters.checksFailed]).toEqual([4, 0]);
    // The second iterations were cut by the end of the run: not counted.
    expect(t.counters.iterations).toBe(4);
  });

  it("lets a VU the ramp-down removes finish within gracefulRampDown, then interrupts it", async () => {
    const time = new VirtualTime();
    // 2 VUs for 1 s, then 1 for 4 s. VU 2 is removed at 1 s in the middle of a 3 s think.
    const spec = {
      executor: "ramping-vus",
      startVUs: 2,
      stages: [
        { target: 2, duration: "1s" },
        { target: 1, duration: "0s" },
        { target: 1, duration: "4s" },
      ],
      gracefulRampDown: "500ms",
      steps: [{ path: "/?vu={{vu}}", think: "3s" }],
    };
    const a = vuAssignment(time, spec);
    const target = fakeTarget(time, 10);
    const windows: Array<Omit<ShardWindow, "part">> = [];
    await time.run(new ShardEngine(a, time.clock, target.fetcher, (w) => windows.push(w), customStepsFlow(a.spec)).run(0, Infinity));
    // VU 1: iterations at 0 and 3.01 s (the second in progress at the end, 5 s, finishes
    // within k6's default 30 s gracefulStop, and none starts after); VU 2 once, interrupted at 1.5 s.
    expect(target.calls.map((c) => c - a.t0Ms)).toEqual([0, 0, 3010]);
    expect(totals(windows).counters.iterations).toBe(2);
  });

  it("cuts a request still in flight at the graceful stop and records nothing of it, as k6 v1.8.1 does", async () => {
    const time = new VirtualTime();
    // 1 VU for 1 s, gracefulStop 1 s, a target that does not answer (k6's answered in 3 s):
    // k6 cancels the request at 2 s and reports "0 complete and 1 interrupted iterations", no http_reqs.
    const a = vuAssignment(time, { executor: "constant-vus", vus: 1, duration: "1s", gracefulStop: "1s", timeout: "10s", steps: [{ path: "/" }] });
    const windows: Array<Omit<ShardWindow, "part">> = [];
    await time.run(new ShardEngine(a, time.clock, neverAnswers, (w) => windows.push(w), customStepsFlow(a.spec)).run(0, Infinity));
    const t = totals(windows);
    expect(t.counters.sent).toBe(1);
    expect([t.counters.completed, t.counters.timeouts, t.counters.failed, t.counters.iterations]).toEqual([0, 0, 0, 0]);
    expect(time.now - a.t0Ms).toBeLessThan(2_100);
  });

  it.each([
    // k6 v1.8.1, 1 VU for 1 s of 0.7 s iterations: "1 complete and 1 interrupted" with gracefulStop 0s ...
    ["0s", [0, 710], 1],
    // ... and "2 complete and 0 interrupted" (the run lasts 1.4 s) with 1s.
    ["1s", [0, 710], 2],
  ])("lets iterations in progress at the end finish within gracefulStop %s and counts them, interrupting the rest", async (gracefulStop, calls, iterations) => {
    const time = new VirtualTime();
    const spec = { executor: "constant-vus", vus: 1, duration: "1s", gracefulStop, steps: [{ path: "/", think: "700ms" }] };
    const a = vuAssignment(time, spec);
    const target = fakeTarget(time, 10);
    const windows: Array<Omit<ShardWindow, "part">> = [];
    await time.run(new ShardEngine(a, time.clock, target.fetcher, (w) => windows.push(w), customStepsFlow(a.spec)).run(0, Infinity));
    expect(target.calls.map((c) => c - a.t0Ms)).toEqual(calls);
    expect(totals(windows).counters.iterations).toBe(iterations);
  });

  it("hands off at the request budget and continues from the schedule in a new invocation", async () => {
    const time = new VirtualTime();
    const spec = { executor: "constant-vus", vus: 5, duration: "2s", steps: [{ path: "/", think: "90ms" }] };
    const a = vuAssignment(time, spec);
    const target = fakeTarget(time, 10);
    const windows: Array<Omit<ShardWindow, "part">> = [];
    const first = new ShardEngine(a, time.clock, target.fetcher, (w) => windows.push(w), customStepsFlow(a.spec));
    const r1 = await time.run(first.run(0, 30));
    expect(r1.end).toBe("handoff");
    expect(r1.sent).toBeGreaterThanOrEqual(30);
    expect(r1.sent).toBeLessThan(35); // iterations in progress finish; no new ones start
    const second = new ShardEngine(a, time.clock, target.fetcher, (w) => windows.push(w), customStepsFlow(a.spec));
    const r2 = await time.run(second.run(0, Infinity));
    expect(r2.end).toBe("finished");
    // 5 VUs × 2 s / 100 ms per iteration, all sent across the two invocations.
    expect(target.calls.length).toBe(100);
    expect(totals(windows).counters.iterations).toBe(100);
  });
});

describe("ShardEngine, iteration-count executors", () => {
  it.each([
    // per-vu-iterations: each of 3 VUs runs exactly 4, then the shard ends long before maxDuration.
    [{ executor: "per-vu-iterations", vus: 3, iterations: 4, maxDuration: "1m" }, 12],
    // shared-iterations: 10 iterations between 3 VUs, whoever is free takes the next.
    [{ executor: "shared-iterations", vus: 3, iterations: 10, maxDuration: "1m" }, 10],
  ])("runs %j to its count and ends", async (executor, expected) => {
    const time = new VirtualTime();
    const a = vuAssignment(time, { ...executor, steps: [{ path: "/", think: "50ms" }] });
    const target = fakeTarget(time, 10);
    const windows: Array<Omit<ShardWindow, "part">> = [];
    const started = time.now;
    const result = await time.run(engineFor(a, time.clock, target.fetcher, (w) => windows.push(w)).run(0, Infinity));
    expect(result.end).toBe("finished");
    expect(target.calls.length).toBe(expected);
    expect(totals(windows).counters.iterations).toBe(expected);
    expect(time.now - started).toBeLessThan(2_000);
  });

  it("splits shared iterations between shards exactly, each taking its VUs' part", () => {
    // 10 iterations, 4 VUs over 3 shards of weights 2:1:1.
    const parts = [0, 1, 2].map((index) => new ShardVus(shardSliceOf([2, 1, 1], index)).sharedIterations(10, 4));
    expect(parts.reduce((x, y) => x + y)).toBe(10);
    expect(parts[0]).toBeGreaterThan(parts[1]!);
  });

  it("goes on from where it was after a handoff instead of starting the counts again", async () => {
    const time = new VirtualTime();
    const a = vuAssignment(time, { executor: "shared-iterations", vus: 2, iterations: 20, maxDuration: "1m", steps: [{ path: "/" }] });
    const target = fakeTarget(time, 10);
    const windows: Array<Omit<ShardWindow, "part">> = [];
    const first = engineFor(a, time.clock, target.fetcher, (w) => windows.push(w));
    expect((await time.run(first.run(0, 8))).end).toBe("handoff");
    const second = new ShardEngine(a, time.clock, target.fetcher, (w) => windows.push(w), customStepsFlow(a.spec), undefined, first.iterationProgress);
    expect((await time.run(second.run(0, Infinity))).end).toBe("finished");
    expect(target.calls.length).toBe(20);
    expect(totals(windows).counters.iterations).toBe(20);
  });
});

describe("ShardEngine, SSE streams and scrapes", () => {
  /** A stream that opens after 30 ms and sends an event every 100 ms from 50 ms after that, until cancelled. */
  function sseTarget(time: VirtualTime, opts: { endAfterEvents?: number } = {}) {
    let open = 0;
    let peakOpen = 0;
    let cancelled = 0;
    const fetcher = (async () => {
      await time.sleep(30);
      let stop = false;
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          open++;
          peakOpen = Math.max(peakOpen, open);
          await time.sleep(50);
          for (let n = 0; !stop; n++) {
            if (opts.endAfterEvents !== undefined && n >= opts.endAfterEvents) {
              open--;
              controller.close();
              return;
            }
            controller.enqueue(new TextEncoder().encode(`: ping\n\nevent: config\ndata: {"n":${n}}\n\n`));
            await time.sleep(100);
          }
        },
        cancel() {
          stop = true;
          open--;
          cancelled++;
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    }) as unknown as typeof fetch;
    return { fetcher, open: () => open, peakOpen: () => peakOpen, cancelled: () => cancelled };
  }

  it("holds each VU's stream until the scenario ends, counting events and timing the first", async () => {
    const time = new VirtualTime();
    const a = assignment(time, { executor: "constant-vus", vus: 8, duration: "2s", connectionSlots: 2, steps: [{ path: "/stream", sse: {} }] });
    const target = sseTarget(time);
    const windows: Array<Omit<ShardWindow, "part">> = [];
    const engine = engineFor(a, time.clock, target.fetcher, (w) => windows.push(w));
    const result = await time.run(engine.run(0, 1_000_000));

    expect(result.end).toBe("finished");
    const all = totals(windows);
    // 8 VUs each open one stream, held for the whole 2 s: the 2 slots only gate the opening.
    expect(all.counters.completed).toBe(8);
    expect(target.peakOpen()).toBe(8);
    expect(target.cancelled()).toBe(8); // every stream closed at the scenario's end
    const trends = all.custom.trends;
    expect(trends.get("sse_time_to_open")!.count).toBe(8);
    const first = trends.get("sse_time_to_first_message")!;
    expect(first.count).toBe(8);
    expect(first.min).toBeGreaterThanOrEqual(80_000); // 30 ms to open + 50 ms to the first event (µs)
    // About 2 s / 100 ms events per stream; heartbeats are comments, not messages.
    const messages = all.custom.counters.get("sse_messages")!;
    expect(messages).toBeGreaterThanOrEqual(8 * 18);
    expect(messages).toBeLessThanOrEqual(8 * 20);
    expect(all.custom.counters.get("sse_streams_ended_early") ?? 0).toBe(0);
    expect(trends.get("sse_stream_duration")!.max).toBeLessThanOrEqual(2_000_000);
  });

  it("ends a stream at its hold time, and counts one the server ends early", async () => {
    const time = new VirtualTime();
    const a = assignment(time, { executor: "constant-vus", vus: 1, duration: "1s", steps: [{ path: "/stream", sse: { holdFor: "300ms" } }] });
    const held = sseTarget(time);
    const windows: Array<Omit<ShardWindow, "part">> = [];
    await time.run(engineFor(a, time.clock, held.fetcher, (w) => windows.push(w)).run(0, 1_000_000));
    // 1 s / (30 ms to open + 300 ms held) ≈ 3 streams, one after another.
    expect(totals(windows).counters.completed).toBeGreaterThanOrEqual(3);
    expect(held.peakOpen()).toBe(1);

    const time2 = new VirtualTime();
    const early = sseTarget(time2, { endAfterEvents: 2 });
    const windows2: Array<Omit<ShardWindow, "part">> = [];
    const b = assignment(time2, { executor: "constant-vus", vus: 1, duration: "1s", steps: [{ path: "/stream", sse: {} }] });
    await time2.run(engineFor(b, time2.clock, early.fetcher, (w) => windows2.push(w)).run(0, 1_000_000));
    const all = totals(windows2);
    // Streams end after 2 events (~280 ms); the last one may be cut by the scenario's end instead.
    const endedEarly = all.custom.counters.get("sse_streams_ended_early")!;
    expect(endedEarly).toBeGreaterThanOrEqual(2);
    expect(endedEarly).toBeGreaterThanOrEqual(all.counters.completed - 1);
    expect(all.custom.counters.get("sse_messages")).toBeGreaterThanOrEqual(2 * endedEarly);
  });

  it("stores the chosen series of each scrape with the window it was taken in", async () => {
    const time = new VirtualTime();
    const a = assignment(time, {
      rate: 1,
      timeUnit: "500ms",
      duration: "2s",
      steps: [{ path: "/metrics", scrape: { series: ["streams_open", 'requests_total{route="/a"}'] } }],
    });
    let n = 0;
    const fetcher = (async () => {
      n++;
      return new Response(
        `# TYPE streams_open gauge\nstreams_open ${n * 10}\n# TYPE requests_total counter\nrequests_total{route="/a"} ${n}\nrequests_total{route="/b"} 7\n`,
      );
    }) as unknown as typeof fetch;
    const windows: Array<Omit<ShardWindow, "part">> = [];
    await time.run(engineFor(a, time.clock, fetcher, (w) => windows.push(w)).run(0, 1_000_000));
    const points = windows.flatMap((w) => (w.series ?? []).map((p) => ({ w: w.windowS, ...p })));
    expect(points.filter((p) => p.name === "streams_open").map((p) => [p.w, p.value])).toEqual([
      [0, 10],
      [0, 20],
      [1, 30],
      [1, 40],
    ]);
    expect(points.filter((p) => p.name === "requests_total").map((p) => p.labels)).toEqual(Array(4).fill({ route: "/a" }));
    expect(totals(windows).counters.checksPassed).toBe(4);
  });
});

describe("ShardEngine: what it learns about the measurement", () => {
  const RECORDED = RECORDED_RESPONSE_HEADERS;

  async function runAgainst(delayMs: number, headers: Record<string, string> = {}) {
    const time = new VirtualTime();
    // 47/s: due times fall on no round grid, as a real clock's readings do.
    const a = assignment(time, { rate: 47, duration: "1s" });
    const fetcher = (async () => {
      await time.sleep(delayMs);
      return new Response("ok", { headers });
    }) as unknown as typeof fetch;
    const engine = engineFor(a, time.clock, fetcher, () => {});
    await time.run(engine.run(0, 1_000_000));
    return engine;
  }

  it.each([
    // [target delay ms, detected µs, why]
    [7, 1000, "a clock in whole milliseconds, as workerd's"],
    [7.001, 1, "readings a microsecond apart: a microsecond clock, as k6's"],
  ])("times with a clock stepping %d ms → detects %i µs (%s)", async (delayMs, us, _why) => {
    expect((await runAgainst(delayMs)).clockResolutionUs).toBe(us);
  });

  it("marks a target answering with Cloudflare's signature, from a recorded response, and not one without", async () => {
    expect((await runAgainst(5, RECORDED.behindCloudflare)).behindCloudflare).toBe(true);
    expect((await runAgainst(5, RECORDED.direct)).behindCloudflare).toBe(false);
  });
});
