import { describe, expect, it } from "vitest";
import { MetricStats } from "../metrics/metric-stats.ts";
import type { ShardWindow } from "./protocol.ts";
import {
  LIVE_ERRORS_SHOWN,
  scriptAbortIn,
  scriptAbortReason,
  scriptErrorsSection,
  scriptErrorsSummary,
  scriptFailIn,
  scriptFailReason,
  scriptLines,
  scriptWindow,
  withLateScript,
} from "./script-report.ts";

function statsWith(f: (s: MetricStats) => void): MetricStats {
  const s = new MetricStats();
  f(s);
  return s;
}

describe("a window's script output", () => {
  it("merges the window's cells, and is absent when the script said nothing", () => {
    const a = statsWith((s) => s.script.error("Error: boom", "test.js:8", 3));
    const b = statsWith((s) => {
      s.script.error("Error: boom", "test.js:8");
      s.script.log("info", "hello", 2);
    });
    expect(scriptWindow([a, b])).toEqual({
      errors: 4,
      errorSamples: [{ message: "Error: boom", at: "test.js:8", count: 4 }],
      logs: 1,
      logSamples: [{ level: "info", message: "hello", vu: 2, count: 1 }],
      aborted: null,
    });
    expect(scriptWindow([new MetricStats()])).toBeNull();
  });

  it("adds a late portion's counts to what was shown", () => {
    const early = scriptWindow([statsWith((s) => s.script.error("Error: boom", null, 2))])!;
    const late = scriptWindow([statsWith((s) => s.script.error("Error: boom", null))])!;
    expect(withLateScript(early, late)?.errors).toBe(3);
    expect(withLateScript(undefined, late)).toBe(late);
  });

  it("prints like k6's log lines: level, second, message, where, and how many", () => {
    const w = scriptWindow([
      statsWith((s) => {
        s.script.log("info", "hello from 2", 2);
        s.script.log("warning", "careful", 1);
        s.script.error("Error: boom", "test.js:8", 12);
        s.script.abort("why");
      }),
    ])!;
    expect(scriptLines(3, w)).toEqual([
      "INFO[0003] hello from 2  source=console vu=2",
      "WARN[0003] careful  source=console vu=1",
      "ERRO[0003] Error: boom  at=test.js:8 source=stacktrace ×12",
      "ERRO[0003] test aborted: why",
    ]);
  });

  it("prints the first distinct errors of a window and sums the rest in one line", () => {
    const w = scriptWindow([
      statsWith((s) => {
        for (let i = 0; i < 20; i++) s.script.error(`Error: ${i}`, null, 2);
      }),
    ])!;
    const lines = scriptLines(0, w);
    expect(lines).toHaveLength(LIVE_ERRORS_SHOWN + 1);
    // 20 × 2 errors, 5 of them shown twice each.
    expect(lines.at(-1)).toBe(`ERRO[0000] … and ${40 - 2 * LIVE_ERRORS_SHOWN} more uncaught errors in this second`);
  });
});

describe("the summary's script errors", () => {
  it("counts every uncaught error and lists the kept ones with where they were thrown", () => {
    const all = statsWith((s) => {
      s.script.error("Error: boom", "test.js:8", 5);
      s.script.error("TypeError: x is undefined", "lib.js:2", 1);
    });
    const summary = scriptErrorsSummary(all);
    expect(summary.total).toBe(6);
    const text = scriptErrorsSection(summary).join("\n");
    expect(text).toContain("SCRIPT ERRORS (6 uncaught");
    expect(text).toMatch(/Error: boom\s+test\.js:8\s+5/);
    // A run whose iterations never threw has no section (and a summary from before has no field).
    expect(scriptErrorsSection(scriptErrorsSummary(new MetricStats()))).toEqual([]);
    expect(scriptErrorsSection(undefined)).toEqual([]);
  });
});

describe("a script's abort in a flush", () => {
  it("is found in any step of any window, and names the reason the run ends with", () => {
    const plain = statsWith((s) => s.counters.sent++).toWire();
    const aborting = statsWith((s) => s.script.abort("why")).toWire();
    const windows: ShardWindow[] = [
      { windowS: 1, part: 1, steps: [[0, plain]] },
      {
        windowS: 2,
        part: 1,
        steps: [
          [0, plain],
          [1, aborting],
        ],
      },
    ];
    expect(scriptAbortIn(windows)).toBe("why");
    expect(scriptAbortIn(windows.slice(0, 1))).toBeNull();
    expect(scriptAbortReason("why")).toBe("script aborted: why");
    expect(scriptAbortReason("")).toBe("script aborted");
  });
});

describe("a script's exec.test.fail() in a flush", () => {
  it("is found in any step of any window, is not an abort, and names the reason the run ends with", () => {
    const plain = statsWith((s) => s.counters.sent++).toWire();
    const failing = statsWith((s) => s.script.markFailed("soft check failed")).toWire();
    const windows: ShardWindow[] = [
      { windowS: 1, part: 1, steps: [[0, plain]] },
      {
        windowS: 2,
        part: 1,
        steps: [
          [0, plain],
          [1, failing],
        ],
      },
    ];
    expect(scriptFailIn(windows)).toBe("soft check failed");
    expect(scriptFailIn(windows.slice(0, 1))).toBeNull();
    // The run goes on: a fail must never read as an abort, which stops it.
    expect(scriptAbortIn(windows)).toBeNull();
    expect(scriptFailReason("soft check failed")).toBe("marked failed by the script: soft check failed");
    expect(scriptFailReason("")).toBe("marked failed by the script");
  });
});
