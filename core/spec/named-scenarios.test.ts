import { describe, expect, it } from "vitest";
import { scenarioOfStep } from "./named-scenarios.ts";
import { DEFAULT_LIMITS, planRun } from "../plan/plan.ts";
import { STREAMS_PER_SHARD } from "../plan/held-connections.ts";
import { specProblems, validSpec } from "../../test/support/run-spec-fixtures.ts";
import { shardAssignments } from "../schedule/shard-assignment.ts";
import { targetLoadAt } from "../schedule/load-profile.ts";
import { RunTotals } from "../run/run-totals.ts";
import { MetricStats } from "../metrics/metric-stats.ts";
import { thresholdOutcomes } from "../run/run-thresholds.ts";

/** The config-streaming shape: streams, an admin writer from 5 s, a scraper. */
const CONFIG_STREAMING = {
  name: "config-streaming",
  target: "http://127.0.0.1:9090",
  secrets: { admin: "s3cret" },
  regions: ["wnam", "weur"],
  thresholds: { http_req_failed: ["rate<0.01"] },
  scenarios: {
    streams: {
      executor: "constant-vus",
      vus: 3000,
      duration: "60s",
      steps: [{ name: "open", path: "/app/config/stream", sse: {} }],
      thresholds: { sse_time_to_first_message: ["p(95)<500"] },
    },
    admin: {
      executor: "constant-arrival-rate",
      rate: 1,
      timeUnit: "2s",
      duration: "50s",
      startTime: "5s",
      steps: [{ name: "write", method: "PUT", path: "/app/config/flag", headers: { authorization: "Bearer {{secrets.admin}}" }, body: { value: "{{uuid}}" } }],
      thresholds: { http_req_duration: ["p(95)<300"], "http_req_duration{step:write}": ["p(99)<500"] },
    },
    scrape: {
      executor: "constant-arrival-rate",
      rate: 1,
      timeUnit: "5s",
      duration: "60s",
      shards: 1,
      regions: ["wnam"],
      steps: [{ name: "metrics", path: "/metrics", scrape: { series: ["target_sse_streams_open", 'target_requests_total{route=~"/app/.*"}'] } }],
    },
  },
};

