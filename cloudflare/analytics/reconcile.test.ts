import { describe, expect, it } from "vitest";
import type { CloudflareAnalytics } from "./client.ts";
import { toD1Group, toDurableObjectGroup, toWorkerGroup, toZoneGroup, toZoneLatency, type GraphQLRow, type ZoneGroup } from "./queries.ts";
import { reconcile, runTrafficFrom } from "./reconcile.ts";
import type { FindingKind, Reconciliation, RunTraffic } from "./reconciliation.ts";
import { renderReconciliation } from "./reconciliation-text.ts";
import { fixtureRows, SCENARIO, scenarioSeconds, scenarioSummary } from "../../test/support/cloudflare-analytics.ts";
import { cloudflareBlocks } from "../../reports/cloudflare-section.ts";
import { toMarkdown } from "../../reports/document.ts";

const AFTER_RUN = Date.parse("2026-11-20T13:00:00Z");

/** The fixtures' scenario as client.ts returns it (see test/support/cloudflare-analytics.ts for the story). */
function scenarioAnalytics(): CloudflareAnalytics {
  const rows = (name: string) => fixtureRows<GraphQLRow>(name);
  return {
    window: { startIso: "2026-11-20T11:59:30.000Z", endIso: "2026-11-20T12:05:30.000Z" },
    workers: rows("workers-invocations").map(toWorkerGroup),
    workersByMinute: rows("workers-by-minute").map(toWorkerGroup),
    workersWindow: rows("workers-window").map(toWorkerGroup),
    durableObjects: rows("durable-objects").map(toDurableObjectGroup),
    d1: rows("d1").map(toD1Group),
    zone: rows("zone-requests").map(toZoneGroup),
    zoneLatency: toZoneLatency(rows("zone-latency")[0]!),
    unavailable: {},
  };
}

const scenarioRun = (saturation: string[] = []) => runTrafficFrom(scenarioSummary({ saturation }), scenarioSeconds());
const kinds = (r: Reconciliation) => r.findings.map((f) => [f.kind, f.minute?.slice(11, 16) ?? null]);
const about = (r: Reconciliation, kind: FindingKind) => r.findings.filter((f) => f.kind === kind).map((f) => f.message);

describe("runTrafficFrom", () => {
  it("re-buckets the run's seconds since t0 on Cloudflare's wall-clock minutes", () => {
    const run = scenarioRun();
    expect([run.t0Ms, run.endMs]).toEqual([Date.parse(SCENARIO.t0), Date.parse(SCENARIO.end)]);
    expect(run.durationMs).toEqual({ p50: 18, p95: 95, p99: 140 });
    const r = reconcile(
      run,
      { ...scenarioAnalytics(), zone: null, workers: [], workersByMinute: [], workersWindow: [], zoneLatency: null },
      { nowMs: AFTER_RUN, marginS: 60 },
    );
    // t0 is 12:00:30: its first 30 seconds fall in 12:00, the last 30 in 12:04.
    expect(r.minutes.map((m) => [m.minute.slice(11, 16), m.sent])).toEqual([
      ["12:00", 300],
      ["12:01", 600],
      ["12:02", 600],
      ["12:03", 600],
      ["12:04", 300],
    ]);
    expect(r.minutes[2]!.sentByClass).toEqual({ "2xx": 540, "4xx": 60 });
    expect(r.edgeSource).toBe("none");
  });
});

