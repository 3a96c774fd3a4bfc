import { describe, expect, it } from "vitest";
import { isExpectedStatus, recordTrail, type RequestTrail } from "./request-trail.ts";
import { MetricStats } from "./metric-stats.ts";

const trail = (overrides: Partial<RequestTrail> = {}): RequestTrail => ({
  queuedMs: 1000,
  sendMs: 1002,
  ttfbMs: 8,
  endMs: 1012,
  intendedMs: 1000,
  clientDelayMs: 1,
  status: 200,
  statusText: "OK",
  bytes: 512,
  error: null,
  errorMessage: "",
  ...overrides,
});

describe("isExpectedStatus", () => {
  it.each([
    // [status, the step's expected statuses, success?]
    [200, null, true], // no expectation: 2xx and 3xx succeed
    [302, null, true],
    [404, null, false],
    [404, new Set([404]), true], // a step may expect a 404 (a deleted record, say)
    [200, new Set([201]), false], // and then a 200 is a failure
  ])("status %i, expecting %j → %s", (status, expected, ok) => {
    expect(isExpectedStatus(status, expected)).toBe(ok);
  });
});

describe("recordTrail", () => {
  it("records a response: duration from the send, lag and corrected latency from the intended time", () => {
    const stats = new MetricStats();
    recordTrail(stats, trail(), null);
    expect(stats.counters).toMatchObject({ completed: 1, failed: 0, bytesReceived: 512 });
    expect(stats.trends.duration.max).toBe(10_000); // 1002 → 1012 ms, in µs
    expect(stats.trends.ttfb.max).toBe(8_000);
    expect(stats.trends.lag.max).toBe(2_000);
    expect(stats.trends.corrected.max).toBe(12_000);
    expect(stats.trends.slotWait.max).toBe(2_000);
    expect(stats.statuses).toEqual({ 200: 1 });
    expect(stats.errors).toEqual({});
  });

  it("leaves lag and corrected latency out in the closed model (no intended time)", () => {
    const stats = new MetricStats();
    recordTrail(stats, trail({ intendedMs: null }), null);
    expect([stats.trends.lag.count, stats.trends.corrected.count, stats.trends.duration.count]).toEqual([0, 0, 1]);
  });

  it.each([
    // [the trail, counters that move, the error sample]
    [{ status: 503, statusText: "Service Unavailable" }, { failed: 1, status5xx: 1 }, "HTTP 503 Service Unavailable"],
    [{ status: 404, statusText: "" }, { failed: 1, status4xx: 1 }, "HTTP 404"],
    [{ status: 0, error: "timeout" as const, errorMessage: "timeout after 10000 ms" }, { failed: 1, timeouts: 1 }, "timeout after 10000 ms"],
    [{ status: 0, error: "connection" as const, errorMessage: "connection error: refused" }, { failed: 1, connectionErrors: 1 }, "connection error: refused"],
  ])("records a failure %j as %j with its sample", (overrides, counters, sample) => {
    const stats = new MetricStats();
    recordTrail(stats, trail(overrides), null);
    expect(stats.counters).toMatchObject({ completed: 1, ...counters });
    expect(stats.errors).toEqual({ [sample]: 1 });
    // A request that got no response has no duration here; a 4xx/5xx response has one.
    expect(stats.trends.duration.count).toBe("error" in overrides ? 0 : 1);
  });
});
