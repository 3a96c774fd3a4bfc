/**
 * The coordinator's storage rows through a tree's end (issue 49): it ticks on, a tick's rows
 * each second, until the last reporter is done — at 1,000,000/s eight seconds past the
 * schedule while 72 level-1 aggregators write their shards' rows 100 ms apart. Priced at one
 * row an end second, the plan under-stated what the scale bench's coordinator wrote (109 rows
 * for 126).
 */
import { describe, expect, it } from "vitest";
import { planTree } from "./aggregation-tree.ts";
import { coordinatorRowsWritten } from "./receiver-rows.ts";

describe("coordinatorRowsWritten through a tree", () => {
  const shards = Array.from({ length: 7_146 }, (_, index) => ({ index, region: ["wnam", "enam", "weur", "eeur", "apac", "oc"][index % 6]! }));
  const tree = planTree(shards)!;

  it("writes a tick's three rows for each second it ticks after the schedule", () => {
    const rows = (afterSchedule: number) => coordinatorRowsWritten(tree, tree.roots.length, 14, { all: 3 + 13 + afterSchedule, afterSchedule });
    expect(rows(9) - rows(0)).toBe(9 * 3);
    // The 1,000,000/s bench run: 13 s of schedule (14 windows), the last done 7.98 s after it,
    // which the plan bounds at 8.22 s (reportingEndLagS): 9 ticks, at least the 126 rows written.
    expect(rows(9)).toBeGreaterThanOrEqual(126);
  });
});
