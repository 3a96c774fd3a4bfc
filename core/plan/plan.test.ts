import { describe, expect, it } from "vitest";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { DEFAULT_LIMITS, planRun } from "./plan.ts";
import { checkPlatformLimits } from "./limit-checks.ts";
import { estimateUsage } from "./run-usage.ts";
import { parseRunSpec } from "../spec/run-spec.ts";

function spec(overrides: Record<string, unknown> = {}) {
  const r = parseRunSpec({
    target: "http://127.0.0.1:9090",
    steps: [{ path: "/" }],
    executor: "constant-arrival-rate",
    rate: 200,
    duration: "10s",
    ...overrides,
  });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.spec;
}

function plan(overrides: Record<string, unknown> = {}, limits = DEFAULT_LIMITS) {
  const s = spec(overrides);
  return planRun(s, new ArrivalSchedule(s.stages).total, limits);
}

describe("planRun", () => {
  it.each([
    // [spec overrides, shards, why]
    [{}, 4, "200/s fits one shard per region: 6 slots / 50 ms = 120/s each at most"],
    [{ rate: 2000 }, 24, "2000/s needs 24 shards at 70% of 120/s, a multiple of the 4 regions"],
    [{ rate: 2000, expectedLatency: "10ms" }, 8, "at 10 ms a shard sustains 600/s: 5 needed, rounded up to 8"],
    [{ regions: ["weur"] }, 3, "one region: no rounding"],
    [{ shards: 6 }, 6, "an explicit count is kept"],
  ])("%j → %i shards (%s)", (overrides, count, _why) => {
    const r = plan(overrides);
    expect(r.ok && r.plan.shards.length).toBe(count);
  });

  it("spreads shards over regions round-robin with k6 segments and per-shard in-flight caps", () => {
    const r = plan({ shards: 4, maxVUs: 10 });
    if (!r.ok) throw new Error();
    expect(r.plan.shards.map((s) => [s.region, s.segment, s.maxInFlight])).toEqual([
      ["wnam", "0/4:1/4", 3],
      ["enam", "1/4:2/4", 3],
      ["weur", "2/4:3/4", 3],
      ["apac", "3/4:4/4", 3],
    ]);
  });

  it("warns when explicit shards are too few for the peak rate", () => {
    const r = plan({ rate: 3000, shards: 4 });
    expect(r.ok && r.plan.notes.join()).toContain("may saturate");
  });

  it("refuses runs over the deployment's caps, naming each cap", () => {
    const r = plan({ rate: 50_000, duration: "2h", shards: 300 });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.status).toBe(403);
      const text = r.problems.map((p) => `${p.field}: ${p.detail}`).join("\n");
      expect(text).toMatch(/rate: peak rate 50000\/s exceeds/);
      expect(text).toMatch(/duration: duration 7200s exceeds/);
      expect(text).toMatch(/shards: 300 shards exceed/);
      expect(text).toMatch(/requests in total exceed/);
    }
  });

  it("leaves room under the subrequest limit for flushes", () => {
    const r = plan({}, { ...DEFAULT_LIMITS, subrequestsPerInvocation: 1000 });
    expect(r.ok && r.plan.iterationsPerInvocation).toBe(500);
  });

  describe("closed-model runs", () => {
    const vus = {
      executor: "ramping-vus",
      startVUs: 0,
      stages: [
        { target: 100, duration: "60s" },
        { target: 100, duration: "60s" },
      ],
      rate: undefined,
      duration: undefined,
      flow: "sequence",
      steps: [
        { path: "/a", think: "1s" },
        { path: "/b", think: { min: "0s", max: "2s" } },
      ],
    };

    it("estimates the requests from VU-seconds, the expected latency and think time, and says it is an estimate", () => {
      const r = plan(vus);
      if (!r.ok) throw new Error(JSON.stringify(r.problems));
      // 49.5 × 60 + 100 × 60 = 8970 VU-s; an iteration is 2 × 50 ms + 1 s + 1 s (mean) = 2.1 s.
      expect(r.plan.closedModel).toEqual({ peakVUs: 100, vuSeconds: 8970, estimatedIterations: 4272, estimatedRequests: 8544 });
      expect(r.plan.totalIterations).toBe(4272);
      expect(r.plan.notes.join()).toMatch(/closed model: the total cannot be known in advance; estimated ~8544 requests/);
      // 100 VUs × 2 requests per 2.1 s ≈ 95/s: one shard per region is plenty.
      expect(r.plan.shards).toHaveLength(4);
    });

    it("caps VUs (MAX_VUS) instead of the rate, and keeps room in the budget for iterations in progress", () => {
      const refused = plan(vus, { ...DEFAULT_LIMITS, maxVUs: 50 });
      expect(!refused.ok && refused.problems).toEqual([{ field: "stages", detail: "100 VUs exceed this deployment's cap of 50" }]);
      const r = plan(vus, { ...DEFAULT_LIMITS, subrequestsPerInvocation: 1000 });
      // 1000 − 500 reserved for flushes − 25 VUs per shard × 2 requests.
      expect(r.ok && r.plan.iterationsPerInvocation).toBe(450);
    });
  });
});

