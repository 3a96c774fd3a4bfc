import { describe, expect, it } from "vitest";
import { recordPicker, seedRecords, unknownDataField, type DataSpec } from "./seed-records.ts";
import { seededRandom } from "../results/comparison-statistics.ts";
import { specProblems, validSpec } from "../../test/support/run-spec-fixtures.ts";
import { zipfProbability } from "./zipf.ts";

const spec = (select: DataSpec["select"], exponent = 1): DataSpec => ({ seed: "s", select, exponent });

describe("seed records", () => {
  it("flattens a seed set's entries into string fields", () => {
    expect(seedRecords({ kind: "users", entries: [{ email: "a@x.test", userId: "u1" }] })).toEqual([{ email: "a@x.test", userId: "u1" }]);
    expect(seedRecords({ kind: "sessions", entries: [{ session_id: "s1", user_id: "u1" }] })).toEqual([{ session_id: "s1", user_id: "u1" }]);
  });

  it("unique, closed model: each shard takes its own segment, together every record once, then none", () => {
    const total = 103;
    const used: number[] = [];
    for (let index = 0; index < 4; index++) {
      const picker = recordPicker(spec("unique"), total, { index, count: 4 }, true);
      for (let n = 0; ; n++) {
        const k = picker.pick({ global: n, vu: 1 });
        if (k === null) break;
        used.push(k);
      }
    }
    expect(used.sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i));
  });

  it("unique, closed model: a restored shard continues where its checkpoint was", () => {
    const picker = recordPicker(spec("unique"), 10, { index: 1, count: 2 }, true);
    expect([picker.pick({ global: 0 }), picker.pick({ global: 1 })]).toEqual([5, 6]);
    const restarted = recordPicker(spec("unique"), 10, { index: 1, count: 2 }, true);
    restarted.restore(picker.snapshot());
    expect(restarted.pick({ global: 0 })).toBe(7);
  });

  it("unique, arrival rate: the run-wide iteration index, so shards never overlap", () => {
    const picker = recordPicker(spec("unique"), 5, { index: 0, count: 3 }, false);
    expect([0, 3, 4, 5].map((global) => picker.pick({ global }))).toEqual([0, 3, 4, null]);
  });

  it("per-vu: VU n keeps record n; arrival-rate iterations cycle through the records", () => {
    expect(recordPicker(spec("per-vu"), 4, { index: 0, count: 1 }, true).pick({ global: 9, vu: 3 })).toBe(2);
    expect(recordPicker(spec("per-vu"), 4, { index: 0, count: 1 }, true).pick({ global: 9, vu: 6 })).toBe(1);
    expect(recordPicker(spec("per-vu"), 4, { index: 0, count: 1 }, false).pick({ global: 9 })).toBe(1);
  });

  it("zipf: picks follow Zipf(n, s) (chi-squared over rank bins, 99.9%)", () => {
    const n = 1000;
    const random = seededRandom(7);
    const picker = recordPicker(spec("zipf", 1.1), n, { index: 0, count: 1 }, false, () => random.next());
    const counts = new Array<number>(n).fill(0);
    const draws = 50_000;
    for (let i = 0; i < draws; i++) counts[picker.pick({ global: i })!]!++;
    const bins: Array<[number, number]> = [
      [1, 1],
      [2, 2],
      [3, 4],
      [5, 10],
      [11, 30],
      [31, 100],
      [101, 300],
      [301, 1000],
    ];
    let chi2 = 0;
    for (const [from, to] of bins) {
      let observed = 0;
      let p = 0;
      for (let k = from; k <= to; k++) {
        observed += counts[k - 1]!;
        p += zipfProbability(n, 1.1, k);
      }
      chi2 += (observed - draws * p) ** 2 / (draws * p);
    }
    expect(chi2).toBeLessThan(24.32); // 99.9% quantile, 7 degrees of freedom
  });

  it("a spec reads records with data.FIELD only when it names a seed set", () => {
    expect(
      validSpec({
        target: "http://127.0.0.1:9",
        executor: "constant-vus",
        vus: 2,
        duration: "1s",
        data: { seed: "users-1k", select: "unique" },
        steps: [{ path: "/u/{{data.userId}}" }],
      }).data,
    ).toEqual({ seed: "users-1k", select: "unique", exponent: 1 });
    expect(specProblems({ target: "http://127.0.0.1:9", executor: "constant-vus", vus: 2, duration: "1s", steps: [{ path: "/u/{{data.userId}}" }] })).toEqual([
      { field: "steps.0.path", detail: '{{data.userId}}: the spec reads no seed set; add "data": {"seed": "NAME"}' },
    ]);
    expect(
      specProblems({
        target: "http://127.0.0.1:9",
        executor: "constant-vus",
        vus: 2,
        duration: "1s",
        data: { seed: "x", exponent: 2 },
        steps: [{ path: "/" }],
      }),
    ).toEqual([{ field: "data.exponent", detail: 'applies to select "zipf" only' }]);
  });

  it("names a {{data.FIELD}} the seed's kind does not have", () => {
    const steps = validSpec({
      target: "http://127.0.0.1:9",
      executor: "constant-vus",
      vus: 1,
      duration: "1s",
      data: { seed: "u" },
      steps: [{ path: "/u/{{data.userId}}" }, { path: "/t", headers: { authorization: "Bearer {{data.token}}" } }],
    }).steps;
    expect(unknownDataField(steps, "u", "users")).toEqual({
      field: "steps.1",
      detail: "{{data.token}}: seed set u holds users, whose records have email, userId",
    });
    expect(unknownDataField(steps.slice(0, 1), "u", "users")).toBeNull();
  });
});
