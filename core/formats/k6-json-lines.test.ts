import { describe, expect, it } from "vitest";
import { k6JsonLines } from "./k6-json-lines.ts";

const T0 = Date.parse("2026-11-25T03:00:00.000Z");
const rows = [
  {
    t: 1,
    region: "wnam",
    step: 0,
    requests: 40,
    iterations: 40,
    failed: 2,
    dropped: 0,
    error_rate: 0.05,
    min: 1,
    mean: 2.5,
    p50: 2,
    p90: 4,
    p95: 5,
    p99: 9,
    max: 12,
  },
  {
    t: 0,
    region: "wnam",
    step: 0,
    requests: 10,
    iterations: 10,
    failed: 0,
    dropped: 3,
    error_rate: 0,
    min: 1,
    mean: 2,
    p50: 2,
    p90: 3,
    p95: 3,
    p99: 3,
    max: 3,
  },
  {
    t: 0,
    region: "weur",
    step: 0,
    requests: 0,
    iterations: 0,
    failed: 0,
    dropped: 1,
    error_rate: null,
    min: null,
    mean: null,
    p50: null,
    p90: null,
    p95: null,
    p99: null,
    max: null,
  },
];

describe("k6JsonLines", () => {
  const lines = k6JsonLines(rows, "r-abc123-0000abcd", T0)
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; metric: string; data: Record<string, unknown> });

  it("declares each metric once, before its first Point, with k6's types", () => {
    const metrics = lines.filter((l) => l.type === "Metric");
    expect(metrics.map((m) => [m.metric, m.data.type])).toEqual([
      // In order of first appearance: second 0's weur row (regions sort) has only drops.
      ["dropped_iterations", "counter"],
      ["http_reqs", "counter"],
      ["iterations", "counter"],
      ["http_req_failed", "rate"],
      ["http_req_duration", "trend"],
    ]);
    for (const m of metrics) expect(lines.findIndex((l) => l.metric === m.metric)).toBe(lines.indexOf(m));
  });

  it("gives one Point per second and group, in time order; counters sum to the totals", () => {
    const points = lines.filter((l) => l.type === "Point");
    const sum = (metric: string) => points.filter((p) => p.metric === metric).reduce((s, p) => s + (p.data.value as number), 0);
    expect(sum("http_reqs")).toBe(50);
    expect(sum("dropped_iterations")).toBe(4);
    expect(points[0]!.data.time).toBe("2026-11-25T03:00:00.000Z");
    expect(points.at(-1)!.data.time).toBe("2026-11-25T03:00:01.000Z");
    const p95 = points.find(
      (p) => p.metric === "http_req_duration" && (p.data.tags as Record<string, string>).aggregate === "p95" && p.data.time === "2026-11-25T03:00:01.000Z",
    );
    expect(p95?.data).toEqual({
      time: "2026-11-25T03:00:01.000Z",
      value: 5,
      tags: { run_id: "r-abc123-0000abcd", region: "wnam", step: "0", aggregate: "p95" },
    });
    // A second without requests has no latency or failure Points.
    expect(points.filter((p) => (p.data.tags as Record<string, string>).region === "weur").map((p) => p.metric)).toEqual(["dropped_iterations"]);
  });
});
