import { describe, expect, it } from "vitest";
import { planTree, reportersOf, shardsUnder } from "./aggregation-tree.ts";

const shardsOf = (count: number, regions: readonly string[]) =>
  Array.from({ length: count }, (_, index) => ({ index, region: regions[index % regions.length]! }));

describe("planTree", () => {
  it("keeps a run of at most one group flat", () => {
    expect(planTree(shardsOf(100, ["wnam"]), 100)).toBeNull();
    expect(reportersOf({ shards: shardsOf(3, ["wnam"]), tree: null })).toHaveLength(3);
  });

  it("gives every region one root, and every shard exactly one parent in its own region", () => {
    const shards = shardsOf(7_143, ["wnam", "enam", "weur", "eeur", "apac", "oc"]);
    const tree = planTree(shards, 100)!;
    expect(tree.roots).toHaveLength(6);
    expect(tree.depth).toBe(2); // 1,191 shards a region: 12 groups, then one root
    for (const s of shards) expect(tree.aggregators[tree.parentOfShard[s.index]!]!.region).toBe(s.region);
    for (const a of tree.aggregators) {
      expect(a.children.length).toBeGreaterThan(0);
      expect(a.children.length).toBeLessThanOrEqual(100);
      expect(a.parent === null).toBe(tree.roots.includes(a.index));
    }
    const under = tree.roots.flatMap((r) => shardsUnder(tree, r)).sort((a, b) => a - b);
    expect(under).toEqual(shards.map((s) => s.index));
    expect(tree.roots.reduce((n, r) => n + tree.aggregators[r]!.shardCount, 0)).toBe(7_143);
    expect(reportersOf({ shards, tree }).map((r) => r.region)).toEqual(["wnam", "enam", "weur", "eeur", "apac", "oc"]);
  });

  it("puts a region of at most one group under a single aggregator", () => {
    const tree = planTree(shardsOf(5, ["wnam", "weur"]), 2)!;
    // wnam: shards 0, 2, 4 → groups [0,2] [4] → root; weur: 1, 3 → one aggregator, its root.
    expect(tree.aggregators.map((a) => [a.region, a.level, a.children])).toEqual([
      ["wnam", 1, [0, 2]],
      ["wnam", 1, [4]],
      ["wnam", 2, [0, 1]],
      ["weur", 1, [1, 3]],
    ]);
    expect(tree.roots).toEqual([2, 3]);
    expect(tree.parentOfShard).toEqual([0, 3, 0, 3, 1]);
  });

  it("refuses a fan-in that cannot make a tree", () => {
    expect(() => planTree(shardsOf(4, ["wnam"]), 1)).toThrow(/fan-in of at least 2/);
  });
});
