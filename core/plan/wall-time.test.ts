import { describe, expect, it } from "vitest";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { parseRunSpec } from "../spec/run-spec.ts";
import { DEFAULT_LIMITS, planRun } from "./plan.ts";
import { PLATFORM_LIMITS } from "./platform-limits.ts";
import { INVOCATION_WALL_TIME_MS, iterationsWithinWallTime, longestInvocationMs } from "./wall-time.ts";

const steady = (perS: number, minutes: number) => new ArrivalSchedule([{ durationMs: minutes * 60_000, fromPerS: perS, toPerS: perS }]);

describe("iterationsWithinWallTime", () => {
  it.each([
    // [schedule, shards, budget cap, why]
    [steady(5, 120), 1, 5 * 720 - 1, "5/s on one shard: 12 minutes' worth, less one for the shares' rounding"],
    [steady(20, 60), 4, (20 * 720) / 4 - 1, "20/s over 4 shards: each shard's share of 12 minutes"],
    [steady(5, 10), 1, Infinity, "a run shorter than 12 minutes cannot outlive an alarm"],
    [
      new ArrivalSchedule([
        { durationMs: 20 * 60_000, fromPerS: 0, toPerS: 10 },
        { durationMs: 60 * 60_000, fromPerS: 10, toPerS: 10 },
      ]),
      1,
      2_160 - 1, // the first 12 minutes of the ramp, 0 → 6/s: 2,160 arrivals
      "a slow ramp's quietest stretch decides",
    ],
  ])("%#: %i shards → %s (%s)", (schedule, shards, cap, _why) => {
    expect(iterationsWithinWallTime(schedule as ArrivalSchedule, shards)).toBe(cap);
  });
});

/** The plan of a constant-rate run of `rate`/s for `duration` over `regions` (caps allowing 3 h). */
function planOf(rate: number, duration: string, regions: readonly string[]) {
  const parsed = parseRunSpec({ target: "http://127.0.0.1:9090", steps: [{ path: "/" }], executor: "constant-arrival-rate", rate, duration, regions });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const planned = planRun(parsed.spec, new ArrivalSchedule(parsed.spec.stages).total, { ...DEFAULT_LIMITS, maxDurationMs: 3 * 3_600_000 });
  if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
  return planned.plan;
}

describe("a slow soak", () => {
  it("is planned with hand-overs in time: no shard invocation is due to send for longer than an alarm may run", () => {
    // 8/s over 4 regions for 2 h: 2/s a shard, so the ~9,500-iteration subrequest budget
    // would keep one alarm sending for 79 minutes.
    const plan = planOf(8, "2h", ["wnam", "enam", "weur", "apac"]);
    const sendingMs = (plan.iterationsPerInvocation / plan.peakPerShardPerS) * 1000;
    expect(sendingMs).toBeLessThanOrEqual(INVOCATION_WALL_TIME_MS);
    expect(sendingMs).toBeLessThan(PLATFORM_LIMITS.alarmWallTimeMs);
    expect(plan.notes.join("\n")).toMatch(/a shard hands over every \d+ iterations \(within 12 minutes at this rate\)/);
  });

  it("leaves a fast run's budget to its subrequests", () => {
    const plan = planOf(400, "1h", ["wnam"]);
    expect(plan.iterationsPerInvocation).toBe(PLATFORM_LIMITS.subrequestsPerInvocation - 500);
    expect(plan.notes.join("\n")).not.toContain("hands over every");
  });
});

describe("longestInvocationMs", () => {
  const steady = (perS: number, durationMs: number) => new ArrivalSchedule([{ durationMs, fromPerS: perS, toPerS: perS }]);

  it("is how long a shard takes to be due its budget, at the schedule's quietest", () => {
    // 5/s for 2 h on one shard: 3,600 iterations take 720 s.
    expect(Math.abs(longestInvocationMs(steady(5, 7_200_000), 1, 3_600) - 720_000)).toBeLessThanOrEqual(200);
    // A ramp from 1/s: the budget takes longest from its start.
    const ramp = new ArrivalSchedule([{ durationMs: 3_600_000, fromPerS: 1, toPerS: 10 }]);
    expect(longestInvocationMs(ramp, 1, 1_000)).toBeGreaterThan(longestInvocationMs(steady(10, 3_600_000), 1, 1_000));
  });

  it("is the schedule's remainder when a budget is not due before the end", () => {
    expect(longestInvocationMs(steady(5, 60_000), 1, 9_500)).toBe(60_000);
  });

  it("shows the limits table what an uncapped budget would do to a slow soak, and that the plan's does not", () => {
    // The subrequest budget alone (9,500) at 2/s a shard: 79 minutes, past an alarm's 15.
    expect(longestInvocationMs(steady(8, 7_200_000), 4, 9_500)).toBeGreaterThan(PLATFORM_LIMITS.alarmWallTimeMs);
    const plan = planOf(8, "2h", ["wnam", "enam", "weur", "apac"]);
    expect(longestInvocationMs(steady(8, 7_200_000), plan.shards.length, plan.iterationsPerInvocation)).toBeLessThanOrEqual(INVOCATION_WALL_TIME_MS);
  });
});
