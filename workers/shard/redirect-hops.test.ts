/**
 * A redirected request recorded hop by hop, as k6 records it: the shard engine in plain Node
 * under a virtual clock, sending through the real outbound module (its redirect rules and
 * policy) onto a fake network whose every answer takes a known time.
 */
import { describe, expect, it } from "vitest";
import type { ShardAssignment, ShardWindow } from "../../core/run/protocol.ts";
import { MetricStats } from "../../core/metrics/metric-stats.ts";
import type { Flow, FlowResponse } from "../../scenarios/flow.ts";
import { IterationInterrupted } from "../../scenarios/flow.ts";
import { customStepsFlow } from "../../scenarios/custom-steps.ts";
import { VirtualTime } from "../../test/support/virtual-time.ts";
import { testAssignment } from "../../test/support/shard-assignment-fixture.ts";
import { outboundFetch, type OutboundPolicy } from "../outbound/outbound-fetch.ts";
import { ShardEngine } from "./engine.ts";
import { RedirectHops, type HopSender } from "./redirect-hops.ts";

const TARGET = "http://127.0.0.1:9";

/** A route: its status, where it redirects, how long it takes to answer (virtual ms); `never`: it never answers. */
type Route = { status: number; location?: string; delayMs: number } | "never";

/** A fake network: each URL answers from the table after its delay; every request is logged with its run tag. */
function network(time: VirtualTime, routes: Record<string, Route>) {
  const sent: Array<{ url: string; method: string; atMs: number; runTag: string | null }> = [];
  const fetcher = (async (url: string, init: RequestInit = {}) => {
    sent.push({ url, method: init.method ?? "GET", atMs: time.now, runTag: new Headers(init.headers).get("x-edgeload-run") });
    const route = routes[url] ?? { status: 404, delayMs: 0 };
    if (route === "never") return new Promise((_, reject) => init.signal!.addEventListener("abort", () => reject(init.signal!.reason)));
    await time.sleep(route.delayMs);
    return new Response("moved", { status: route.status, headers: route.location ? { location: route.location } : {} });
  }) as unknown as typeof fetch;
  return { fetcher, sent };
}

/** k6's /redirect/2 as httpbin answers it: two 302s, then the 200; each hop takes its own time. */
const CHAIN: Record<string, Route> = {
  [`${TARGET}/redirect/2`]: { status: 302, location: "/redirect/1", delayMs: 10 },
  [`${TARGET}/redirect/1`]: { status: 302, location: "/get", delayMs: 20 },
  [`${TARGET}/get`]: { status: 200, delayMs: 30 },
};

const allowAll: OutboundPolicy = () => null;
const loopbackOnly: OutboundPolicy = (url) => (url.hostname === "127.0.0.1" ? null : "not an allowed target");

/** A one-shard assignment of `spec` (one iteration unless it says otherwise), with the sub-metrics its thresholds name. */
function assignment(time: VirtualTime, spec: Record<string, unknown>): ShardAssignment {
  const oneIteration = spec.executor ? {} : { executor: "per-vu-iterations", vus: 1, iterations: 1 };
  return testAssignment({ target: TARGET, ...oneIteration, ...spec }, { runId: "r-hops", t0Ms: time.now, maxInFlight: 10, subMetrics: true });
}

/** Runs `a` against `routes` through the outbound module; the run's totals and what went out. */
async function run(time: VirtualTime, a: ShardAssignment, routes: Record<string, Route>, options: { policy?: OutboundPolicy; flow?: Flow } = {}) {
  const net = network(time, routes);
  const windows: Array<Omit<ShardWindow, "part">> = [];
  const engine = new ShardEngine(
    a,
    time.clock,
    outboundFetch(options.policy ?? allowAll, net.fetcher),
    (w) => windows.push(w),
    options.flow ?? customStepsFlow(a.spec),
  );
  await time.run(engine.run(0, Infinity));
  const all = new MetricStats();
  for (const w of windows) for (const [, stats] of w.steps) all.mergeWire(stats);
  return { all, sent: net.sent };
}

