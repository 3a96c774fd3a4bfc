import { describe, expect, it } from "vitest";
import { MetricStats } from "../../core/metrics/metric-stats.ts";
import { D1_WRITE_AFTER_MS } from "../../core/run/run-lifecycle.ts";
import { nodeSqlStorage } from "../../test/support/node-sql-storage.ts";
import type { RecordedStatement } from "../../test/support/recording-d1.ts";
import { takeInFlush } from "../merge/flush-intake.ts";
import type { RunRecord } from "./run-record.ts";
import { showClosedWindows } from "./window-writes.ts";
import { refusableD1, T0, twoShardRun, windowParts } from "../../test/support/coordinator-window-parts.ts";

const REQUESTS_PER_WINDOW = 3;

/** A coordinator's window-writing parts over one SQL storage, as the object builds them (again after a restart). */
function coordinator(sql: SqlStorage, run: RunRecord, d1: { fail: boolean; batches: RecordedStatement[][] }) {
  const db = refusableD1(d1, (statements) => d1.batches.push([...statements]));
  const { parts, totals } = windowParts(sql, db, run);
  return {
    /** Both shards flush window `windowS` (REQUESTS_PER_WINDOW requests each); `done` with it. */
    flush(windowS: number, done = false) {
      for (const shard of [0, 1]) {
        const stats = new MetricStats();
        for (let i = 0; i < REQUESTS_PER_WINDOW; i++) {
          stats.counters.sent++;
          stats.counters.completed++;
          stats.trends.duration.record(20_000);
        }
        const message = {
          runId: run.runId,
          childIndex: shard,
          watermarkS: windowS + 1,
          done,
          windows: [{ windowS, part: 0, steps: [[0, stats.toWire()] as const] }],
          telemetry: { region: "wnam", colo: "local", invocations: 1, restarts: 0, subrequests: 0, peakInFlight: 0 },
        };
        takeInFlush(parts.log, parts.open, totals, message, "wnam");
        parts.shards.record(shard, message.watermarkS, done, message.telemetry, T0);
      }
    },
    tick: (atMs: number, everyoneDone = false) => showClosedWindows(parts, run, atMs, everyoneDone),
  };
}

/** Requests by window in the D1 rows of `batch` (the windows table's window_s and requests columns). */
function requestsWritten(batch: readonly RecordedStatement[]): Record<number, number> {
  const byWindow: Record<number, number> = {};
  for (const { sql, params } of batch) {
    if (!/^\s*INSERT INTO windows\b/i.test(sql)) continue;
    const columns = /\(([^)]*)\) VALUES/i
      .exec(sql)![1]!
      .split(",")
      .map((c) => c.trim());
    const [w, r] = [columns.indexOf("window_s"), columns.indexOf("requests")];
    for (let row = 0; row < params.length; row += columns.length) {
      const windowS = params[row + w] as number;
      byWindow[windowS] = (byWindow[windowS] ?? 0) + (params[row + r] as number);
    }
  }
  return byWindow;
}

/** Requests by window in the dashboards' stored points. */
function requestsShown(sql: SqlStorage): Record<number, number> {
  const rows = sql.exec<{ window_s: number; data: string }>("SELECT window_s, data FROM live_points ORDER BY window_s").toArray();
  return Object.fromEntries(rows.map((r) => [r.window_s, (JSON.parse(r.data) as { requests: number }).requests]));
}

const both = 2 * REQUESTS_PER_WINDOW;

/** A fresh coordinator's storage, D1 (refusing writes while `fail`) and parts. */
function fresh(fail = false) {
  const { storage: sql } = nodeSqlStorage();
  const run = twoShardRun();
  const d1 = { fail, batches: [] as RecordedStatement[][] };
  return { sql, run, d1, c: coordinator(sql, run, d1) };
}

describe("showClosedWindows", () => {
  it("shows each window the tick it closes, and writes the waiting ones to D1 together once the oldest has waited D1_WRITE_AFTER_MS", async () => {
    const { sql, d1, c } = fresh();
    for (let w = 0; w < 5; w++) {
      c.flush(w);
      await c.tick(T0 + (w + 1) * 1_000 + 500);
    }
    // Ticks at 1.5 … 5.5 s: each showed its window; the first (1.5 s) was 4 s old at 5.5 s.
    expect(D1_WRITE_AFTER_MS).toBe(4_000);
    expect(requestsShown(sql)).toEqual({ 0: both, 1: both, 2: both, 3: both, 4: both });
    expect(d1.batches).toHaveLength(1);
    expect(requestsWritten(d1.batches[0]!)).toEqual({ 0: both, 1: both, 2: both, 3: both, 4: both });
  });

  it("keeps the windows waiting when D1 refuses, and writes them with the next ones when it takes writes again", async () => {
    const { sql, d1, c } = fresh(true);
    c.flush(0);
    await c.tick(T0 + 1_500);
    c.flush(1);
    await expect(c.tick(T0 + 1_500 + D1_WRITE_AFTER_MS)).rejects.toThrow("D1 is refusing writes");
    d1.fail = false;
    c.flush(2);
    await c.tick(T0 + 2_500 + D1_WRITE_AFTER_MS);
    expect(d1.batches).toHaveLength(1);
    expect(requestsWritten(d1.batches[0]!)).toEqual({ 0: both, 1: both, 2: both });
    expect(requestsShown(sql)).toEqual({ 0: both, 1: both, 2: both });
  });

  it("after a restart, writes the windows shown before it without showing them twice, and shows the rest once", async () => {
    const { sql, run, d1, c: before } = fresh();
    before.flush(0);
    await before.tick(T0 + 1_500); // window 0 shown, not written
    before.flush(1); // window 1 logged, not shown
    const after = coordinator(sql, run, d1); // the object restarted: only its storage is left
    after.flush(2);
    await after.tick(T0 + 3_500);
    // Window 0 was shown before the restart: written at the first tick after it, not shown again.
    expect(requestsShown(sql)).toEqual({ 0: both, 1: both, 2: both });
    expect(d1.batches).toHaveLength(1);
    expect(requestsWritten(d1.batches[0]!)).toEqual({ 0: both, 1: both, 2: both });
    // Nothing is left to write twice: the next ticks write only what is new.
    after.flush(3, true);
    await after.tick(T0 + 4_500, true);
    expect(d1.batches).toHaveLength(2);
    expect(requestsWritten(d1.batches[1]!)).toEqual({ 3: both });
  });

  it("writes every waiting window at once when every shard is done", async () => {
    const { sql, d1, c } = fresh();
    c.flush(0);
    await c.tick(T0 + 1_500);
    c.flush(1, true);
    await c.tick(T0 + 2_000, true);
    expect(d1.batches).toHaveLength(1);
    expect(requestsWritten(d1.batches[0]!)).toEqual({ 0: both, 1: both });
    expect(requestsShown(sql)).toEqual({ 0: both, 1: both });
  });
});
