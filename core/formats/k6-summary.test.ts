import { describe, expect, it } from "vitest";
import handleSummary from "../../test/fixtures/k6/handle-summary.json" with { type: "json" };
import k6Cloud from "../../test/fixtures/k6/k6-cloud.json" with { type: "json" };
import machineReadable from "../../test/fixtures/k6/machine-readable.json" with { type: "json" };
import malformed from "../../test/fixtures/k6/malformed.json" with { type: "json" };
import summaryExport from "../../test/fixtures/k6/summary-export.json" with { type: "json" };
import { detectK6Format, parseK6Summary, storableK6Summary } from "./k6-summary.ts";

/** Fixtures written by k6 v1.8.1 running k6-scripts/http.js at 20/s for 2 s, and a k6 Cloud export. */
const FIXTURES: Record<string, unknown> = {
  "summary-export": summaryExport,
  "handle-summary": handleSummary,
  "machine-readable": machineReadable,
  "k6-cloud": k6Cloud,
  malformed,
};
/** A fresh copy, so no test sees another's changes. */
const fixture = (name: string) => structuredClone(FIXTURES[name]) as Record<string, any>;

describe("parseK6Summary", () => {
  // [format, what the fixture is, requests k6 counted]
  it.each([
    ["summary-export", "k6 run --summary-export", 41],
    ["handle-summary", "handleSummary's data as k6-scripts write it", 41],
    ["machine-readable", "--new-machine-readable-summary (no p(99): it ignores summaryTrendStats)", 40],
    ["k6-cloud", "a k6 Cloud test run with its aggregate queries", 41],
  ] as const)("reads %s (%s)", (format, _what, requests) => {
    const doc = fixture(format);
    expect(detectK6Format(doc)).toBe(format);
    const parsed = parseK6Summary(doc);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    expect(parsed.format).toBe(format);
    const f = parsed.figures;
    expect(f.requests).toBe(requests);
    expect(f.ratePerS).toBeGreaterThan(19);
    expect(f.ratePerS).toBeLessThan(21);
    expect(f.errorRate).toBe(0);
    expect(f.latency.p50).toBeGreaterThan(5);
    expect(f.latency.p95).toBeGreaterThanOrEqual(f.latency.p50!);
    expect(f.latency.max).toBeGreaterThanOrEqual(f.latency.p95!);
    expect(f.latency.p99 === null).toBe(format === "machine-readable");
    expect(f.steps.default?.latency.p50).toBe(f.latency.p50);
  });

  it("reads the same figures from --summary-export and handleSummary's data of one run", () => {
    const a = parseK6Summary(fixture("summary-export"));
    const b = parseK6Summary(fixture("handle-summary"));
    if (!a.ok || !b.ok) throw new Error("fixtures must parse");
    expect({ ...a.figures, durationS: null }).toEqual({ ...b.figures, durationS: null });
    expect(b.figures.durationS).toBeCloseTo(2.01, 2);
  });

  it("compares the load's own requests, leaving out setup()'s seed download, when the script tags its scenario", () => {
    const trend = (med: number) => ({ type: "trend", values: { med, "p(90)": med, "p(95)": med, "p(99)": med, max: med } });
    const doc = {
      metrics: {
        http_reqs: { type: "counter", values: { count: 101, rate: 20.2 } },
        "http_reqs{scenario:introspect}": { type: "counter", values: { count: 100, rate: 20 } },
        http_req_duration: trend(900),
        "http_req_duration{scenario:introspect}": trend(6),
        "http_req_duration{step:seed}": trend(900),
      },
    };
    const parsed = parseK6Summary(doc);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    expect(parsed.figures).toMatchObject({ requests: 100, ratePerS: 20, latency: { p50: 6, max: 6 } });
    expect(parsed.figures.steps).toEqual({});
  });

  it("reads cloud durations marked in seconds as seconds", () => {
    const parsed = parseK6Summary(fixture("k6-cloud"));
    expect(parsed.ok && parsed.figures.latency.p95).toBeCloseTo(12.1, 9);
  });

  // [what is wrong, document, the fields the problems name]
  it.each([
    ["a string count and no p(95) (the malformed fixture)", fixture("malformed"), ["metrics.http_reqs.count", "metrics.http_req_duration.p(95)"]],
    ["no http_req_duration at all", { metrics: { http_reqs: { count: 3, rate: 1 } } }, ["metrics.http_req_duration"]],
    [
      "a handleSummary metric without values",
      { metrics: { http_reqs: { type: "counter", values: { count: 1 } }, http_req_duration: { type: "trend" } } },
      ["metrics.http_req_duration.values"],
    ],
    [
      "a machine-readable entry without a name",
      { version: "1.0.0", results: { metrics: [{ type: "trend" }] } },
      ["results.metrics[0]", "results.metrics[name=http_reqs]"],
    ],
    [
      "a cloud export without the request count",
      {
        test_run: { id: 1 },
        aggregates: [{ metric: "http_req_duration", query: "histogram_quantile(0.50)", response: { data: { result: [{ values: [[1, 5]] }] } } }],
      },
      ["aggregates"],
    ],
    [
      "a cloud aggregate without a value",
      { test_run: { id: 1 }, aggregates: [{ metric: "http_reqs", query: "increase", response: { status: "error" } }] },
      ["aggregates[0].response"],
    ],
    ["JSON of another kind", { hello: "world" }, ["(body)"]],
    ["an edgeload run summary", { metrics: {}, edgeload: { runId: "r-1" } }, ["edgeload"]],
  ])("refuses %s, naming the fields", (_what, doc, fields) => {
    const parsed = parseK6Summary(doc);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems.map((p) => p.field)).toEqual(expect.arrayContaining(fields));
    expect(parsed.problems.every((p) => p.detail.length > 8)).toBe(true);
  });
});

describe("storableK6Summary", () => {
  it("drops setup()'s data (a seed set: credentials) and the script's source", () => {
    const stored = storableK6Summary({ ...fixture("machine-readable"), setup_data: ["eyJ.token.x"] });
    expect(stored).not.toHaveProperty("setup_data");
    expect(stored.config).not.toHaveProperty("script");
    expect(stored.config).toHaveProperty("duration");
    expect(parseK6Summary(stored).ok).toBe(true);
  });
});
