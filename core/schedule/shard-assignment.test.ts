import { describe, expect, it } from "vitest";
import { validSpec } from "../../test/support/run-spec-fixtures.ts";
import { DEFAULT_LIMITS, planRun } from "../plan/plan.ts";
import { shardAssignments } from "./shard-assignment.ts";

describe("shardAssignments", () => {
  it("gives every shard, of every named scenario, the hosts proved at admission", () => {
    const spec = validSpec({
      target: "https://a.example.com",
      regions: ["wnam", "weur"],
      scenarios: {
        one: { executor: "constant-vus", vus: 4, duration: "10s", steps: [{ path: "/" }] },
        two: { executor: "constant-arrival-rate", rate: 50, duration: "10s", steps: [{ path: "/" }] },
      },
    });
    const planned = planRun(spec, 0, DEFAULT_LIMITS);
    if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
    const input = { runId: "r", spec, plan: planned.plan, t0Ms: 0, mode: "deployed" as const, flushGraceMs: 0 };
    const owned = shardAssignments({ ...input, ownedHosts: ["a.example.com"] });
    expect(owned.length).toBeGreaterThan(1);
    expect(owned.every((a) => a.ownedHosts?.join() === "a.example.com")).toBe(true);
    // Admitted without the check: no list, so the shards check nothing more than the allow-list.
    expect(shardAssignments(input).some((a) => "ownedHosts" in a)).toBe(false);
  });

  it("hands each shard an assignment of the same size whatever the shard count: one of 10,000 shards serialises under 2 KB", () => {
    const sizes = [10, 10_000].map((shards) => {
      const spec = validSpec({
        target: "https://a.example.com",
        regions: ["wnam"],
        executor: "constant-arrival-rate",
        rate: shards * 10,
        duration: "10s",
        shards,
        steps: [{ path: "/" }],
      });
      const planned = planRun(spec, 0, { ...DEFAULT_LIMITS, maxShards: 10_000, maxRatePerS: 1e6, maxTotalRequests: 1e9 });
      if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
      const assignments = shardAssignments({ runId: "r-mh2k3x1a-1a2b3c4d", spec, plan: planned.plan, t0Ms: 0, mode: "deployed", flushGraceMs: 0 });
      expect(assignments).toHaveLength(shards);
      return JSON.stringify(assignments.at(-1)).length;
    });
    expect(sizes[1]).toBeLessThan(2_048);
    // Only the digits of the larger indices and counts differ, and the tree's reportsTo and windowsPerWrite.
    expect(sizes[1]! - sizes[0]!).toBeLessThan(128);
  });
});
