/**
 * Properties of the aggregation book (aggregator-book.ts over coordinator/merge/): random
 * child windows delivered in any order, resent, with watermarks true or not, between
 * restarts (a fresh book over the same SQL storage, as after an eviction), checkpoints and
 * cut-offs at random times — checked against a plain reference merge: a map from
 * (child, window, part) to its count, each key counted once.
 *
 * The parent dedups on (aggregator, window, part) (flush-log.ts), so what went up counts
 * once when no part is passed up twice; the book must then pass up exactly the reference,
 * window by window, and keep each child's totals (its D1 shard row) equal to the
 * reference's, across restarts and checkpoints.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MetricStats } from "../../core/metrics/metric-stats.ts";
import type { ChildFlush, ShardWindow } from "../../core/run/protocol.ts";
import { nodeSqlStorage } from "../../test/support/node-sql-storage.ts";
import { AggregatorBook, aggregatorNode } from "./aggregator-book.ts";

const CHILDREN = [4, 5] as const;
const node = aggregatorNode(
  { index: 1, region: "wnam", level: 1, children: [...CHILDREN], parent: 0, shardCount: 2 },
  { runId: "r", t0Ms: 0, spec: { durationMs: 8_000, timeoutMs: 1_000 } },
  60_000,
);

/** One window part a child measured: `sent` requests in window `windowS` of step `step`. */
interface Part {
  readonly child: (typeof CHILDREN)[number];
  readonly windowS: number;
  readonly part: number;
  readonly step: number;
  readonly sent: number;
}

function wire(sent: number) {
  const stats = new MetricStats();
  stats.counters.sent = sent;
  stats.counters.completed = sent;
  stats.trends.duration.record(1000 + sent);
  return stats.toWire();
}

function flush(p: Part, watermarkS: number, done = false): ChildFlush {
  const window: ShardWindow = { windowS: p.windowS, part: p.part, steps: [[p.step, wire(p.sent)]] };
  const telemetry = { region: "wnam", colo: "local", invocations: 1, restarts: 0, subrequests: 0, peakInFlight: 0 };
  return { runId: "r", childIndex: p.child, windows: [window], watermarkS, done, telemetry };
}

const partArb = fc.record({
  child: fc.constantFrom(...CHILDREN),
  windowS: fc.integer({ min: 0, max: 9 }),
  part: fc.integer({ min: 1, max: 3 }),
  step: fc.integer({ min: 0, max: 1 }),
  sent: fc.integer({ min: 1, max: 50 }),
});

/**
 * What happens to the aggregator, in order: a delivery (of parts[i % n], so resends), several
 * taken in together (one intake, one log row: coordinator/merge/intake-batch.ts, the same
 * part maybe twice in it), a cut-off, a checkpoint, a restart.
 */
const opArb = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("deliver" as const), i: fc.nat(), watermarkS: fc.integer({ min: 0, max: 10 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("batch" as const),
      is: fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
      watermarkS: fc.integer({ min: 0, max: 10 }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("close" as const), advanceMs: fc.integer({ min: 0, max: 4_000 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "checkpoint" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "restart" as const }) },
);

const key = (p: Pick<Part, "child" | "windowS" | "part">) => `${p.child}/${p.windowS}/${p.part}`;

describe("the aggregation book against a reference merge", () => {
  it("passes up every distinct (child, window, part) once, whatever the resends, order, restarts and cut-offs", () => {
    fc.assert(
      fc.property(fc.array(partArb, { minLength: 1, maxLength: 25 }), fc.array(opArb, { maxLength: 60 }), (parts, ops) => {
        // The reference: each key once (a generated key twice with other counts is a resend of the first).
        const reference = new Map<string, Part>();
        for (const p of parts) if (!reference.has(key(p))) reference.set(key(p), p);
        const distinct = [...reference.values()];
        const sql = nodeSqlStorage();
        let book = new AggregatorBook(sql.storage, node);
        let nowMs = 0;
        let duplicates = 0;
        let expectedDuplicates = 0;
        const delivered = new Set<string>();
        const passedUp: ShardWindow[] = [];
        const deliverAll = (ps: readonly Part[], watermarkS: number) => {
          const intakes = book.takeAll(
            ps.map((p) => flush(p, watermarkS)),
            nowMs,
          );
          ps.forEach((p, i) => {
            duplicates += intakes[i]!.duplicates;
            if (delivered.has(key(p))) expectedDuplicates++;
            delivered.add(key(p));
          });
        };
        const deliver = (p: Part, watermarkS: number) => deliverAll([p], watermarkS);
        for (const op of ops) {
          if (op.kind === "deliver") deliver(distinct[op.i % distinct.length]!, op.watermarkS);
          else if (op.kind === "batch")
            deliverAll(
              op.is.map((i) => distinct[i % distinct.length]!),
              op.watermarkS,
            );
          else if (op.kind === "close") passedUp.push(...book.closeDue((nowMs += op.advanceMs)));
          else if (op.kind === "checkpoint") book.checkpoint();
          else book = new AggregatorBook(sql.storage, node);
        }
        // Every part not delivered yet arrives at the end, then each child's done.
        for (const p of distinct) if (!delivered.has(key(p))) deliver(p, 0);
        for (const child of CHILDREN) book.take({ ...flush(distinct[0]!, 10, true), childIndex: child, windows: [] }, nowMs);
        passedUp.push(...book.closeDue(nowMs, true));

        expect(duplicates).toBe(expectedDuplicates);
        // A part number is never used twice: the parent would skip the second.
        const upParts = passedUp.map((w) => w.part);
        expect(new Set(upParts).size).toBe(upParts.length);
        // Window by window and step by step, what went up is the reference.
        const sum = (rows: Iterable<readonly [string, number]>) => {
          const m = new Map<string, number>();
          for (const [k, n] of rows) m.set(k, (m.get(k) ?? 0) + n);
          return m;
        };
        const up = sum(passedUp.flatMap((w) => w.steps.map(([step, s]) => [`${w.windowS}/${step}`, MetricStats.fromWire(s).counters.sent] as const)));
        const want = sum(distinct.map((p) => [`${p.windowS}/${p.step}`, p.sent] as const));
        expect(up).toEqual(want);
        // The histograms merged exactly: as many samples up as parts in the reference.
        const samples = passedUp.flatMap((w) => w.steps).reduce((a, [, s]) => a + MetricStats.fromWire(s).trends.duration.count, 0);
        expect(samples).toBe(distinct.length);
        // Each child's totals (its D1 shard row), after one more restart from the checkpoint.
        book.checkpoint();
        book = new AggregatorBook(sql.storage, node);
        for (const child of CHILDREN) {
          const wantSent = distinct.filter((p) => p.child === child).reduce((a, p) => a + p.sent, 0);
          expect(book.child(child).stats.counters.sent).toBe(wantSent);
        }
        // Nothing is left to go up.
        expect(book.closeDue(nowMs + 60_000, true)).toEqual([]);
        sql.close();
      }),
      { numRuns: 300 },
    );
  });
});
