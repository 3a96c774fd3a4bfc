import { describe, expect, it } from "vitest";
import { MetricStats } from "../metrics/metric-stats.ts";
import { saturation } from "./saturation.ts";
import { statusSection } from "./summary-text.ts";
import { formatMs } from "../metrics/clock-resolution.ts";

describe("statusSection", () => {
  it("lists every status most first with its share, marking errors, and names the steps the errors came from", () => {
    const lines = statusSection(
      { 200: 940, 404: 40, timeout: 15, 500: 5 },
      { read: { statuses: { 200: 700, 404: 40, timeout: 5 } }, write: { statuses: { 200: 240, timeout: 10, 500: 5 } } },
    );
    expect(lines.join("\n")).toBe(
      [
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
      ].join("\n"),
    );
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
    expect(reason).toMatch(/^schedule lag p95 3\.2\ds with slots free \(slot wait p95 0ms\)/);
    expect(formatMs(13.024, 1)).toBe("13ms");
  });
});

describe("saturation names its cause", () => {
  /** 100 requests of `durationMs` each, sent `lagMs` late after `slotWaitMs` for a slot, timed `delayMs` late. */
  const run = (o: { durationMs: number; lagMs: number; slotWaitMs: number; delayMs: number; dropped?: number }) => {
    const s = new MetricStats();
    for (let i = 0; i < 100; i++) {
      s.trends.duration.record(o.durationMs * 1000);
      s.trends.lag.record(o.lagMs * 1000);
      s.trends.slotWait.record(o.slotWaitMs * 1000);
      s.trends.clientDelay.record(o.delayMs * 1000);
    }
    s.counters.dropped = o.dropped ?? 0;
    return saturation(s, 1);
  };
  it.each([
    // [what happened, causes, advice it gives, why]
    [
      { durationMs: 900, lagMs: 400, slotWaitMs: 390, delayMs: 1 },
      ["target"],
      /held the slots — the target slowed/,
      "a slow target held every connection slot: requests queued for one",
    ],
    [
      { durationMs: 900, lagMs: 1, slotWaitMs: 0, delayMs: 1, dropped: 12 },
      ["target"],
      /the target's latency, not edgeload's CPU/,
      "slow responses filled the in-flight cap",
    ],
    [
      { durationMs: 20, lagMs: 40, slotWaitMs: 1, delayMs: 2 },
      ["generator"],
      /timers fired late — edgeload was short of CPU/,
      "late with slots free: the generator's timers",
    ],
    [
      { durationMs: 20, lagMs: 1, slotWaitMs: 0, delayMs: 30 },
      ["generator"],
      /the generator's event loop held responses/,
      "responses waited for the generator's loop",
    ],
    [{ durationMs: 20, lagMs: 1, slotWaitMs: 0, delayMs: 1 }, [], /^$/, "nothing held the load back"],
  ] as const)("%j → %j", (o, causes, advice, _why) => {
    const sat = run(o);
    expect(sat.causes).toEqual(causes);
    expect(sat.reasons.join("\n")).toMatch(advice);
  });
});
