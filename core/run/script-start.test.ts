import { describe, expect, it } from "vitest";
import { MetricStats } from "../metrics/metric-stats.ts";
import { couldNotRunMessage, noIterationRan } from "./script-start.ts";

function stats(iterations: number, errors: readonly string[]): MetricStats {
  const s = new MetricStats();
  s.counters.iterations = iterations;
  for (const e of errors) s.script.error(e, null);
  return s;
}

describe("noIterationRan", () => {
  const couldNot = couldNotRunMessage(new Error("Failed to start Worker:\nUncaught Error: boom"));

  it("names the isolate's failure, on one line, when no iteration ran", () => {
    expect(noIterationRan(stats(0, [couldNot, couldNot]))).toBe(
      "no iteration could run: the script's isolate could not run the iteration: Failed to start Worker: Uncaught Error: boom (2 tried)",
    );
  });

  it.each([
    ["some iterations ran", stats(3, [couldNot])],
    ["only the script's own exceptions (its iterations ran, as in k6)", stats(0, ["TypeError: x is undefined"])],
    ["no script at all", new MetricStats()],
  ])("is null when %s", (_why, s) => {
    expect(noIterationRan(s)).toBeNull();
  });
});
