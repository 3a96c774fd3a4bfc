import { describe, expect, it } from "vitest";
import { parseMetricKey } from "./metric-key.ts";
import { CustomMetrics } from "./metric-stats.ts";
import type { RequestTrail } from "./request-trail.ts";
import { matchesFilter, recordRequestSubMetrics, recordSubSample, subMetricFilters } from "./sub-metrics.ts";
import { MAX_SUB_METRICS, parseThresholds } from "./thresholds.ts";

describe("parseMetricKey (k6's ParseMetricName and AddSubmetric rules)", () => {
  it.each([
    // [key, metric, tags as k6 records them]
    ["http_req_duration", "http_req_duration", []],
    ["http_req_duration{name:home}", "http_req_duration", [["name", "home"]]],
    // spaces around keys and values go, as k6 trims them
    [
      "http_req_duration{ name : home , method:GET }",
      "http_req_duration",
      [
        ["name", "home"],
        ["method", "GET"],
      ],
    ],
    // quotes around a key or value go too
    [`http_req_duration{"name":'home'}`, "http_req_duration", [["name", "home"]]],
    // the value is everything after the first colon: k6's group paths start with "::"
    ["http_req_duration{group:::login::step}", "http_req_duration", [["group", "::login::step"]]],
    // a URL as a value keeps its own colons
    ["http_reqs{url:http://127.0.0.1:80/a}", "http_reqs", [["url", "http://127.0.0.1:80/a"]]],
    ["checks{myTag:x}", "checks", [["myTag", "x"]]],
  ])("%s", (key, metric, tags) => {
    expect(parseMetricKey(key)).toEqual({ ok: true, value: { metric, tags } });
  });

  it.each([
    // [key, why k6 refuses it]
    ["http_req_duration{}", "malformed"],
    ["http_req_duration{name}", "malformed"],
    ["http_req_duration{name:}", "malformed"],
    ["http_req_duration{name:a", "unmatched"],
    ["http_req_durationname:a}", "unmatched"],
    ["http_req_duration{name:a}b", "does not end"],
    ["1metric{name:a}", "not a metric name"],
  ])("refuses %s", (key, why) => {
    const parsed = parseMetricKey(key);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain(why);
  });
});

describe("thresholds with k6 tag filters", () => {
  const custom = { myTrend: "trend", myCounter: "counter", ratio: "rate" } as const;

  it.each([
    // [key, the sub-metric it records (null: read off the run's cells)]
    ["http_req_duration{step:login}", null],
    ["http_req_duration{region:weur,scenario:a}", null],
    ["http_req_duration{name:home}", "http_req_duration{name:home}"],
    // step and region stay cells' filters; the rest is the sub-metric
    ["http_req_duration{step:login,name:home}", "http_req_duration{name:home}"],
    ["http_req_duration{staticAsset:yes}", "http_req_duration{staticAsset:yes}"],
    ["http_req_failed{group:::login}", "http_req_failed{group:::login}"],
    ["checks{myTag:x}", "checks{myTag:x}"],
    // a custom metric's type tag is the series scenarios record per token type
    ["myCounter{type:a}", null],
    ["myTrend{staticAsset:yes}", "myTrend{staticAsset:yes}"],
    // on a built-in metric, type is a tag like any other
    ["http_req_duration{type:a}", "http_req_duration{type:a}"],
  ])("%s", (key, subMetric) => {
    // An expression each metric's kind takes.
    const expression = /^(http_req_duration|myTrend)/.test(key) ? "p(95)<1" : /^(http_req_failed|checks)/.test(key) ? "rate<1" : "count>=0";
    const parsed = parseThresholds({ [key]: [expression] }, custom);
    expect(parsed.ok, JSON.stringify(parsed)).toBe(true);
    if (parsed.ok) expect(parsed.value[0]!.subMetric).toBe(subMetric);
  });

  it(`refuses more than ${MAX_SUB_METRICS} sub-metrics, naming the limit`, () => {
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`http_req_duration{name:n${i}}`, ["p(95)<1"]]));
    expect(parseThresholds(keys(MAX_SUB_METRICS)).ok).toBe(true);
    const over = parseThresholds(keys(MAX_SUB_METRICS + 1));
    expect(over.ok).toBe(false);
    if (!over.ok) expect(over.errors.join("\n")).toContain(`${MAX_SUB_METRICS + 1} tag-filtered sub-metrics`);
  });

  it("names the threshold a malformed filter is on", () => {
    const parsed = parseThresholds({ "http_req_duration{name}": ["p(95)<1"] });
    expect(parsed).toMatchObject({ ok: false, errors: [expect.stringContaining("thresholds.http_req_duration{name}:")] });
  });
});

