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
});
