import { describe, expect, it } from "vitest";
import { MetricStats } from "./stats.ts";
import { saturation } from "./summary.ts";
import { formatMs, statusSection } from "./summary-text.ts";

describe("statusSection", () => {
  it("lists every status most first with its share, marking errors, and names the steps the errors came from", () => {
    const lines = statusSection(
      { 200: 940, 404: 40, timeout: 15, 500: 5 },
      { read: { statuses: { 200: 700, 404: 40, timeout: 5 } }, write: { statuses: { 200: 240, timeout: 10, 500: 5 } } },
    );
    expect(lines.join("\n")).toBe([
      "  STATUS CODES",
      "  status     count   share",
      "  200          940  94.00%",
      "  404 ✗         40   4.00%",
      "  timeout ✗     15   1.50%",
      "  500 ✗          5   0.50%",
      "",
      "  ERRORS BY STEP (most frequent first)",
      "  step    status  count",
      "  read       404     40",
      "  write  timeout     10",
      "  read   timeout      5",
      "  write      500      5",
      "",
    ].join("\n"));
  });

  it("sums the rarest statuses into one row, shows the five most frequent errors, and leaves a run of one step's errors to the status table", () => {
    const statuses = Object.fromEntries([200, 201, 204, 301, 400, 401, 403, 404, 409, 500].map((s, i) => [String(s), 100 - i]));
    const text = statusSection(statuses, { only: { statuses } }).join("\n");
    expect(text).toMatch(/^ {2}2 others +183 +19\.16%$/m);
    expect(text).not.toContain("ERRORS BY STEP");
    const steps = Object.fromEntries(["a", "b", "c", "d", "e", "f"].map((s, i) => [s, { statuses: { 500: 10 + i } }]));
    expect(statusSection({ 500: 75 }, steps).join("\n")).toMatch(/ERRORS BY STEP \(the 5 most frequent of 6\)\n.*\n {2}f +500 +15\n/);
  });

  it("prints nothing for a run that sent nothing", () => {
    expect(statusSection({}, {})).toEqual([]);
  });
});

describe("saturation reasons", () => {
  it("give latencies to the clock's step, not to the µs of a histogram bucket", () => {
    const s = new MetricStats();
    for (let i = 0; i < 100; i++) s.trends.lag.record(3_219_456);
    const [reason] = saturation(s, 1).reasons;
    expect(reason).toMatch(/^schedule lag p95 3\.2\ds \(slot wait p95 0ms\)/);
    expect(formatMs(13.024, 1)).toBe("13ms");
  });
});
