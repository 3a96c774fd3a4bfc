import { describe, expect, it } from "vitest";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { planRun } from "../plan/plan.ts";
import { parseRunSpec } from "../spec/run-spec.ts";
import { RunTotals } from "./run-totals.ts";
import { MAX_ERROR_SAMPLES, MetricStats, OTHER_ERRORS } from "../metrics/metric-stats.ts";
import { buildFinalSummary, buildSummary } from "./summary.ts";
import { shouldAbortRun } from "./run-thresholds.ts";
import { saturation } from "./saturation.ts";
import { renderSummary } from "./summary-text.ts";

function setup(overrides: Record<string, unknown> = {}) {
  const r = parseRunSpec({
    target: "http://127.0.0.1:9090",
    steps: [{ path: "/" }],
    executor: "constant-arrival-rate",
    rate: 10,
    duration: "10s",
    shards: 2,
    regions: ["wnam", "weur"],
    thresholds: { http_req_duration: ["p(95)<50", "p(99)<1000"], "http_req_duration{region:weur}": ["p(95)<50"], http_req_failed: ["rate<0.5"] },
    ...overrides,
  });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  const planned = planRun(r.spec, new ArrivalSchedule(r.spec.stages).total);
  if (!planned.ok) throw new Error();
  return { spec: r.spec, plan: planned.plan };
}

/** Stats of `n` requests all taking `ms` milliseconds. */
function requests(n: number, ms: number, failed = 0): MetricStats {
  const s = new MetricStats();
  for (let i = 0; i < n; i++) {
    s.counters.sent++;
    s.counters.completed++;
    s.trends.duration.record(ms * 1000);
    s.trends.lag.record(500);
    s.countStatus(200);
  }
  s.counters.failed += failed;
  return s;
}

