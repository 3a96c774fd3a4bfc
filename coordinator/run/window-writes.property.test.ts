/**
 * A property of the coordinator's window path (flush-intake, flush-log, open-windows in
 * coordinator/merge/, with window-writes.ts and log-replay.ts): random shard windows and
 * parts, resent and out of order, ticks at random times, D1 refusing writes for a while,
 * totals checkpointed and the object restarted (new parts over the same SQL storage, as the
 * object builds them) — checked against a plain reference merge: what D1 is given, window
 * by window, is each distinct (shard, window, part) once, and the totals (the summary) too.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MetricStats } from "../../core/metrics/metric-stats.ts";
import { nodeSqlStorage } from "../../test/support/node-sql-storage.ts";
import type { RecordedStatement } from "../../test/support/recording-d1.ts";
import { takeInFlush } from "../merge/flush-intake.ts";
import type { TotalsCheckpoint } from "../merge/flush-log.ts";
import { showClosedWindows } from "./window-writes.ts";
import { refusableD1, T0, twoShardRun, windowParts } from "../../test/support/coordinator-window-parts.ts";

/** Requests by window in the D1 rows of `batch` (the windows table's window_s and requests columns). */
function addWritten(byWindow: Map<number, number>, batch: readonly RecordedStatement[]): void {
  for (const { sql, params } of batch) {
    if (!/^\s*INSERT INTO windows\b/i.test(sql)) continue;
    const columns = /\(([^)]*)\) VALUES/i
      .exec(sql)![1]!
      .split(",")
      .map((c) => c.trim());
    const [w, r] = [columns.indexOf("window_s"), columns.indexOf("requests")];
    for (let row = 0; row < params.length; row += columns.length) {
      const windowS = params[row + w] as number;
      byWindow.set(windowS, (byWindow.get(windowS) ?? 0) + (params[row + r] as number));
    }
  }
}

interface Part {
  readonly shard: 0 | 1;
  readonly windowS: number;
  readonly part: number;
  readonly requests: number;
}

const partArb = fc.record({
  shard: fc.constantFrom(0 as const, 1 as const),
  windowS: fc.integer({ min: 0, max: 9 }),
  part: fc.integer({ min: 0, max: 2 }),
  requests: fc.integer({ min: 1, max: 30 }),
});
const opArb = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("flush" as const), i: fc.nat(), watermarkS: fc.integer({ min: 0, max: 10 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("tick" as const), advanceMs: fc.integer({ min: 0, max: 6_000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("d1" as const), fail: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: "checkpoint" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "restart" as const }) },
);
const key = (p: Part) => `${p.shard}/${p.windowS}/${p.part}`;

describe("the coordinator's windows against a reference merge", () => {
  it("gives D1 and the totals every distinct (shard, window, part) once, whatever the resends, ticks, D1 failures and restarts", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(partArb, { minLength: 1, maxLength: 20 }), fc.array(opArb, { minLength: 20, maxLength: 60 }), async (parts, ops) => {
        const reference = new Map<string, Part>();
        for (const p of parts) if (!reference.has(key(p))) reference.set(key(p), p);
        const distinct = [...reference.values()];
        const run = twoShardRun();
        const { storage: sql, close } = nodeSqlStorage();
        const d1 = { fail: false, written: new Map<number, number>() };
        const db = refusableD1(d1, (statements) => addWritten(d1.written, statements));
        let saved: TotalsCheckpoint | undefined;
        const build = () => windowParts(sql, db, run, saved);
        let c = build();
        let nowMs = T0;
        const flush = (p: Part, watermarkS: number, done = false, empty = false) => {
          const stats = new MetricStats();
          stats.counters.sent = stats.counters.completed = p.requests;
          const telemetry = { region: "wnam", colo: "local", invocations: 1, restarts: 0, subrequests: 0, peakInFlight: 0 };
          const message = {
            runId: "r",
            childIndex: p.shard,
            watermarkS,
            done,
            windows: empty ? [] : [{ windowS: p.windowS, part: p.part, steps: [[0, stats.toWire()] as const] }],
            telemetry,
          };
          takeInFlush(c.parts.log, c.parts.open, c.totals, message, "wnam");
          c.parts.shards.record(p.shard, watermarkS, done, telemetry, nowMs);
        };
        const tick = (everyoneDone = false) => showClosedWindows(c.parts, run, nowMs, everyoneDone).catch(() => {}); // a failed tick is retried
        for (const op of ops) {
          if (op.kind === "flush") flush(distinct[op.i % distinct.length]!, op.watermarkS);
          else if (op.kind === "tick") {
            nowMs += op.advanceMs;
            await tick();
          } else if (op.kind === "d1") d1.fail = op.fail;
          else if (op.kind === "checkpoint") c.parts.log.checkpoint(c.totals, (checkpoint) => (saved = checkpoint));
          else c = build();
        }
        // Every part arrives at the end, resent or not, then both shards are done and D1 takes writes.
        for (const p of distinct) flush(p, 10);
        for (const shard of [0, 1] as const) flush({ ...distinct[0]!, shard }, 10, true, true);
        d1.fail = false;
        nowMs += 1_000;
        await tick(true);
        const want = new Map<number, number>();
        for (const p of distinct) want.set(p.windowS, (want.get(p.windowS) ?? 0) + p.requests);
        expect(new Map([...d1.written].sort((a, b) => a[0] - b[0]))).toEqual(new Map([...want].sort((a, b) => a[0] - b[0])));
        expect(c.totals.select().counters.completed).toBe(distinct.reduce((a, p) => a + p.requests, 0));
        close();
      }),
      { numRuns: 300 },
    );
  });
});
