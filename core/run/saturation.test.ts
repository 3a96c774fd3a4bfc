/**
 * What the saturation notes put down to whom: drops at the in-flight cap are the target's
 * (or a busy generator's), what edgeload did not send (restarts, late starts) is edgeload's.
 */
import { describe, expect, it } from "vitest";
import { MetricStats } from "../metrics/metric-stats.ts";
import { saturation } from "./saturation.ts";

/** 100 requests of 900 ms, sent on time, with these counters. */
function run(counters: Partial<Record<"dropped" | "interrupted" | "unstarted", number>>) {
  const s = new MetricStats();
  for (let i = 0; i < 100; i++) s.trends.duration.record(900_000);
  Object.assign(s.counters, counters);
  return saturation(s, 1);
}

describe("saturation: what edgeload did not send", () => {
  it.each([
    // [counters, reasons, causes, why]
    [
      { dropped: 40, interrupted: 40 },
      ["40 iterations not sent by edgeload: 40 lost to shard restarts — edgeload's own failure, not the target's"],
      [],
      "an arrival-rate shard's restart: its skipped iterations are in dropped too, none at the cap",
    ],
    [
      { dropped: 20, unstarted: 20 },
      [
        "20 iterations not sent by edgeload: 20 never started before the shard's deadline (its first alarm came late or it fell behind) — edgeload's own failure, not the target's",
      ],
      [],
      "a shard that woke past its deadline: not the target's latency",
    ],
    [
      { interrupted: 3 },
      ["3 iterations not sent by edgeload: 3 lost to shard restarts — edgeload's own failure, not the target's"],
      [],
      "a VU shard's restart: its in-flight iterations are not in dropped, and no drop goes below 0",
    ],
  ] as const)("%j → %j (%s)", (counters, reasons, causes, _why) => {
    const sat = run(counters);
    expect(sat.reasons).toEqual(reasons);
    expect(sat.causes).toEqual(causes);
    expect(sat.saturated).toBe(true);
  });

  it("puts on the target only the drops left once edgeload's own losses are taken out", () => {
    const sat = run({ dropped: 50, interrupted: 10, unstarted: 5 });
    expect(sat.causes).toEqual(["target"]);
    expect(sat.reasons[0]).toMatch(/^35 iterations dropped at the in-flight cap \(maxVUs\): .* the target's latency/);
    expect(sat.reasons[1]).toBe(
      "15 iterations not sent by edgeload: 10 lost to shard restarts, 5 never started before the shard's deadline (its first alarm came late or it fell behind) — edgeload's own failure, not the target's",
    );
  });
});
