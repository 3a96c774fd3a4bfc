import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ArrivalSchedule } from "./arrival-schedule.ts";
import { interleaveCycle } from "../data/interleave.ts";
import { dueBatch, ShardShare } from "./pacer.ts";
import { shardSliceOf } from "./shard-slice.ts";

const stageArb = fc.record({
  durationMs: fc.integer({ min: 1, max: 20_000 }),
  fromPerS: fc.double({ min: 0, max: 500, noNaN: true }),
  toPerS: fc.double({ min: 0, max: 500, noNaN: true }),
});
const profileArb = fc.array(stageArb, { minLength: 1, maxLength: 4 });
const weightsArb = fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 12 });

describe("ArrivalSchedule", () => {
  it.each([
    // [stages, total, why]
    [[{ durationMs: 30_000, fromPerS: 200, toPerS: 200 }], 6000, "constant 200/s for 30 s"],
    [[{ durationMs: 10_000, fromPerS: 0, toPerS: 100 }], 500, "linear ramp 0→100/s over 10 s: the triangle's area"],
    [
      [
        { durationMs: 5_000, fromPerS: 20, toPerS: 200 },
        { durationMs: 25_000, fromPerS: 200, toPerS: 200 },
      ],
      5550,
      "the demo profile",
    ],
    [[{ durationMs: 1_000, fromPerS: 0.5, toPerS: 0.5 }], 1, "a fractional total rounds up: the first arrival is at t=0"],
    [[{ durationMs: 1_000, fromPerS: 0, toPerS: 0 }], 0, "zero rate, zero arrivals"],
  ])("plans %j as %i iterations (%s)", (stages, total) => {
    expect(new ArrivalSchedule(stages).total).toBe(total);
  });

  it("spaces a constant rate evenly, starting at t=0 like k6", () => {
    const s = new ArrivalSchedule([{ durationMs: 1000, fromPerS: 200, toPerS: 200 }]);
    expect([0, 1, 2, 199].map((i) => s.dueMs(i))).toEqual([0, 5, 10, 995]);
  });

  it("is monotone and inverts the cumulative arrivals within the profile", () => {
    fc.assert(
      fc.property(profileArb, (stages) => {
        const s = new ArrivalSchedule(stages);
        let previous = -Infinity;
        for (let i = 0; i < Math.min(s.total, 2000); i++) {
          const t = s.dueMs(i);
          expect(t).toBeGreaterThanOrEqual(previous - 1e-9);
          expect(t).toBeLessThanOrEqual(s.durationMs + 1e-9);
          expect(s.arrivalsBy(t)).toBeCloseTo(i, 4);
          previous = t;
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe("interleaveCycle", () => {
  it.each([
    [[1, 1, 1], [0, 1, 2], "equal weights: plain round robin"],
    [[2, 1], [0, 1, 0], "the heavier owner is spread, not bunched"],
    [[5, 1, 1], [0, 0, 1, 0, 2, 0, 0], "nginx's smooth weighted round robin example"],
  ])("%j → %j (%s)", (weights, cycle) => {
    expect(interleaveCycle(weights)).toEqual(cycle);
  });

  const maxDeviation = (weights: number[]) => {
    const cycle = interleaveCycle(weights);
    const total = weights.reduce((a, b) => a + b, 0);
    const seen = weights.map(() => 0);
    let worst = 0;
    cycle.forEach((owner, n) => {
      seen[owner]!++;
      weights.forEach((w, i) => (worst = Math.max(worst, Math.abs(seen[i]! - ((n + 1) * w) / total))));
    });
    expect(seen).toEqual(weights); // one cycle: exactly w slots each
    return worst;
  };

  it("keeps two owners within one slot of their exact share over any prefix", () => {
    fc.assert(fc.property(fc.tuple(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 50 })), (w) => maxDeviation(w) < 1 + 1e-9));
  });

  it("keeps any number of owners within 1.5 slots of their exact share over any prefix", () => {
    fc.assert(fc.property(weightsArb, (weights) => maxDeviation(weights) < 1.5));
    // A weighting where smooth round-robin exceeds one slot (found by the property above).
    expect(maxDeviation([1, 3, 1, 49, 1, 3, 49])).toBeGreaterThan(1);
  });

  it("builds equal weights' cycle as the smooth round robin does, without its loop", () => {
    // The general loop (nginx's smooth weighted round robin), for reference.
    const smooth = (weights: number[]) => {
      const total = weights.reduce((a, w) => a + w, 0);
      const current = weights.map(() => 0);
      return Array.from({ length: total }, () => {
        let best = 0;
        weights.forEach((w, i) => ((current[i]! += w), current[i]! > current[best]! && (best = i)));
        current[best]! -= total;
        return best;
      });
    };
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 4 }), (owners, w) => {
        const weights = Array.from({ length: owners }, () => w);
        expect(interleaveCycle(weights)).toEqual(smooth(weights));
      }),
    );
  });

  it("rejects weights that cannot form a cycle", () => {
    expect(() => interleaveCycle([0, 0])).toThrow(/positive sum/);
    expect(() => interleaveCycle([1.5])).toThrow(/integers/);
  });
});

describe("ShardShare", () => {
  it("splits the schedule so the shards' shares sum exactly to the whole, each iteration once", () => {
    fc.assert(
      fc.property(profileArb, weightsArb, (stages, weights) => {
        const schedule = new ArrivalSchedule(stages);
        const shares = weights.map((_, i) => new ShardShare(new ArrivalSchedule(stages), shardSliceOf(weights, i)));
        expect(shares.reduce((a, s) => a + s.total, 0)).toBe(schedule.total);
        const owned = new Set<number>();
        for (const share of shares) for (let k = 0; k < share.total; k++) owned.add(share.globalIndex(k));
        expect(owned.size).toBe(schedule.total);
        if (schedule.total > 0) expect(Math.max(...owned)).toBe(schedule.total - 1);
      }),
      { numRuns: 150 },
    );
  });

  it("finds where a restarted shard resumes: the first iteration not yet due", () => {
    const share = new ShardShare(new ArrivalSchedule([{ durationMs: 10_000, fromPerS: 100, toPerS: 100 }]), shardSliceOf([1, 1], 1));
    // Shard 1 owns globals 1, 3, 5, … due at 10, 30, 50 ms…
    expect(share.firstDueAtOrAfter(0)).toBe(0);
    expect(share.firstDueAtOrAfter(10)).toBe(0);
    expect(share.firstDueAtOrAfter(11)).toBe(1);
    expect(share.firstDueAtOrAfter(1e9)).toBe(share.total);
  });
});

describe("dueBatch (the pacer)", () => {
  it("never releases an iteration before its due time and never skips one that is due", () => {
    fc.assert(
      fc.property(profileArb, weightsArb, fc.array(fc.double({ min: 0, max: 50, noNaN: true }), { minLength: 1, maxLength: 200 }), (stages, weights, steps) => {
        const share = new ShardShare(new ArrivalSchedule(stages), shardSliceOf(weights, 0));
        let cursor = 0;
        let elapsed = 0;
        for (const step of steps) {
          elapsed += step;
          const batch = dueBatch(share, cursor, elapsed);
          for (let k = batch.from; k < batch.to; k++) expect(share.dueMs(k)).toBeLessThanOrEqual(elapsed);
          if (batch.to < share.total) {
            expect(share.dueMs(batch.to)).toBeGreaterThan(elapsed);
            expect(batch.waitMs).toBeCloseTo(share.dueMs(batch.to) - elapsed, 9);
          } else {
            expect(batch.waitMs).toBe(Infinity);
          }
          cursor = batch.to;
        }
      }),
      { numRuns: 150 },
    );
  });

  it("caps a batch at maxBatch without losing the rest", () => {
    const share = new ShardShare(new ArrivalSchedule([{ durationMs: 1000, fromPerS: 1000, toPerS: 1000 }]), shardSliceOf([1], 0));
    const first = dueBatch(share, 0, 100, 10);
    expect(first).toMatchObject({ from: 0, to: 10, waitMs: 0 });
    expect(dueBatch(share, first.to, 100).to).toBe(101);
  });
});