describe("reconcile: the edge saw fewer requests in one minute and a 429 burst", () => {
  const r = reconcile(scenarioRun(), scenarioAnalytics(), { nowMs: AFTER_RUN, marginS: 60, entryScript: "authrim" });

  it("compares each minute of the run with the zone's edge counts and the entry Worker's invocations", () => {
    expect(r.edgeSource).toBe("zone");
    expect(r.minutes.map((m) => [m.minute.slice(11, 16), m.inRun, m.sent, m.edge, m.worker, m.delta])).toEqual([
      ["11:59", false, 0, 4, 4, 4], // margin: other traffic, shown, not compared
      ["12:00", true, 300, 300, 300, 0],
      ["12:01", true, 600, 600, 600, 0],
      ["12:02", true, 600, 600, 540, 0], // the edge saw them all; the Worker ran for 540
      ["12:03", true, 600, 582, 582, -18], // 18 never reached Cloudflare
      ["12:04", true, 300, 300, 300, 0],
    ]);
    expect(r.totals).toEqual({ sent: 2400, edge: 2382, worker: 2322 });
    expect(r.minutes[5]!.workerWallP99Ms).toBe(31);
  });

  it("flags each gap once, with its reason, and nothing in the clean minutes", () => {
    expect(kinds(r)).toEqual([
      ["edge_429", "12:02"],
      ["fewer_at_edge", "12:03"],
      ["worker_errors", "12:04"],
      ["latency", null],
      ["latency", null],
      ["outside_run", null],
    ]);
    expect(about(r, "edge_429")).toEqual([
      "60 × 429 in 12:02 were answered before the Worker ran (540 invocations for 600 requests): a Cloudflare rate-limiting rule or WAF throttled the run",
    ]);
    expect(about(r, "fewer_at_edge")).toEqual([
      "the edge saw 3.0% fewer requests than the run sent in 12:03 (582 of 600): 18 of them never got a response on the client (connection errors or timeouts): lost before Cloudflare",
    ]);
    expect(about(r, "worker_errors")[0]).toMatch(/^Worker authrim reported 2 errors in 12:04 \(exceededResources\)/);
    expect(about(r, "outside_run")[0]).toMatch(/^4 requests in the margin minutes/);
  });

  it("compares latency per group: client p99 with the Worker's wall-time p99, client p95 with the edge TTFB p95", () => {
    expect(about(r, "latency")).toEqual([
      "client p99 140ms ≫ Worker authrim wall-time p99 25.0ms: the time goes outside the Worker — network, TLS and connection setup, or queueing in the generator",
      "client p95 95.0ms ≫ edge TTFB p95 31.0ms: the time goes between the generator and Cloudflare's edge (network, or generator queueing)",
    ]);
    // p50: 18 ms vs 6 ms is within the 20 ms floor, so it is not flagged.
    expect(r.latency.workers.map((w) => [w.script, w.wallP99Ms])).toEqual([
      ["authrim", 25],
      ["authrim-sessions", 4],
    ]);
  });

  it("names a saturated generator as the likely cause of the client-side time", () => {
    const saturated = reconcile(scenarioRun(["12 iterations dropped"]), scenarioAnalytics(), { nowMs: AFTER_RUN, marginS: 60, entryScript: "authrim" });
    expect(about(saturated, "latency")[0]).toMatch(/the run's summary says the generator was saturated \(12 iterations dropped\)$/);
  });

  it("renders per-minute rows, per-group quantiles (never merged) and the findings", () => {
    const text = renderReconciliation(r);
    expect(text).toContain("compared with the zone's edge requests");
    expect(text).toMatch(/12:03 +600 +582 +-18 \(-3\.0%\) +582\/0\/0\/0\/18 +582\/0\/0\/0 +582 +0 +25\.0ms/);
    expect(text).toMatch(/11:59 \(margin\) +0 +4 +- /);
    expect(text).toMatch(/Worker authrim wall time +6\.00ms +n\/a +25\.0ms/);
    expect(text).toMatch(/Worker authrim-sessions wall time +800µs +n\/a +4\.00ms/);
    expect(text).toMatch(/edge TTFB \(zone\) +9\.00ms +31\.0ms +48\.0ms/);
    expect(text).toContain("authrim-sessions  5e5510b5a0c84e2f9d0e3c1b2a4f6789");
    expect(text).toContain("Edge data centers: LHR 1434, IAD 952");
    expect(text).toContain("  - 60 × 429 in 12:02 were answered before the Worker ran");
  });
});

describe("reconcile without a zone: the entry Worker's invocations are the edge figure", () => {
  it("a minute short at the Worker: dropped before it, with the client's 4xx as the evidence", () => {
    const r = reconcile(scenarioRun(), { ...scenarioAnalytics(), zone: null, zoneLatency: null }, { nowMs: AFTER_RUN, marginS: 60, entryScript: "authrim" });
    expect(r.edgeSource).toBe("worker");
    expect(about(r, "fewer_at_edge")).toEqual([
      "the entry Worker saw 10.0% fewer requests than the run sent in 12:02 (540 of 600): dropped before the Worker — the client got 60 4xx/5xx in that minute (WAF, rate limiting or Cloudflare errors answered them)",
      "the entry Worker saw 3.0% fewer requests than the run sent in 12:03 (582 of 600): 18 of them never got a response on the client (connection errors or timeouts): lost before Cloudflare",
    ]);
    expect(about(r, "edge_429")).toEqual([]);
  });
});

/** A run at t0 = 12:01:00 and a zone, minute by minute: `{ "12:01": {"2xx": 600} }`. */
function small(
  sent: Record<string, Record<string, number>>,
  zone: Record<string, Array<[status: number, count: number, sampleInterval?: number]>>,
  workers: Record<string, number> = {},
) {
  const t0Ms = Date.parse("2026-11-20T12:01:00Z");
  const at = (hm: string) => Date.parse(`2026-11-20T${hm}:00Z`);
  const run: RunTraffic = {
    runId: "r",
    target: "https://t.example",
    t0Ms,
    endMs: t0Ms + Object.keys(sent).length * 60_000,
    seconds: Object.entries(sent).flatMap(([hm, byClass]) =>
      Object.entries(byClass).map(([statusClass, requests]) => ({ t: (at(hm) - t0Ms) / 1000, statusClass, requests })),
    ),
    durationMs: null,
    ttfbMs: null,
    saturation: [],
  };
  const zoneGroups: ZoneGroup[] = Object.entries(zone).flatMap(([hm, groups]) =>
    groups.map(([status, count, sampleInterval]) => ({ minute: `2026-11-20T${hm}:00Z`, status, colo: "AMS", count, sampleInterval: sampleInterval ?? 1 })),
  );
  const workerGroups = Object.entries(workers).map(([hm, requests]) =>
    toWorkerGroup({
      dimensions: { datetimeMinute: `2026-11-20T${hm}:00Z`, scriptName: "api", status: "success" },
      sum: { requests, errors: 0, subrequests: 0 },
    }),
  );
  const cf: CloudflareAnalytics = {
    window: { startIso: "", endIso: "" },
    workers: workerGroups,
    workersByMinute: [],
    workersWindow: [],
    durableObjects: [],
    d1: [],
    zone: zoneGroups,
    zoneLatency: null,
    unavailable: {},
  };
  return { run, cf };
}

describe("reconcile: what is not a loss", () => {
  it.each([
    // [what, sent per minute, zone per minute, expected finding kinds]
    [
      "a shift across a minute boundary (−20 then +20) is clock skew, not a loss",
      { "12:01": { "2xx": 600 }, "12:02": { "2xx": 600 } },
      { "12:01": [[200, 580]], "12:02": [[200, 620]] },
      [["boundary_shift", "12:01"]],
    ],
    ["a gap within 1 % is counting noise", { "12:01": { "2xx": 600 } }, { "12:01": [[200, 595]] }, []],
    [
      "a 1-in-10 sampled estimate 5 % off is within its √(n·k) error; the sampling is said",
      { "12:01": { "2xx": 600 } },
      { "12:01": [[200, 570, 10]] },
      [["sampled", null]],
    ],
    ["more at the edge than sent is other traffic", { "12:01": { "2xx": 600 } }, { "12:01": [[200, 700]] }, [["more_at_edge", "12:01"]]],
    [
      "the client's 5xx that the edge never logged is a status-mix finding",
      { "12:01": { "2xx": 590, "5xx": 10 } },
      { "12:01": [[200, 600]] },
      [["status_mix", "12:01"]],
    ],
  ] as const)("%s", (_what, sent, zone, expected) => {
    const { run, cf } = small(sent, zone as never);
    expect(kinds(reconcile(run, cf, { nowMs: AFTER_RUN, marginS: 60 }))).toEqual(expected);
  });

  it("429s the Worker ran for come from the Worker itself", () => {
    const { run, cf } = small(
      { "12:01": { "2xx": 540, "4xx": 60 } },
      {
        "12:01": [
          [200, 540],
          [429, 60],
        ],
      },
      { "12:01": 600 },
    );
    expect(about(reconcile(run, cf, { nowMs: AFTER_RUN, marginS: 60, entryScript: "api" }), "edge_429")).toEqual([
      "60 × 429 in 12:01 came from the Worker itself (it ran for every request): application-level rate limiting",
    ]);
  });

  it("requests answered before the Worker without 429s: cache, WAF or another route", () => {
    const { run, cf } = small({ "12:01": { "2xx": 600 } }, { "12:01": [[200, 600]] }, { "12:01": 450 });
    expect(about(reconcile(run, cf, { nowMs: AFTER_RUN, marginS: 60, entryScript: "api" }), "before_worker")).toEqual([
      "the edge answered 600 requests in 12:01 but the entry Worker ran 450 times: 150 were answered before the Worker (cache, WAF, rate limiting, or a route without the Worker)",
    ]);
  });

  it("a run that just ended: says Cloudflare's analytics may still be incomplete", () => {
    const { run, cf } = small({ "12:01": { "2xx": 600 } }, { "12:01": [[200, 600]] });
    expect(about(reconcile(run, cf, { nowMs: run.endMs + 90_000, marginS: 60 }), "analytics_lag")).toEqual([
      "the run ended 90 s ago: Cloudflare's analytics arrive a few minutes late, so the last minutes may be incomplete — run this again later",
    ]);
  });
});

describe("the report's Cloudflare section", () => {
  it("shows each minute's sent and edge counts, the latency sources and every finding", () => {
    const r = reconcile(scenarioRun(), scenarioAnalytics(), { nowMs: AFTER_RUN, marginS: 60, entryScript: "authrim" });
    const md = toMarkdown(cloudflareBlocks(r));
    expect(md).toMatch(/^## Cloudflare's view/m);
    for (const m of r.minutes.filter((x) => x.inRun)) expect(md).toContain(`| ${m.minute.slice(11, 16)} | ${m.sent} | ${m.edge ?? "-"} |`);
    expect(md).toContain(`| run total | ${r.totals.sent} |`);
    expect(r.findings.length).toBeGreaterThan(0);
    for (const f of r.findings) expect(md).toContain(f.message.slice(0, 30));
    expect(md).toContain("| client `http_req_duration` |");
  });
});
