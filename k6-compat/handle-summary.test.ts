import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { handleSummaryData, writeSummaryOutputs } from "./handle-summary.ts";

describe("handleSummaryData", () => {
  it("marks the byte counters as k6 does, the browser's pages' included: contains \"data\"", () => {
    const data = handleSummaryData(
      { metrics: { browser_data_received: { count: 10, rate: 1 }, data_sent: { count: 5, rate: 1 }, items: { count: 2, rate: 1 } } },
      new Set(),
    ) as { metrics: Record<string, { contains: string }> };
    expect([data.metrics.browser_data_received!.contains, data.metrics.data_sent!.contains, data.metrics.items!.contains]).toEqual(["data", "data", "default"]);
  });
});

describe("writeSummaryOutputs", () => {
  it("logs an output it cannot write and still writes the others, as k6 does (the exit code stays the thresholds')", async () => {
    const dir = await mkdtemp(join(tmpdir(), "edgeload-handle-summary-"));
    try {
      const logged: string[] = [];
      const warned: string[] = [];
      const missing = join(dir, "no-such-folder", "summary.json");
      const written = join(dir, "summary.txt");
      await writeSummaryOutputs(
        { [missing]: { a: 1 }, [written]: "ok" },
        (l) => logged.push(l),
        (l) => warned.push(l),
      );
      expect(warned).toEqual([expect.stringMatching(new RegExp(`^ERRO failed to write the handleSummary output ${missing.replace(/[/.]/g, "\\$&")}: ENOENT`))]);
      expect(logged).toEqual([`handleSummary wrote ${written}`]);
      expect(await readFile(written, "utf8")).toBe("ok");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
