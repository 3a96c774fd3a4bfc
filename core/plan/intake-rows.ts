/**
 * Rows a level-1 aggregator's flush log is written a second: its children, the shards of a
 * tree run, each flush at the close of every WINDOWS_PER_WRITE_IN_A_TREE-th window, at their
 * own phase (writesAtPhase) and lag into the second (windowCloseLagMs), and the flushes that
 * arrive within INTAKE_HOLD_MS of the first of a batch share its row
 * (coordinator/merge/intake-batch.ts). The planner prices these rows (run-usage.ts).
 */
import { INTAKE_HOLD_MS } from "../run/protocol.ts";
import { WINDOWS_PER_WRITE_IN_A_TREE, windowCloseLagMs, writesAtPhase } from "../schedule/shard-assignment.ts";

/** Intake rows a second at an aggregator over `children` (shard indices) of a run of `shards`, averaged over the phases. */
export function shardIntakeRowsPerS(children: readonly number[], shards: number, windowsPerWrite = WINDOWS_PER_WRITE_IN_A_TREE): number {
  let rows = 0;
  for (let windowS = 0; windowS < windowsPerWrite; windowS++) {
    const arrivals = children
      .filter((child) => writesAtPhase(windowS, child, windowsPerWrite))
      .map((child) => windowCloseLagMs(child, shards))
      .sort((a, b) => a - b);
    let batchUntil = Number.NEGATIVE_INFINITY;
    for (const at of arrivals) {
      if (at <= batchUntil) continue;
      rows++;
      batchUntil = at + INTAKE_HOLD_MS;
    }
  }
  return rows / windowsPerWrite;
}
