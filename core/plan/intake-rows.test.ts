import { describe, expect, it } from "vitest";
import { INTAKE_HOLD_MS } from "../run/protocol.ts";
import { WINDOW_CLOSE_SPREAD_MS, windowCloseLagMs } from "../schedule/shard-assignment.ts";
import { shardIntakeRowsPerS } from "./intake-rows.ts";

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe("shardIntakeRowsPerS", () => {
  it("is one row a second when each second one child flushes", () => {
    // Four shards writing every fourth window: one of them at each phase.
    expect(shardIntakeRowsPerS(range(0, 4), 4, 4)).toBe(1);
  });

  it("shares a row between flushes that close within the hold of each other", () => {
    // 100 contiguous shards of 1,000 close within 60 ms of each other: one batch whenever any flushes.
    expect(windowCloseLagMs(99, 1_000) - windowCloseLagMs(0, 1_000)).toBeLessThan(INTAKE_HOLD_MS);
    expect(shardIntakeRowsPerS(range(0, 100), 1_000, 4)).toBe(1);
    expect(shardIntakeRowsPerS(range(0, 100), 1_000, 1)).toBe(1);
  });

  it("needs a row per hold when the flushes spread over the close spread", () => {
    // Every shard of the run under one receiver, each writing every window: the lags span 0–600 ms,
    // so the batches start at 0, just past 250 and just past 500 ms.
    expect(WINDOW_CLOSE_SPREAD_MS).toBe(600);
    expect(shardIntakeRowsPerS(range(0, 60), 60, 1)).toBe(3);
  });

  it("counts no row in a second when no child writes at its phase", () => {
    // Children 0, 4, 8, …: all at one phase of four, so one second in four has their flushes,
    // spread over 0–576 ms: three batches that second, none the other three.
    const children = range(0, 25).map((i) => i * 4); // 0–96 of 100: lags 0–576 ms
    expect(shardIntakeRowsPerS(children, 100, 4)).toBe(3 / 4);
  });
});
