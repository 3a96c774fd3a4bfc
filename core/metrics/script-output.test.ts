import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MetricStats } from "./metric-stats.ts";
import { MAX_MESSAGE_CHARS, MAX_SCRIPT_MESSAGES, ScriptOutput, type LogLevel } from "./script-output.ts";

describe("ScriptOutput", () => {
  it("counts each distinct error with where it was thrown, most frequent first, and every one past the bound", () => {
    const o = new ScriptOutput();
    o.error("Error: boom", "test.js:8");
    o.error("Error: boom", "test.js:8", 2);
    // The same message thrown elsewhere is another error.
    o.error("Error: boom", "lib.js:3");
    expect(o.errors()).toEqual([
      { message: "Error: boom", at: "test.js:8", count: 3 },
      { message: "Error: boom", at: "lib.js:3", count: 1 },
    ]);
    for (let i = 0; i < 3 * MAX_SCRIPT_MESSAGES; i++) o.error(`Error: ${i}`, null);
    expect(o.errors()).toHaveLength(MAX_SCRIPT_MESSAGES);
    expect(o.errorCount).toBe(4 + 3 * MAX_SCRIPT_MESSAGES);
  });

  it("keeps console lines in the order printed, with the lowest VU that printed each, and cuts long ones", () => {
    const o = new ScriptOutput();
    o.log("info", "hello", 3);
    o.log("warning", "careful", 2);
    o.log("info", "hello", 1);
    o.log("error", "x".repeat(2 * MAX_MESSAGE_CHARS), 1);
    const [hello, careful, long] = o.logs();
    expect(hello).toEqual({ level: "info", message: "hello", vu: 1, count: 2 });
    expect(careful).toEqual({ level: "warning", message: "careful", vu: 2, count: 1 });
    expect(long!.message).toHaveLength(MAX_MESSAGE_CHARS);
    expect(o.logCount).toBe(4);
  });

  it("keeps the first abort message", () => {
    const o = new ScriptOutput();
    expect(o.isEmpty).toBe(true);
    o.abort("why");
    o.abort("another VU's");
    expect(o.aborted).toBe("why");
    expect(o.isEmpty).toBe(false);
    expect(new ScriptOutput().mergeWire(o.toWire()).aborted).toBe("why");
  });

  it("keeps the first exec.test.fail() message apart from an abort, through the wire and a MetricStats merge", () => {
    const o = new ScriptOutput();
    o.markFailed("soft check failed");
    o.markFailed("a later iteration's");
    // A fail alone is something to send (the coordinator must hear of it), and is no abort.
    expect(o.isEmpty).toBe(false);
    expect(o.aborted).toBeNull();
    expect(o.toWire()).toEqual({ f: "soft check failed" });
    // Merged where the mark came second, as an aggregator merges two shards' windows.
    const first = new MetricStats();
    first.script.log("info", "hello", 1);
    const second = MetricStats.fromWire({ ...new MetricStats().toWire(), y: o.toWire() });
    const merged = MetricStats.fromWire(JSON.parse(JSON.stringify(first.merge(second).toWire())));
    expect(merged.script.markedFailed).toBe("soft check failed");
    expect(merged.script.aborted).toBeNull();
  });

  it("adds up exactly under any grouping: counts of errors and lines survive merges and the wire", () => {
    const entry = fc.record({
      error: fc.boolean(),
      text: fc.constantFrom("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"),
      vu: fc.integer({ min: 1, max: 5 }),
      level: fc.constantFrom<LogLevel>("debug", "info", "warning", "error"),
    });
    fc.assert(
      fc.property(fc.array(entry), fc.integer({ min: 1, max: 4 }), (entries, parts) => {
        const whole = new ScriptOutput();
        const pieces = Array.from({ length: parts }, () => new ScriptOutput());
        entries.forEach((e, i) => {
          for (const o of [whole, pieces[i % parts]!]) {
            if (e.error) o.error(e.text, null);
            else o.log(e.level, e.text, e.vu);
          }
        });
        const merged = pieces.reduce((acc, p) => acc.mergeWire(JSON.parse(JSON.stringify(p.toWire()))), new ScriptOutput());
        expect(merged.errorCount).toBe(whole.errorCount);
        expect(merged.logCount).toBe(whole.logCount);
      }),
    );
  });
});

describe("MetricStats with a script's output", () => {
  it("is not empty when the script only said something, and carries it through the wire", () => {
    const stats = new MetricStats();
    expect(stats.isEmpty).toBe(true);
    stats.script.log("info", "hello", 1);
    expect(stats.isEmpty).toBe(false);
    const wire = stats.toWire();
    expect(wire.y).toEqual({ l: [["info", "hello", 1, 1]] });
    expect(MetricStats.fromWire(wire).merge(MetricStats.fromWire(wire)).script.logs()).toEqual([{ level: "info", message: "hello", vu: 1, count: 2 }]);
  });

  it("sends nothing for a run whose script said nothing", () => {
    const stats = new MetricStats();
    stats.counters.sent++;
    expect(stats.toWire().y).toBeUndefined();
  });
});
