import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ShardVus, VuSchedule, type VuProfile } from "./vu-schedule.ts";
import { shardSliceOf } from "./shard-slice.ts";

const profile = (startVUs: number, stages: Array<[target: number, durationMs: number]>): VuProfile => ({
  startVUs,
  stages: stages.map(([target, durationMs]) => ({ target, durationMs })),
  gracefulRampDownMs: 30_000,
});

/** The auth lifecycle: 0→50 (1 m), hold 3 m, 50→100 (1 m), hold 3 m, 100→0 (1 m). */
const lifecycle = profile(0, [
  [50, 60_000],
  [50, 180_000],
  [100, 60_000],
  [100, 180_000],
  [0, 60_000],
]);

describe("VuSchedule", () => {
  it.each([
    // [t ms, active VUs, why]
    [0, 0, "starts at startVUs"],
    [1_199, 0, "the first VU starts at 60 s / 50 = 1.2 s"],
    [1_200, 1, "…and not before"],
    [30_000, 25, "half way up the ramp: half the VUs (floored)"],
    [59_999, 49, "the last step of a ramp lands on the stage's end"],
    [60_000, 50, "hold at 50"],
    [270_000, 75, "half way through 50→100"],
    [300_000, 100, "hold at 100"],
    [480_000, 100, "ramp-down starts with everyone"],
    [480_600, 99, "one VU leaves every 600 ms"],
    [539_999, 1, "the last VU leaves at the end"],
    [540_000, 0, "after the run: none"],
  ])("at %i ms has %i VUs (%s)", (t, n) => {
    expect(new VuSchedule(lifecycle).activeAt(t)).toBe(n);
  });

  it("knows its peak, duration and VU-seconds (the area under the steps)", () => {
    const s = new VuSchedule(lifecycle);
    expect([s.peak, s.durationMs]).toEqual([100, 540_000]);
    // Ramps are staircases: 0→50 over 60 s averages 24.5, 50→100 averages 74.5, 100→0 averages 50.5.
    expect(s.vuSeconds()).toBeCloseTo(24.5 * 60 + 50 * 180 + 74.5 * 60 + 100 * 180 + 50.5 * 60, 6);
    expect(new VuSchedule(profile(10, [[10, 30_000]])).vuSeconds()).toBe(300); // constant-vus
  });

  it("tells when a VU stops: at the ramp-down step that removes it, or at the end", () => {
    const s = new VuSchedule(lifecycle);
    expect(s.stopsAt(99, 450_000)).toBeCloseTo(480_600, 6); // the newest VU leaves first
    expect(s.stopsAt(0, 100_000)).toBe(540_000);
    expect(s.stopsAt(0, 540_000)).toBe(540_000);
  });

  it("jumps at once on a zero-length stage", () => {
    const s = new VuSchedule(
      profile(0, [
        [10, 0],
        [10, 1_000],
      ]),
    );
    expect([s.activeAt(0), s.activeAt(999), s.activeAt(1_000)]).toEqual([10, 10, 0]);
  });

  it("wakes at every change: stepping by nextChangeAfter sees every count the schedule takes", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 30 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 5_000 })), { minLength: 1, maxLength: 4 }),
        (start, stages) => {
          const s = new VuSchedule(profile(start, stages));
          let t = 0;
          let prev = s.activeAt(0);
          let wakes = 0;
          while (t < s.durationMs) {
            const next = s.nextChangeAfter(t);
            expect(next).toBeGreaterThan(t);
            // Nothing changes between two wake-ups.
            expect(s.activeAt((t + Math.min(next, s.durationMs)) / 2)).toBe(s.activeAt(t));
            const now = s.activeAt(next);
            if (next < s.durationMs) expect(Math.abs(now - prev)).toBeLessThanOrEqual(Math.max(1, ...stages.map(([n]) => n), start));
            prev = now;
            t = next;
            expect(++wakes).toBeLessThan(1_000);
          }
        },
      ),
    );
  });
});

describe("ShardVus", () => {
  it("deals VUs by weight so the shards' counts sum to the schedule's at every moment", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 12 }), fc.integer({ min: 0, max: 600 }), (weights, active) => {
        const shards = weights.map((_, i) => new ShardVus(shardSliceOf(weights, i)));
        const owned = shards.map((s) => s.owned(active));
        expect(owned.reduce((a, o) => a + o.length, 0)).toBe(active);
        // Every VU has exactly one owner.
        expect(new Set(owned.flat()).size).toBe(active);
        // Each shard within one VU of its weighted share.
        const total = weights.reduce((a, w) => a + w, 0);
        owned.forEach((o, i) => expect(Math.abs(o.length - (active * weights[i]!) / total)).toBeLessThan(1 + 1e-9));
      }),
    );
  });

  it("holds the lifecycle's targets across 4 shards at every 100 ms", () => {
    const s = new VuSchedule(lifecycle);
    const shards = [0, 1, 2, 3].map((i) => new ShardVus(shardSliceOf([1, 1, 1, 1], i)));
    for (let t = 0; t < s.durationMs; t += 100) {
      const n = s.activeAt(t);
      expect(shards.reduce((a, sh) => a + sh.owned(n).length, 0)).toBe(n);
    }
    // At the 100-VU hold each shard runs 25; a ramp-down removes the highest numbers first.
    expect(shards.map((sh) => sh.owned(100).length)).toEqual([25, 25, 25, 25]);
    expect(shards[3]!.owns(99)).toBe(true);
  });
});