describe("buildSummary", () => {
  // wnam: 90 fast requests at 10 ms; weur: 10 slow ones at 400 ms. Averaging per-region
  // p95s would give (10 + 400) / 2 = 205 ms; the merged histogram's p95 is 400 ms, and its
  // p90 is 10 ms. A summary that averages percentiles fails this test.
  const { spec, plan } = setup();
  const totals = new RunTotals();
  totals.add(0, "wnam", 0, requests(90, 10));
  totals.add(1, "weur", 0, requests(10, 400, 5));
  const summary = buildSummary({
    runId: "r-test",
    status: "failed",
    spec,
    plan,
    t0Ms: 0,
    endMs: 10_000,
    totals,
    shards: plan.shards.map((s) => ({ index: s.index, region: s.region, segment: s.segment, colo: "local", telemetry: null })),
  });
  const m = summary.metrics as Record<string, any>;

  it("computes global percentiles from the merged histogram, never by averaging groups", () => {
    expect(m.http_req_duration["p(95)"]).toBeCloseTo(400, 0);
    expect(m.http_req_duration["p(90)"]).toBeCloseTo(10, 0);
    expect(summary.edgeload.regions.wnam!.http_req_duration!["p(95)"]).toBeCloseTo(10, 0);
    expect(summary.edgeload.regions.weur!.http_req_duration!["p(95)"]).toBeCloseTo(400, 0);
  });

  it("uses k6's summary-export shapes: counters with rate, rates with passes/fails/value", () => {
    expect(m.http_reqs).toEqual({ count: 100, rate: 10 });
    expect(m.http_req_failed).toMatchObject({ passes: 5, fails: 95, value: 0.05 });
    expect(Object.keys(m.http_req_duration)).toEqual(expect.arrayContaining(["avg", "min", "med", "max", "p(90)", "p(95)", "thresholds"]));
  });

  it("marks thresholds the k6 way (true = failed) and lists them with observed values", () => {
    expect(m.http_req_duration.thresholds).toEqual({ "p(95)<50": true, "p(99)<1000": false });
    expect(m["http_req_duration{region:weur}"].thresholds).toEqual({ "p(95)<50": true });
    expect(summary.edgeload.thresholdsPassed).toBe(false);
    expect(summary.edgeload.thresholds.find((t) => t.metric === "http_req_failed")).toMatchObject({ ok: true, observed: 0.05 });
  });

  it("breaks down per shard and per colo", () => {
    expect(summary.edgeload.shards.map((s) => s.requests)).toEqual([90, 10]);
    expect(summary.edgeload.colos.local!.requests).toBe(100);
  });

  it.each([
    // [each request's ms, failed requests, schedule lag µs, verdict, exit code]
    [60, 0, 500, "failed", 99], // p95 60 ms over 50 while the generator kept up: the target's
    [60, 0, 50_000, "inconclusive", 75], // 50 ms late: the failing time is partly edgeload's
    [10, 80, 50_000, "failed", 99], // 80% failed answers: the target's, however late edgeload sent them
    [10, 0, 50_000, "passed", 0], // saturated but every threshold held: nothing to doubt
  ] as const)("ends a run of %i ms requests, %i failed, lag %i µs: %s, exit %i", (ms, failed, lagUs, verdict, exitCode) => {
    const totals = new RunTotals();
    const late = new MetricStats();
    for (let i = 0; i < 100; i++) late.trends.lag.record(lagUs);
    for (const [shard, region] of [
      [0, "wnam"],
      [1, "weur"],
    ] as const) {
      totals.add(shard, region, 0, requests(100, ms, failed));
      totals.add(shard, region, 0, late);
    }
    const summary = buildFinalSummary({ runId: "r-sat", spec, plan, t0Ms: 0, endMs: 10_000, totals, shards: [] }, null);
    expect(summary.edgeload.status).toBe(verdict);
    expect(summary.edgeload.verdict?.kind).toBe(verdict);
    expect(summary.edgeload.exitCode).toBe(exitCode);
    const text = renderSummary(summary);
    expect(text.split("\n")[0]).toContain(`· ${verdict.toUpperCase()}`);
    expect(text.includes("the time may be edgeload's own")).toBe(verdict === "inconclusive");
  });

  it("never passes a run whose shards did not all report, or whose threshold has no data", () => {
    const totals = new RunTotals();
    totals.add(0, "wnam", 0, requests(100, 10));
    totals.add(1, "weur", 0, requests(100, 10));
    const shards = plan.shards.map((sh) => ({ index: sh.index, region: sh.region, segment: sh.segment, colo: "local", telemetry: null }));
    const input = { runId: "r-gaps", spec, plan, t0Ms: 0, endMs: 10_000, totals, shards };
    expect(buildFinalSummary(input, null).edgeload.status).toBe("passed");
    const silent = buildFinalSummary({ ...input, silentReporters: 1 }, null);
    expect(silent.edgeload.verdict).toEqual({ kind: "inconclusive", reasons: [expect.stringContaining("1 of 2 shards never reported done")] });
    const onlyWnam = new RunTotals();
    onlyWnam.add(0, "wnam", 0, requests(100, 10));
    const noData = buildFinalSummary({ ...input, totals: onlyWnam }, null);
    expect(noData.edgeload.exitCode).toBe(75);
    expect(noData.edgeload.verdict).toEqual({
      kind: "inconclusive",
      reasons: [expect.stringContaining("http_req_duration{region:weur}: p(95)<50 has no data")],
    });
    expect(noData.edgeload.thresholds.find((t) => t.metric === "http_req_duration{region:weur}")).toMatchObject({ state: "no-data", ok: false });
    expect(noData.edgeload.thresholdsPassed).toBe(false);
  });

  it("says thresholdsPassed only of a run that passed: an aborted or errored run's thresholds held over part of it", () => {
    const { spec, plan } = setup({ regions: ["wnam"], shards: 1, thresholds: { http_req_duration: ["p(95)<500"] } });
    const totals = new RunTotals();
    totals.add(0, "wnam", 0, requests(100, 10));
    const input = { runId: "r-forced", spec, plan, t0Ms: 0, endMs: 10_000, totals, shards: [] };
    expect(buildFinalSummary(input, null).edgeload.thresholdsPassed).toBe(true);
    for (const forced of ["aborted", "error"] as const) {
      const ended = buildFinalSummary({ ...input, abortReason: "stopped" }, forced);
      expect(
        ended.edgeload.thresholds.every((t) => t.state === "passed"),
        forced,
      ).toBe(true);
      expect(ended.edgeload.thresholdsPassed, forced).toBe(false);
    }
  });

  it("keeps the first distinct errors per step with their counts, the rest as one row, through merges and the wire", () => {
    const stats = new MetricStats();
    for (let i = 0; i < 3; i++) stats.countError("HTTP 503 Service Unavailable");
    // A target that answers a new message per request cannot grow the stats past the cap.
    for (let i = 0; i < MAX_ERROR_SAMPLES + 5; i++) stats.countError(`connection error: socket ${i}`);
    expect(Object.keys(stats.errors)).toHaveLength(MAX_ERROR_SAMPLES + 1);
    expect(stats.errors[OTHER_ERRORS]).toBe(6); // the 10th distinct message on, after the 503s
    const roundTrip = MetricStats.fromWire(stats.toWire());
    expect(roundTrip.errors).toEqual(stats.errors);
    expect(new MetricStats().merge(stats).merge(roundTrip).errors["HTTP 503 Service Unavailable"]).toBe(6);

    const run = setup({
      steps: [
        { name: "login", path: "/login" },
        { name: "profile", path: "/me" },
      ],
    });
    const t = new RunTotals();
    const login = requests(10, 5);
    login.countError("HTTP 401 Unauthorized", 7);
    const profile = requests(10, 5);
    profile.countError("timeout after 10000 ms", 2);
    t.add(0, "wnam", 0, login);
    t.add(0, "wnam", 1, profile);
    const summary = buildSummary({ runId: "r-err", status: "passed", spec: run.spec, plan: run.plan, t0Ms: 0, endMs: 10_000, totals: t, shards: [] });
    expect(summary.edgeload.errors).toEqual([
      { step: "login", error: "HTTP 401 Unauthorized", count: 7 },
      { step: "profile", error: "timeout after 10000 ms", count: 2 },
    ]);
    expect(renderSummary(summary)).toMatch(
      /ERRORS \(first distinct, most frequent first\)\n\s+step\s+error\s+count\n\s+login\s+HTTP 401 Unauthorized\s+7\n\s+profile\s+timeout after 10000 ms\s+2/,
    );
  });

  it("shows the trend figures a run's summaryTrendStats asks for, in its order, in the data and the text", () => {
    const run = setup({ summaryTrendStats: ["avg", "med", "p(99.9)", "count"] });
    const t = new RunTotals();
    t.add(0, "wnam", 0, requests(1000, 10));
    const s = buildSummary({ runId: "r-stats", status: "passed", spec: run.spec, plan: run.plan, t0Ms: 0, endMs: 10_000, totals: t, shards: [] });
    const duration = (s.metrics as Record<string, Record<string, number>>).http_req_duration!;
    expect(duration["p(99.9)"]).toBeCloseTo(10, 0);
    expect(duration.count).toBe(1000);
    expect(s.options.summaryTrendStats).toEqual(["avg", "med", "p(99.9)", "count"]);
    expect(renderSummary(s)).toMatch(/http_req_duration\.+: avg=10\.0\d*ms med=10\.0\d*ms p\(99\.9\)=10\.0\d*ms count=1000$/m);
  });

  it.each([["mean"], ["p(101)"], ["p()"]])("refuses summaryTrendStats naming %s", (stat) => {
    const parsed = parseRunSpec({
      target: "http://127.0.0.1:9090",
      steps: [{ path: "/" }],
      executor: "constant-arrival-rate",
      rate: 10,
      duration: "10s",
      summaryTrendStats: ["avg", stat],
    });
    expect(parsed.ok ? [] : parsed.problems.map((p) => p.field)).toEqual(["summaryTrendStats.1"]);
  });

  it("renders a k6-style text summary with per-region rows", () => {
    const text = renderSummary(summary);
    expect(text).toMatch(/✗ http_req_duration 'p\(95\)<50'/);
    expect(text).toMatch(/http_reqs\.+: 100 10\.00\/s/);
    expect(text).toMatch(/^ {2}weur +10 /m);
  });
});

