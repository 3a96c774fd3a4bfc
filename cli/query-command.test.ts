import { describe, expect, it } from "vitest";
import { toClockStep } from "./query-command.ts";

describe("toClockStep", () => {
  it.each<[number | null, Record<string, unknown>]>([
    // workerd's 1 ms clock: a histogram's 13.024 ms was "13 ms"; counts and rates are left alone.
    [1, { region: "wnam", requests: 120, rps: 12.345, p95: 13, "p99.9": 20 }],
    // A 0.1 ms clock keeps one decimal.
    [0.1, { region: "wnam", requests: 120, rps: 12.345, p95: 13, "p99.9": 19.8 }],
    // No clock known (a run stored before it was detected): the figures as they are.
    [null, { region: "wnam", requests: 120, rps: 12.345, p95: 13.024, "p99.9": 19.776 }],
  ])("at a %s ms clock", (resolutionMs, expected) => {
    expect(toClockStep([{ region: "wnam", requests: 120, rps: 12.345, p95: 13.024, "p99.9": 19.776 }], resolutionMs)).toEqual([expected]);
  });
});
