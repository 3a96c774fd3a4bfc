import { describe, expect, it } from "vitest";
import { afterEndMs, DEFAULT_GRACEFUL_STOP_MS, interruptAtMs, iterationStopMs } from "./graceful-stop.ts";

describe("graceful stop", () => {
  it.each([
    // Active at the end: the graceful stop.
    [{ stopsAtMs: 10_000, durationMs: 10_000, gracefulRampDownMs: 0, gracefulStopMs: 3_000 }, 13_000],
    // gracefulStop 0: interrupted at the end (k6 counts 1 of 2 iterations of 0.7 s in 1 s).
    [{ stopsAtMs: 1_000, durationMs: 1_000, gracefulRampDownMs: 30_000, gracefulStopMs: 0 }, 1_000],
    // Ramped down at 4 s: gracefulRampDown from there.
    [{ stopsAtMs: 4_000, durationMs: 10_000, gracefulRampDownMs: 2_000, gracefulStopMs: 30_000 }, 6_000],
    // Ramped down near the end: gracefulRampDown, but never past the graceful stop.
    [{ stopsAtMs: 9_000, durationMs: 10_000, gracefulRampDownMs: 30_000, gracefulStopMs: 5_000 }, 15_000],
    // gracefulRampDown 0: at once.
    [{ stopsAtMs: 4_000, durationMs: 10_000, gracefulRampDownMs: 0, gracefulStopMs: 30_000 }, 4_000],
  ])("an iteration of %o is interrupted at %d ms", (stop, expected) => {
    expect(iterationStopMs(stop)).toBe(expected);
  });

  it("interrupts at the end plus gracefulStop, k6's 30 s when a stored spec has none", () => {
    expect(interruptAtMs({ durationMs: 10_000, gracefulStopMs: 0 })).toBe(10_000);
    expect(interruptAtMs({ durationMs: 10_000 })).toBe(10_000 + DEFAULT_GRACEFUL_STOP_MS);
  });

  it("keeps a shard at work after the end for the graceful stop or a request's timeout, whichever is longer", () => {
    expect(afterEndMs({ durationMs: 1, timeoutMs: 10_000, gracefulStopMs: 0 })).toBe(10_000);
    expect(afterEndMs({ durationMs: 1, timeoutMs: 10_000, gracefulStopMs: 30_000 })).toBe(30_000);
  });
});