describe("saturation", () => {
  it.each([
    // [what happened, saturated]
    [
      (s: MetricStats) => {
        s.counters.dropped = 3;
      },
      true,
    ],
    [
      (s: MetricStats) => {
        s.counters.interrupted = 1;
      },
      true,
    ],
    [
      (s: MetricStats) => {
        for (let i = 0; i < 100; i++) s.trends.lag.record(50_000);
      },
      true,
    ],
    [
      (s: MetricStats) => {
        for (let i = 0; i < 100; i++) s.trends.lag.record(1_000);
      },
      false,
    ],
    // The generator's own loop held 6% of responses for 40 ms: its p95 is the generator's.
    [
      (s: MetricStats) => {
        for (let i = 0; i < 100; i++) s.trends.clientDelay.record(i < 94 ? 0 : 40_000);
      },
      true,
    ],
    [
      (s: MetricStats) => {
        for (let i = 0; i < 100; i++) s.trends.clientDelay.record(i < 96 ? 0 : 40_000);
      },
      false,
    ],
  ])("case %# → saturated=%s", (mutate, expected) => {
    const s = requests(10, 20);
    mutate(s);
    expect(saturation(s).saturated).toBe(expected);
  });
});

describe("shouldAbortRun", () => {
  it("only considers abortOnFail thresholds", () => {
    const totals = new RunTotals();
    totals.add(0, "wnam", 0, requests(10, 10, 10));
    expect(shouldAbortRun(setup().spec, totals, 5_000)).toBeUndefined();
    const { spec } = setup({ thresholds: { http_req_failed: [{ threshold: "rate<0.1", abortOnFail: true }] } });
    expect(shouldAbortRun(spec, totals, 5_000)?.source).toBe("rate<0.1");
  });
});