describe("named scenarios", () => {
  it("decodes each scenario as a spec of its own and lists their steps under qualified names", () => {
    const spec = validSpec(CONFIG_STREAMING);
    expect(spec.executor).toBe("scenarios");
    expect(spec.scenarios!.map((s) => [s.name, s.startMs, s.stepOffset, s.spec.executor])).toEqual([
      ["streams", 0, 0, "constant-vus"],
      ["admin", 5000, 1, "constant-arrival-rate"],
      ["scrape", 0, 2, "constant-arrival-rate"],
    ]);
    expect(spec.steps.map((s) => s.name)).toEqual(["streams.open", "admin.write", "scrape.metrics"]);
    expect(spec.durationMs).toBe(60_000); // admin ends at 5 + 50 s
    // Shared fields reach every scenario; a scenario's own win.
    expect(spec.scenarios![1]!.spec.secrets).toEqual({ admin: "s3cret" });
    expect(spec.scenarios![2]!.spec.regions).toEqual(["wnam"]);
    expect(spec.scenarios![0]!.spec.steps[0]!.headers.accept).toBe("text/event-stream");
    expect(scenarioOfStep(spec, 1)!.name).toBe("admin");
  });

  it("rewrites each scenario's thresholds to k6's {scenario:…} filter next to the run's own", () => {
    const spec = validSpec(CONFIG_STREAMING);
    expect(Object.keys(spec.thresholds).sort()).toEqual([
      "http_req_duration{scenario:admin,step:write}",
      "http_req_duration{scenario:admin}",
      "http_req_failed",
      "sse_time_to_first_message{scenario:streams}",
    ]);
  });

  it("evaluates a scenario's thresholds over its own steps only", () => {
    const spec = validSpec(CONFIG_STREAMING);
    const totals = new RunTotals();
    const slow = new MetricStats();
    slow.counters.completed = 10;
    for (let i = 0; i < 10; i++) slow.trends.duration.record(900_000); // 900 ms: the streams' step
    const fast = new MetricStats();
    fast.counters.completed = 10;
    for (let i = 0; i < 10; i++) fast.trends.duration.record(20_000); // 20 ms: admin writes
    totals.add(0, "wnam", 0, slow);
    totals.add(1, "wnam", 1, fast);
    const { outcomes } = thresholdOutcomes(spec, totals, 10);
    const admin = outcomes.find((o) => o.key === "http_req_duration{scenario:admin}")!;
    expect(admin.state).toBe("passed");
    expect(admin.observed).toBeLessThan(25);
    expect(outcomes.find((o) => o.key === "http_req_duration{scenario:admin,step:write}")!.observed).toBeLessThan(25);
  });

  it("evaluates a run-level {step:…} filter over that step in every scenario, as k6's step tag", () => {
    // Two scenarios with a step named alike: k6 tags both `step:write`.
    const spec = validSpec({
      target: "http://127.0.0.1:9090",
      thresholds: { "http_req_duration{step:write}": ["max<100"] },
      scenarios: {
        a: {
          executor: "constant-vus",
          vus: 1,
          duration: "5s",
          steps: [
            { name: "read", path: "/" },
            { name: "write", path: "/" },
          ],
        },
        b: { executor: "constant-vus", vus: 1, duration: "5s", steps: [{ name: "write", path: "/" }] },
      },
    });
    const totals = new RunTotals();
    const stats = (ms: number) => {
      const m = new MetricStats();
      m.counters.completed = 1;
      m.trends.duration.record(ms * 1000);
      return m;
    };
    totals.add(0, "wnam", 0, stats(500)); // a.read: not a write, not counted
    totals.add(0, "wnam", 1, stats(20)); // a.write
    totals.add(1, "wnam", 2, stats(60)); // b.write
    const outcome = thresholdOutcomes(spec, totals, 5).outcomes.find((o) => o.key === "http_req_duration{step:write}")!;
    expect(outcome.observed).toBeGreaterThan(55);
    expect(outcome.observed).toBeLessThan(65);
    expect(outcome.state).toBe("passed");
  });

  it("names every problem with its scenario's path", () => {
    const problems = specProblems({
      target: "http://127.0.0.1:9090",
      executor: "constant-vus",
      thresholds: { "http_req_duration{scenario:nope}": ["p(95)<1"] },
      scenarios: {
        a: { executor: "constant-vus", vus: 1, duration: "1s", startTime: "1.5s", steps: [{ path: "/" }] },
        b: { executor: "constant-arrival-rate", duration: "1s", steps: [{ path: "/" }], target: "http://elsewhere" },
        "bad.name": { executor: "constant-vus", vus: 1, duration: "1s", steps: [{ path: "/" }] },
      },
    });
    const fields = problems.map((p) => p.field);
    expect(fields).toContain("executor");
    expect(fields).toContain("scenarios.a.startTime");
    expect(fields).toContain("scenarios.b.rate");
    expect(fields).toContain("scenarios.b.target");
    expect(fields).toContain("scenarios.bad.name");
    expect(problems.find((p) => p.field === "thresholds.http_req_duration{scenario:nope}")?.detail).toMatch(/no scenario named nope/);
  });

  it("takes maxNotSentShare once, for the whole run: checked at the run's level, refused inside a scenario", () => {
    expect(validSpec({ ...CONFIG_STREAMING, maxNotSentShare: 0.02 }).maxNotSentShare).toBe(0.02);
    const a = { executor: "constant-vus", vus: 1, duration: "1s", steps: [{ path: "/" }] };
    const found = specProblems({ target: "http://127.0.0.1:9090", maxNotSentShare: 2, scenarios: { a: { ...a, maxNotSentShare: 0.5 } } });
    expect(found.map((p) => p.field)).toEqual(expect.arrayContaining(["maxNotSentShare", "scenarios.a.maxNotSentShare"]));
    expect(found.find((p) => p.field === "maxNotSentShare")!.detail).toMatch(/from 0 to 1/);
  });

  it("plans each scenario with its own shards and starts them at their start times", () => {
    const spec = validSpec(CONFIG_STREAMING);
    const planned = planRun(spec, 0, DEFAULT_LIMITS);
    if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
    const plan = planned.plan;
    const byScenario = plan.scenarios!.map((s) => [s.name, s.firstShard, s.shardCount]);
    // 3000 streams at STREAMS_PER_SHARD each, rounded up to the 2 regions.
    const streamShards = Math.ceil(Math.ceil(3000 / STREAMS_PER_SHARD) / 2) * 2;
    expect(byScenario).toEqual([
      ["streams", 0, streamShards],
      ["admin", streamShards, 2],
      ["scrape", streamShards + 2, 1],
    ]);
    expect(plan.shards.map((s) => s.index)).toEqual(plan.shards.map((_, i) => i));
    expect(plan.notes.some((n) => n.startsWith("streams: SSE: up to ~3000 streams"))).toBe(true);

    const assignments = shardAssignments({ runId: "r", spec, plan, t0Ms: 1_000_000, mode: "local", flushGraceMs: 0 });
    expect(assignments).toHaveLength(plan.shards.length);
    const admin = assignments[streamShards]!;
    expect(admin.t0Ms).toBe(1_005_000);
    // Its 50 s, then k6's default gracefulStop (30 s, longer than the 10 s timeout) for iterations in progress.
    expect(admin.deadlineMs).toBe(1_005_000 + 50_000 + 30_000);
    // Its VUs come after the 3000 of streams (core/schedule/vu-ids.ts).
    expect(admin.part).toEqual({ scenario: "admin", runShard: streamShards, stepOffset: 1, windowOffsetS: 5, vuIdOffset: 3000 });
    expect(admin.shard.index).toBe(0); // its index within its scenario, for its share of the schedule
    expect(admin.spec.steps.map((s) => s.name)).toEqual(["write"]);
  });

  it("shows the load asked for now, summed over the scenarios that have started", () => {
    const spec = validSpec(CONFIG_STREAMING);
    expect(targetLoadAt(spec, 1_000)).toEqual({ ratePerS: 0.2, vus: 3000 }); // admin not started yet
    expect(targetLoadAt(spec, 10_000)).toEqual({ ratePerS: 0.7, vus: 3000 });
  });
});

describe("setup and teardown", () => {
  const base = { target: "http://127.0.0.1:9090", executor: "constant-arrival-rate", rate: 10, duration: "5s" };

  it("lets every step use what setup captured as {{setup.NAME}}", () => {
    const spec = validSpec({
      ...base,
      setup: [{ method: "POST", path: "/login", body: { user: "a" }, capture: { token: { json: "$.token" } } }],
      steps: [{ path: "/me", headers: { authorization: "Bearer {{setup.token}}" } }],
      teardown: [{ method: "DELETE", path: "/logout", headers: { authorization: "Bearer {{setup.token}}" } }],
    });
    expect(spec.setup!.map((s) => s.name)).toEqual(["default"]);
    expect(spec.teardown).toHaveLength(1);
  });

  it("refuses unknown setup values and load-only options in setup", () => {
    const problems = specProblems({
      ...base,
      setup: [{ path: "/x", think: "1s", sse: {} }],
      steps: [{ path: "/{{setup.missing}}" }],
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        { field: "steps.0.path", detail: '{{setup.missing}}: no setup step captures "missing"' },
        expect.objectContaining({ field: "setup.0.think" }),
        expect.objectContaining({ field: "setup.0.sse" }),
      ]),
    );
  });
});