describe("a redirected request, hop by hop", () => {
  it("records each hop of a spec step's redirect chain as its own request, timed on its own, with its own status, URL and method", async () => {
    const time = new VirtualTime();
    const thresholds = {
      "http_reqs{status:302}": ["count>0"],
      "http_reqs{status:200}": ["count>0"],
      [`http_reqs{name:${TARGET}/get}`]: ["count>0"],
      [`http_req_duration{url:${TARGET}/redirect/1}`]: ["p(95)<1000"],
    };
    const { all, sent } = await run(time, assignment(time, { steps: [{ path: "/redirect/2" }], thresholds }), CHAIN);
    // k6 counts 3 http_reqs for GET /redirect/2: 302, 302, 200.
    expect(sent.map((s) => s.url)).toEqual([`${TARGET}/redirect/2`, `${TARGET}/redirect/1`, `${TARGET}/get`]);
    expect([all.counters.sent, all.counters.completed, all.counters.failed]).toEqual([3, 3, 0]);
    expect(all.statuses).toEqual({ 302: 2, 200: 1 });
    // Each hop's duration is its own answer's time: 10, 20 and 30 ms, not the chain's 60.
    const duration = all.trends.duration;
    expect([duration.count, duration.min, duration.max]).toEqual([3, 10_000, 30_000]);
    expect(all.custom.counters.get("http_reqs{status:302}")).toBe(2);
    expect(all.custom.counters.get("http_reqs{status:200}")).toBe(1);
    expect(all.custom.counters.get(`http_reqs{name:${TARGET}/get}`)).toBe(1);
    const middle = all.custom.trends.get(`http_req_duration{url:${TARGET}/redirect/1}`)!;
    expect([middle.count, middle.min]).toEqual([1, 20_000]);
  });

  it("tags a hop with the method it was sent with: a POST answered 303 goes on as a GET", async () => {
    const time = new VirtualTime();
    const thresholds = { "http_reqs{method:POST}": ["count>0"], "http_reqs{method:GET}": ["count>0"] };
    const routes: Record<string, Route> = {
      [`${TARGET}/form`]: { status: 303, location: "/done", delayMs: 5 },
      [`${TARGET}/done`]: { status: 200, delayMs: 5 },
    };
    const { all, sent } = await run(time, assignment(time, { steps: [{ method: "POST", path: "/form", body: "x=1" }], thresholds }), routes);
    expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual([`POST ${TARGET}/form`, `GET ${TARGET}/done`]);
    expect(all.custom.counters.get("http_reqs{method:POST}")).toBe(1);
    expect(all.custom.counters.get("http_reqs{method:GET}")).toBe(1);
  });

  it("judges every hop by the step's expected statuses, as k6's responseCallback judges each round trip", async () => {
    const time = new VirtualTime();
    // The default (200–399) passes the 302s; a step expecting only 200 fails them.
    const expecting200 = await run(time, assignment(time, { steps: [{ path: "/redirect/2", expect: { status: 200 } }] }), CHAIN);
    expect([expecting200.all.counters.completed, expecting200.all.counters.failed]).toEqual([3, 2]);
    expect(expecting200.all.errors).toEqual({ "HTTP 302": 2 });
  });

  it("counts each hop sent in the second it leaves in, with that second in its run tag", async () => {
    const time = new VirtualTime();
    // The first hop takes 1.5 s: it leaves in the run's second 0, the second hop in its second 1.
    const routes: Record<string, Route> = {
      [`${TARGET}/slow`]: { status: 302, location: "/get", delayMs: 1_500 },
      [`${TARGET}/get`]: { status: 200, delayMs: 10 },
    };
    const { sent } = await run(time, assignment(time, { steps: [{ path: "/slow" }] }), routes);
    expect(sent.map((s) => s.runTag)).toEqual(["r-hops;0;0", "r-hops;1;0"]);
  });

  it("records a hop that times out once, after the hops before it, and the chain's request's timeout covers the whole chain", async () => {
    const time = new VirtualTime();
    const routes: Record<string, Route> = { [`${TARGET}/redirect/1`]: { status: 302, location: "/hang", delayMs: 400 }, [`${TARGET}/hang`]: "never" };
    const { all } = await run(time, assignment(time, { steps: [{ path: "/redirect/1" }], timeout: "1s" }), routes);
    expect([all.counters.sent, all.counters.completed, all.counters.timeouts, all.counters.failed]).toEqual([2, 2, 1, 1]);
    expect(all.statuses).toEqual({ 302: 1, timeout: 1 });
    // The hop that hung is timed out when the request's 1 s is up: 0.6 s after it left.
    expect(all.errors).toEqual({ "timeout after 1000 ms": 1 });
  });

  it("cuts a hop in flight at the graceful stop and records nothing of it, the hops before it recorded, as k6 had saved theirs", async () => {
    const time = new VirtualTime();
    const routes: Record<string, Route> = { [`${TARGET}/redirect/1`]: { status: 302, location: "/hang", delayMs: 100 }, [`${TARGET}/hang`]: "never" };
    const spec = { executor: "constant-vus", vus: 1, duration: "1s", gracefulStop: "1s", timeout: "10s", steps: [{ path: "/redirect/1" }] };
    const { all } = await run(time, assignment(time, spec), routes);
    expect([all.counters.sent, all.counters.completed, all.counters.failed, all.counters.iterations]).toEqual([2, 1, 0, 0]);
    expect(all.statuses).toEqual({ 302: 1 });
  });

  it("records a hop the policy refuses as a failed request of its own (never sent), as k6 counts a blocked hostname's", async () => {
    const time = new VirtualTime();
    const routes: Record<string, Route> = { [`${TARGET}/away`]: { status: 302, location: "https://example.com/x", delayMs: 5 } };
    const { all, sent } = await run(time, assignment(time, { steps: [{ path: "/away" }] }), routes, { policy: loopbackOnly });
    expect(sent.map((s) => s.url)).toEqual([`${TARGET}/away`]);
    expect([all.counters.sent, all.counters.completed, all.counters.connectionErrors, all.counters.failed]).toEqual([2, 2, 1, 1]);
    expect(all.statuses).toEqual({ 302: 1, connection: 1 });
  });

  it("follows at most a request's maxRedirects, recording each hop sent, and gives the flow the last hop's response and timings", async () => {
    const time = new VirtualTime();
    const answers: FlowResponse[] = [];
    // A k6 script's http.get(url, { redirects: n }) as the runtime hands it to the engine.
    const flow: Flow = {
      async run(io) {
        answers.push(await io.send(0, { url: `${TARGET}/redirect/2`, method: "GET", maxRedirects: 1 }));
        answers.push(await io.send(0, { url: `${TARGET}/redirect/2`, method: "GET" }));
      },
    };
    const { all } = await run(time, assignment(time, { steps: [{ path: "/" }] }), CHAIN, { flow });
    // 2 hops (302, 302: the second is the answer), then 3 (302, 302, 200).
    expect(all.statuses).toEqual({ 302: 4, 200: 1 });
    expect(answers.map((r) => [r.status, r.durationMs])).toEqual([
      [302, 20],
      [200, 30],
    ]);
  });

  it("sends no later hop once the run is stopped: the chain is interrupted, nothing counted for the hop", () => {
    let stopped = false;
    let counted = 0;
    const sender: HopSender = {
      clock: { now: () => 0, sleep: async () => {} },
      isStopped: () => stopped,
      recordHop: () => {},
      sendingHop: () => ({ "x-edgeload-run": String(++counted) }),
    };
    const hops = new RedirectHops(
      sender,
      0,
      { url: `${TARGET}/a`, method: "GET" },
      { url: `${TARGET}/a`, method: "GET", queuedMs: 0, sendMs: 0, intendedMs: null },
    );
    expect(hops.leaving({ url: `${TARGET}/b`, method: "GET" })).toEqual({ "x-edgeload-run": "1" });
    expect(hops.current.url).toBe(`${TARGET}/b`);
    stopped = true;
    expect(() => hops.leaving({ url: `${TARGET}/c`, method: "GET" })).toThrow(IterationInterrupted);
    expect([counted, hops.current.url]).toEqual([1, `${TARGET}/b`]);
  });
});