describe("recording sub-metrics", () => {
  const filtersOf = (keys: Record<string, string>) => {
    const parsed = parseThresholds(Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, [v]])), { myTrend: "trend", myCounter: "counter" });
    if (!parsed.ok) throw new Error(parsed.errors.join("; "));
    return subMetricFilters(parsed.value);
  };

  it.each([
    // [filter, sample tags, matches]
    ["http_reqs{name:home}", { name: "home", method: "GET" }, true],
    ["http_reqs{name:home}", { name: "other" }, false],
    // every pair must be there
    ["http_reqs{name:home,method:POST}", { name: "home", method: "GET" }, false],
    ["http_reqs{name:home,method:GET}", { method: "GET", name: "home" }, true],
    ["http_reqs{group:::a}", { group: "::a::b" }, false],
    ["http_reqs{missing:x}", {}, false],
  ])("%s on %j: %s", (key, tags, matches) => {
    expect(matchesFilter(filtersOf({ [key]: "count>0" })[0]!, tags)).toBe(matches);
  });

  it("keeps one series per filter a threshold names, not per tag value seen", () => {
    const filters = filtersOf({ "myCounter{staticAsset:yes}": "count>0", "myTrend{staticAsset:yes}": "p(95)<1", "checks{myTag:x}": "rate>0" });
    const custom = new CustomMetrics();
    for (let i = 0; i < 50; i++) {
      recordSubSample(() => custom, filters, "myCounter", { staticAsset: i % 2 ? "yes" : "no", url: `/u${i}` }, 2);
      recordSubSample(() => custom, filters, "myTrend", { staticAsset: "yes" }, 1.5);
      recordSubSample(() => custom, filters, "checks", { myTag: "x" }, i < 10);
    }
    expect(Object.fromEntries(custom.counters)).toEqual({ "myCounter{staticAsset:yes}": 50 });
    expect(custom.trends.get("myTrend{staticAsset:yes}")!.count).toBe(50);
    expect(custom.rates.get("checks{myTag:x}")).toEqual([10, 50]);
    expect(custom.trends.size + custom.rates.size + custom.counters.size).toBe(3);
  });

  it("records a request as its parents record it: counted, failed by its status, timed unless it errored", () => {
    const filters = filtersOf({
      "http_reqs{status:503}": "count>0",
      "http_req_failed{name:home}": "rate<1",
      "http_req_duration{name:home}": "p(95)<1",
      "http_req_duration{expected_response:true}": "p(95)<1",
    });
    const custom = new CustomMetrics();
    const trail = (status: number, error: RequestTrail["error"] = null): RequestTrail => ({
      queuedMs: 0,
      sendMs: 10,
      ttfbMs: 3,
      endMs: 15,
      intendedMs: null,
      clientDelayMs: 0,
      status,
      statusText: "",
      bytes: 0,
      error,
      errorMessage: "",
    });
    recordRequestSubMetrics(() => custom, filters, { name: "home" }, trail(200), false);
    recordRequestSubMetrics(() => custom, filters, { name: "home" }, trail(503), true);
    recordRequestSubMetrics(() => custom, filters, { name: "home" }, trail(0, "timeout"), true);
    expect(custom.counters.get("http_reqs{status:503}")).toBe(1);
    expect(custom.rates.get("http_req_failed{name:home}")).toEqual([2, 3]);
    // the timeout has no duration, as for http_req_duration itself
    expect(custom.trends.get("http_req_duration{name:home}")!.count).toBe(2);
    expect(custom.trends.get("http_req_duration{name:home}")!.max).toBe(5000);
    expect(custom.trends.get("http_req_duration{expected_response:true}")!.count).toBe(1);
  });
});