describe("closed-model summaries", () => {
  it("show VUs instead of a target rate, the spec's custom metrics, and thresholds on them", () => {
    const { spec, plan } = setup({
      executor: "ramping-vus",
      startVUs: 0,
      stages: [
        { target: 10, duration: "5s" },
        { target: 0, duration: "5s" },
      ],
      rate: undefined,
      duration: undefined,
      metrics: { login_duration: { type: "trend" }, login_success_rate: { type: "rate" } },
      steps: [{ name: "login", path: "/login", record: { login_duration: "duration", login_success_rate: "success" } }],
      thresholds: { login_duration: ["p(95)<300"], login_success_rate: ["rate>0.9"] },
    });
    const stats = requests(20, 100);
    stats.counters.iterations = 20;
    for (let i = 0; i < 20; i++) {
      stats.custom.trend("login_duration", 100_000);
      stats.custom.rate("login_success_rate", i > 0);
    }
    const totals = new RunTotals();
    totals.add(0, "wnam", 0, stats);
    const summary = buildSummary({ runId: "r-vus", status: "passed", spec, plan, t0Ms: 0, endMs: 10_000, totals, shards: [] });
    const e = summary.edgeload;
    expect(e.targetRatePerS).toBeNull();
    expect(e.vus).toEqual({
      peak: 10,
      startVUs: 0,
      stages: [
        { target: 10, durationS: 5 },
        { target: 0, durationS: 5 },
      ],
      gracefulRampDownS: 30,
    });
    expect(e.customMetrics.login_success_rate).toEqual({ type: "rate", passes: 19, fails: 1, value: 0.95 });
    expect((summary.metrics as Record<string, any>).login_duration).toMatchObject({ type: "trend", "p(95)": 100, thresholds: { "p(95)<300": false } });
    expect(e.thresholds.map((t) => [t.metric, t.ok])).toEqual([
      ["login_duration", true],
      ["login_success_rate", true],
    ]);
    const text = renderSummary(summary);
    expect(text).toMatch(/vus\.+: peak 10 · from 0: 10 for 5s, 0 for 5s/);
    expect(text).toContain("CUSTOM METRICS");
    expect(text).not.toContain("target vs achieved");
    expect(text).not.toMatch(/null|NaN|undefined/);
  });
});

describe("externally-controlled summaries", () => {
  it("say the level was the user's, from its vus to at most its maxVUs, not a planned peak", () => {
    const { spec, plan } = setup({ executor: "externally-controlled", vus: 1, maxVUs: 4, duration: "10s", rate: undefined, thresholds: {} });
    const totals = new RunTotals();
    totals.add(0, "wnam", 0, requests(20, 100));
    const summary = buildSummary({ runId: "r-ext", status: "passed", spec, plan, t0Ms: 0, endMs: 10_000, totals, shards: [] });
    expect(summary.edgeload.vus).toMatchObject({ externallyControlled: { startVUs: 1, maxVUs: 4 } });
    expect(renderSummary(summary)).toMatch(/vus\.+: externally controlled · from 1, at most 4 · 10s/);
  });
});

