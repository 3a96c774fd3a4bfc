import { describe, expect, it } from "vitest";
import { DEFAULT_RETENTION_DAYS, minuteOf, retentionDaysOf, rollupCutoffMs, rollupRange } from "./retention.ts";

describe("retentionDaysOf", () => {
  it.each([
    // Unset or empty: the default.
    [undefined, DEFAULT_RETENTION_DAYS],
    ["", DEFAULT_RETENTION_DAYS],
    // A whole number of days, as a var's text.
    ["30", 30],
    ["1", 1],
  ])("reads %j as %i days", (raw, days) => {
    expect(retentionDaysOf(raw)).toEqual({ ok: true, days });
  });

  it.each([
    // Zero would roll up a run the moment it ends; a fraction or a word is a typo.
    ["0"],
    ["-5"],
    ["1.5"],
    ["ninety"],
  ])("refuses %j, naming the var and the value", (raw) => {
    const read = retentionDaysOf(raw);
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.error).toBe(`var RESULTS_RETENTION_DAYS must be a whole number of days, at least 1; got "${raw}"`);
  });
});

describe("rollupCutoffMs", () => {
  it.each([
    // 90 days before 2026-12-01T00:00Z is 2026-09-02T00:00Z: runs that ended before then are rolled up.
    [Date.UTC(2026, 11, 1), 90, Date.UTC(2026, 8, 2)],
    // One day: yesterday at the same time.
    [Date.UTC(2026, 0, 1, 12), 1, Date.UTC(2025, 11, 31, 12)],
  ])("at %i with %i days is %i", (nowMs, days, cutoff) => {
    expect(rollupCutoffMs(nowMs, days)).toBe(cutoff);
  });
});

describe("rollupRange", () => {
  it.each([
    // The first window left is mid-minute: the batch starts at its minute, five minutes long.
    [125, { fromS: 120, toS: 420 }],
    // On a minute's first second.
    [0, { fromS: 0, toS: 300 }],
    // A window before t0 belongs to the minute before it, not to minute 0.
    [-1, { fromS: -60, toS: 240 }],
  ])("from window %i is %j", (first, range) => {
    expect(rollupRange(first)).toEqual(range);
  });

  it("never splits a minute: every window of a minute falls in the batch that starts at its minute", () => {
    for (let s = -130; s < 400; s++) {
      const m = minuteOf(s);
      expect(Number.isInteger(m / 60)).toBe(true);
      expect(s >= m && s < m + 60).toBe(true);
      expect(s >= rollupRange(s).fromS && s < rollupRange(s).toS).toBe(true);
    }
  });
});