describe("planRun: the subrequest budget per invocation", () => {
  it.each([
    // [spec overrides, requests per iteration, why]
    [{}, 1, "one step per iteration: the budget is the subrequests less the reserve"],
    [{ flow: "sequence", steps: [{ path: "/a" }, { path: "/b" }, { path: "/c" }] }, 3, "a 3-step sequence sends 3 requests per iteration"],
    [{ steps: [{ path: "/a" }, { path: "/b" }] }, 1, "a weighted pick sends one of them"],
  ])("%j: %i requests per iteration keep an invocation within 10,000 subrequests (%s)", (overrides, perIteration, _why) => {
    const r = plan(overrides);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(r.plan.iterationsPerInvocation * perIteration + 500).toBeLessThanOrEqual(DEFAULT_LIMITS.subrequestsPerInvocation);
    expect(r.plan.iterationsPerInvocation * (perIteration + 1) + 500).toBeGreaterThan(DEFAULT_LIMITS.subrequestsPerInvocation);
  });
});

describe("a k6 script's WebSockets", () => {
  /**
   * A script run of `vus` VUs in one region, each iteration mostly waiting (10 s think), so
   * that its request rate needs few shards; `sockets` when it imports k6/websockets (its spec
   * then declares k6's ws_* metrics).
   */
  const scriptRun = (vus: number, sockets: boolean) =>
    spec({
      steps: [{ path: "/", think: "10s" }],
      regions: ["weur"],
      executor: "constant-vus",
      vus,
      duration: "30s",
      rate: undefined,
      script: { bundle: "a".repeat(64), exec: "default" },
      metrics: sockets ? { ws_sessions: { type: "counter" }, ws_msgs_sent: { type: "counter" } } : {},
    });

  it.each([
    // [VUs, imports k6/websockets, shards, why]
    [3_000, false, 4, "~298 iterations/s at 84/s a shard (6 slots / 50 ms at 70%): the rate needs 4"],
    [3_000, true, 5, "3,000 sockets at most 614 a shard (a held connection's memory): 5"],
    [4_800, false, 6, "~478/s: the rate needs 6"],
    [4_800, true, 8, "4,800 sockets: 8"],
  ])("%i VUs, sockets %s → %i shards (%s)", (vus, sockets, shards, _why) => {
    const s = scriptRun(vus, sockets);
    const r = planRun(s, 0);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(r.plan.shards.length).toBe(shards);
    const row = checkPlatformLimits(s, r.plan, estimateUsage(s, r.plan)).find((c) => c.limit === "SSE streams and WebSockets per shard")!;
    expect(row.value).toBe(sockets ? Math.ceil(vus / shards) : 0);
    expect(row.ok).toBe(true);
    if (sockets) expect(r.plan.notes.join("\n")).toContain(`WebSockets: up to ~${vus} open at once (one per VU); a handshake is one of the 6 connections`);
  });
});
