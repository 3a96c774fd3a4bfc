import { describe, expect, it } from "vitest";
import { COUNTERS, MetricStats, type MetricStatsWire } from "./metric-stats.ts";

describe("MetricStats wire counters", () => {
  it("decodes a wire array stored before `unstarted` was added: every older counter in place, `unstarted` 0", () => {
    // The 14 counters a window carried before `unstarted` (appended last, so nothing moved).
    const old: MetricStatsWire = { c: [10, 9, 1, 5, 0, 0, 0, 1, 9, 0, 0, 900, 3, 9], s: { 200: 8 }, h: {} as MetricStatsWire["h"] };
    const stats = MetricStats.fromWire(old);
    expect(stats.counters).toMatchObject({ sent: 10, dropped: 5, interrupted: 3, iterations: 9, unstarted: 0 });
    expect(COUNTERS.indexOf("unstarted")).toBe(old.c.length);
  });

  it("carries `unstarted` over the wire and adds it up when merging", () => {
    const a = new MetricStats();
    a.counters.unstarted = 4;
    a.counters.dropped = 4;
    const merged = MetricStats.fromWire(a.toWire()).merge(a);
    expect(merged.counters.unstarted).toBe(8);
    expect(merged.counters.dropped).toBe(8);
    expect(merged.isEmpty).toBe(false);
  });
});
