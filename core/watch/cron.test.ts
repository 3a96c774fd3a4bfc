import { describe, expect, it } from "vitest";
import { nextAfter, parseCron, schedulePrice, turnsIn } from "./cron.ts";
import { decideTurn } from "./schedule-turn.ts";

const at = (iso: string) => Date.parse(iso);
const cronOf = (text: string) => {
  const parsed = parseCron(text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.cron;
};

describe("nextAfter", () => {
  it.each([
    // [expression, after, next, why]
    ["* * * * *", "2026-11-28T12:00:30Z", "2026-11-28T12:01:00Z", "every minute: the next whole minute"],
    ["* * * * *", "2026-11-28T12:01:00Z", "2026-11-28T12:02:00Z", "strictly after: a tick on the minute waits for the next"],
    ["*/15 * * * *", "2026-11-28T12:16:00Z", "2026-11-28T12:30:00Z", "a step from the range's start"],
    ["0 3 * * *", "2026-11-28T12:00:00Z", "2026-11-29T03:00:00Z", "daily at 03:00 UTC: tomorrow"],
    ["0 3 * * 1-5", "2026-11-28T12:00:00Z", "2026-11-30T03:00:00Z", "weekdays: Saturday 28th → Monday 30th"],
    ["0 0 * * 7", "2026-11-28T12:00:00Z", "2026-11-29T00:00:00Z", "7 is Sunday, as 0 is"],
    ["30 2 1 * *", "2026-11-28T12:00:00Z", "2026-12-01T02:30:00Z", "monthly: the first of next month"],
    ["0 0 29 2 *", "2026-11-28T12:00:00Z", "2028-02-29T00:00:00Z", "29 February: the next leap year"],
    ["0 0 1 * 1", "2026-11-28T12:00:00Z", "2026-11-30T00:00:00Z", "both day fields restricted: either matches (Monday 30th before the 1st)"],
    ["5,10 8-9 * 12 *", "2026-11-28T12:00:00Z", "2026-12-01T08:05:00Z", "lists and ranges, in December only"],
  ])("%s after %s → %s (%s)", (expression, after, next, _why) => {
    expect(new Date(nextAfter(cronOf(expression), at(after))!).toISOString()).toBe(new Date(at(next)).toISOString());
  });

  it("is null for an expression that never matches (30 February)", () => {
    expect(nextAfter(cronOf("0 0 30 2 *"), at("2026-11-28T12:00:00Z"))).toBeNull();
  });

  it("counts a schedule's turns in 30 days, to price it", () => {
    expect(turnsIn(cronOf("0 * * * *"), at("2026-11-01T00:00:00Z"))).toBe(720);
    expect(turnsIn(cronOf("0 3 * * 1-5"), at("2026-11-02T00:00:00Z"))).toBe(22);
  });

  it("prices a schedule per month: a run's estimate times its turns in 30 days", () => {
    expect(schedulePrice(cronOf("0 */6 * * *"), 0.125, at("2026-11-01T00:00:00Z"))).toEqual({ usdPerRun: 0.125, turnsPer30Days: 120, usdPer30Days: 15 });
  });
});

describe("parseCron", () => {
  it.each([
    // [expression, detail fragment, why]
    ["* * * *", "5 fields", "four fields"],
    ["60 * * * *", "outside 0-59", "minute out of range"],
    ["* 5-2 * * *", "backwards", "a range backwards"],
    ["* * * JAN *", "is not", "names are not accepted"],
    ["*/0 * * * *", "at least 1", "a zero step"],
    ["", "got 0", "empty"],
  ])("refuses %j (%s: %s)", (expression, fragment, _why) => {
    const parsed = parseCron(expression);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problems.map((p) => p.detail).join("; ")).toContain(fragment);
  });

  it("reports every bad field at once", () => {
    const parsed = parseCron("61 25 * * *");
    expect(parsed.ok ? [] : parsed.problems.map((p) => p.detail)).toEqual(['minute "61": 61 is outside 0-59', 'hour "25": 25 is outside 0-23']);
  });
});

describe("decideTurn", () => {
  const minutely = cronOf("* * * * *");
  const hourly = cronOf("0 * * * *");
  const base = { paused: false, previousRunActive: false, previousRunId: "r-prev" };
  it.each([
    // [cron, nextDue, now, previous run active, paused, decision, why]
    [minutely, "12:01:00", "12:00:30", false, false, { kind: "idle", nextDueMs: at("2026-11-28T12:01:00Z") }, "not due yet"],
    [
      minutely,
      "12:01:00",
      "12:01:00",
      false,
      false,
      { kind: "start", dueMs: at("2026-11-28T12:01:00Z"), missed: 0, nextDueMs: at("2026-11-28T12:02:00Z") },
      "due on the dot",
    ],
    [
      minutely,
      "12:01:00",
      "12:01:00",
      true,
      false,
      {
        kind: "skip",
        dueMs: at("2026-11-28T12:01:00Z"),
        missed: 0,
        nextDueMs: at("2026-11-28T12:02:00Z"),
        reason: "the previous run r-prev of this schedule is still going",
      },
      "previous run still going: skipped, and the turn names that run",
    ],
    [
      minutely,
      "12:01:00",
      "12:04:10",
      false,
      false,
      { kind: "start", dueMs: at("2026-11-28T12:04:00Z"), missed: 3, nextDueMs: at("2026-11-28T12:05:00Z") },
      "three ticks lost: the latest turn runs once, three are reported missed",
    ],
    [
      hourly,
      "10:00:00",
      "12:10:00",
      false,
      false,
      {
        kind: "missed",
        dueMs: at("2026-11-28T12:00:00Z"),
        missed: 3,
        nextDueMs: at("2026-11-28T13:00:00Z"),
        reason: "the turn of 2026-11-28T12:00:00.000Z is too late to start",
      },
      "an outage past the grace: nothing starts, every turn is reported missed",
    ],
    [minutely, "12:01:00", "12:04:10", false, true, { kind: "idle", nextDueMs: at("2026-11-28T12:05:00Z") }, "paused: turns pass, not counted as missed"],
  ] as const)("%#: %s", (cron, nextDue, now, active, paused, decision, _why) => {
    const d = (t: string) => at(`2026-11-28T${t}Z`);
    expect(decideTurn({ ...base, cron, nextDueMs: d(nextDue), nowMs: d(now), previousRunActive: active, paused })).toEqual(decision);
  });

  it("is idle for a schedule with no next turn", () => {
    expect(decideTurn({ ...base, cron: minutely, nextDueMs: null, nowMs: 0 })).toEqual({ kind: "idle", nextDueMs: null });
  });
});