describe("what edgeload did not send", () => {
  // 10/s for 10 s: 100 iterations scheduled; 95 sent and answered in 10 ms, 5 lost to a shard restart.
  const restarted = (overrides: Record<string, unknown> = {}) => {
    const { spec, plan } = setup({ thresholds: { http_req_duration: ["p(95)<50"] }, ...overrides });
    const stats = requests(95, 10);
    stats.counters.iterations = 95;
    stats.counters.dropped = 5;
    stats.counters.interrupted = 5;
    const totals = new RunTotals();
    totals.add(0, "wnam", 0, stats);
    return buildFinalSummary({ runId: "r-restart", spec, plan, t0Ms: 0, endMs: 10_000, totals, shards: [] }, null);
  };

  it("makes a run that lost more of its schedule than the bound inconclusive, naming edgeload, never the target", () => {
    const summary = restarted();
    expect(summary.edgeload.verdict).toEqual({
      kind: "inconclusive",
      reasons: ["edgeload did not send 5 % of the schedule (5 of 100 iterations: shard restarts); above the 1 % bound, so the run cannot pass"],
    });
    expect(summary.edgeload.exitCode).toBe(75);
    expect(summary.edgeload.totals.notSent).toEqual({ count: 5, restarts: 5, unstarted: 0, scheduled: 100, share: 0.05, bound: 0.01 });
    expect(summary.edgeload.saturationCauses).toEqual([]);
    const text = renderSummary(summary);
    expect(text).toMatch(/not sent by edgeload\.+: 5 \(5 % of 100\): 5 lost to shard restarts; bound 1 %/);
    expect(text).toContain("LOAD NOT FULLY SENT — edgeload itself did not send part of the schedule");
    expect(text).not.toMatch(/in-flight cap|HELD BACK BY THE TARGET/);
  });

  it("lets the run's maxNotSentShare allow it, still showing the figure", () => {
    const summary = restarted({ maxNotSentShare: 0.1 });
    expect(summary.edgeload.verdict).toEqual({ kind: "passed" });
    expect(summary.edgeload.totals.notSent).toMatchObject({ count: 5, share: 0.05, bound: 0.1 });
    expect(renderSummary(summary)).toContain("not sent by edgeload");
  });

  it("still fails a run whose threshold broke on what did arrive", () => {
    const summary = restarted({ thresholds: { http_req_duration: ["p(95)<5"] } });
    expect(summary.edgeload.verdict?.kind).toBe("failed");
  });

  it("prints no line for a run that sent its whole schedule", () => {
    const { spec, plan } = setup({ thresholds: {} });
    const totals = new RunTotals();
    totals.add(0, "wnam", 0, requests(100, 10));
    const summary = buildFinalSummary({ runId: "r-whole", spec, plan, t0Ms: 0, endMs: 10_000, totals, shards: [] }, null);
    expect(summary.edgeload.totals.notSent.count).toBe(0);
    expect(renderSummary(summary)).not.toContain("not sent by edgeload");
  });
});

describe("the measured path in summaries: clock resolution and Cloudflare's signature", () => {
  const { spec, plan } = setup();
  const summaryWith = (clockResolutionUs: number | null, behindCloudflare = false) => {
    const totals = new RunTotals();
    totals.add(0, "wnam", 0, requests(100, 3.024));
    const telemetry = { region: "wnam", colo: "local", invocations: 1, restarts: 0, subrequests: 100, peakInFlight: 1, clockResolutionUs, behindCloudflare };
    return buildSummary({
      runId: "r-test",
      status: "passed",
      spec,
      plan,
      t0Ms: 0,
      endMs: 10_000,
      totals,
      shards: plan.shards.map((s) => ({ index: s.index, region: s.region, segment: s.segment, colo: "local", telemetry: s.index === 0 ? telemetry : null })),
    });
  };

  it.each([
    // [shard clock µs, resolution ms, how p95 prints, why]
    [1000, 1, "p(95)=3ms", "workerd's 1 ms clock: no digits it did not measure"],
    [100, 0.1, "p(95)=3.0ms", "a 100 µs clock: one decimal"],
    [1, 0.001, "p(95)=3.02ms", "a microsecond clock: k6's two decimals"],
  ])("a %i µs clock → resolution %d ms, %s (%s)", (us, ms, printed, _why) => {
    const summary = summaryWith(us);
    expect(summary.edgeload.clock.resolutionMs).toBe(ms);
    const text = renderSummary(summary);
    expect(text).toContain(printed);
    expect(text).toMatch(/clock: .* \(detected from the shards' readings\)/);
  });

  it("says nothing about the clock when no request was timed", () => {
    expect(summaryWith(null).edgeload.clock).toEqual({ resolutionMs: null, note: "no request was timed" });
  });

  it("marks a run whose target answered with Cloudflare's signature, and only such a run", () => {
    const behind = summaryWith(1000, true);
    expect(behind.edgeload.path.targetBehindCloudflare).toBe(true);
    expect(renderSummary(behind)).toMatch(/path: the target answered through Cloudflare \(cf-ray\): the load reached it as Worker subrequests/);
    const direct = summaryWith(1000, false);
    expect(direct.edgeload.path).toEqual({ targetBehindCloudflare: false, note: null });
    expect(renderSummary(direct)).not.toContain("path:");
  });
});
