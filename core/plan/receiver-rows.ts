/**
 * The storage rows an aggregation tree's receivers write (issue 41): each aggregator's flush
 * log, ticks, checkpoints and outbox, and the coordinator's. `npm run bench -- scale` counts
 * the rows its simulated objects wrote beside these figures; each term below says what it
 * follows in the code, and the constants what the simulation measured. Pure.
 */
import { WINDOWS_PER_WRITE_IN_A_TREE } from "../schedule/shard-assignment.ts";
import type { AggregationTree, AggregatorPlan } from "./aggregation-tree.ts";
import { shardIntakeRowsPerS } from "./intake-rows.ts";

/**
 * Rows per tick. An aggregator: the next tick's alarm, and its cut-off and part counter and
 * its log's mark, each written when windows go up — two at a time, every other tick (both
 * 0.5 a second in `npm run bench -- scale` at 35,000 and 100,000/s). The coordinator: the
 * alarm, its live feed and its log's taken mark.
 */
const AGGREGATOR_ROWS_WRITTEN_PER_TICK = 2;
const COORDINATOR_ROWS_WRITTEN_PER_TICK = 3;
/**
 * Flushes a second from an aggregator to its parent (a region root's to the coordinator): its
 * windows go up two at a time, every other second (3 a second from six roots in the scale
 * bench). In a flat run each shard flushes to the coordinator each second.
 */
export const AGGREGATOR_FLUSHES_PER_S = 0.5;
/**
 * Intake rows a second at aggregator `a` of a run of `shards`: it logs what it takes in a
 * quarter-second at a time, one row each (coordinator/merge/intake-batch.ts). A level-1's
 * children are shards, flushing every fourth window at their phase and lag into the second:
 * intake-rows.ts counts the batches they make (1.5, 0.75 and 0.5 a second in the scale
 * bench's trees at 35,000, 100,000 and 1,000,000/s, as the simulation wrote them). Above,
 * its children are aggregators whose ticks all fall on the second (t0 + n s), passing windows
 * up every other tick (AGGREGATOR_FLUSHES_PER_S), so their flushes share a row. Each row is
 * trimmed once after a checkpoint (every 5 s), so the last seconds' are not.
 */
const intakeRowsPerS = (a: AggregatorPlan, shards: number) =>
  a.level === 1 ? shardIntakeRowsPerS(a.children, shards) : Math.min(a.children.length, AGGREGATOR_FLUSHES_PER_S);
const CHECKPOINT_EVERY_S = 5;
/** Rows per checkpoint: the totals, and the children's progress (coordinator/merge/child-progress.ts). */
const ROWS_WRITTEN_PER_CHECKPOINT = 2;
/** Aggregator outbox rows per forwarded window: written, then deleted once acknowledged. */
const AGGREGATOR_ROWS_WRITTEN_PER_FORWARD = 2;

/**
 * Rows a receiver (an aggregator, or the coordinator) writes over `windows` seconds: its log's
 * rows (`intakeRowsPerS` a second) and their trims, its ticks, its checkpoints, and its
 * children's progress once more at the end (their done flushes arrive together).
 */
function logRowsWritten(intakeRowsPerS: number, rowsPerTick: number, windows: number, intakeLagS = 0): number {
  const trimmedSeconds = Math.max(0, windows - CHECKPOINT_EVERY_S);
  const intakeSeconds = Math.max(0, windows - intakeLagS) + trimmedSeconds;
  return intakeRowsPerS * intakeSeconds + windows * rowsPerTick + Math.ceil(windows / CHECKPOINT_EVERY_S) * ROWS_WRITTEN_PER_CHECKPOINT + 1;
}

/**
 * A flat run's coordinator, as logRowsWritten but over its `ticks` from its creation
 * (RUN_START_LEAD_S before t0: object-requests.ts), so that its checkpoints fall up to a
 * second later into the run than an aggregator's and trim one second more of its log
 * (`npm run bench -- scale` at 10,000/s: 1,780 rows over 14 windows, where counting from t0
 * gave 1,705).
 */
function flatCoordinatorRowsWritten(reporters: number, windows: number, ticks: number): number {
  const trimmedSeconds = Math.max(0, windows - CHECKPOINT_EVERY_S + 1);
  return (
    reporters * (windows + trimmedSeconds) + ticks * COORDINATOR_ROWS_WRITTEN_PER_TICK + Math.ceil(ticks / CHECKPOINT_EVERY_S) * ROWS_WRITTEN_PER_CHECKPOINT + 1
  );
}

/**
 * A level-1 aggregator's intake starts late: a tree's shards first write at their phase,
 * holding 1.5 windows on average before (WINDOWS_PER_WRITE_IN_A_TREE of 4).
 */
const LEVEL_1_INTAKE_LAG_S = (WINDOWS_PER_WRITE_IN_A_TREE - 1) / 2;

/**
 * The coordinator's rows in a run with a tree, each term as `npm run bench -- scale`'s
 * simulation wrote them (35,000–1,000,000/s, runs of 4 to 44 windows):
 * - its log: the region roots pass windows up every other tick, the first about
 *   COORDINATOR_FIRST_WINDOWS_S into the run (a shard's held windows, then a tick a level);
 *   each root's done flush is a row of its own (the roots end apart); each row is trimmed
 *   once, at a checkpoint after the first;
 * - its tick through the windows, and on through the end until the last reporter is done
 *   (`endTicks`: the level-1 aggregators write their shards' rows SHARD_ROWS_STAGGER_MS apart
 *   first, object-requests.ts reportingEndLagS), each as many rows as any other tick (at
 *   1,000,000/s the simulation's coordinator wrote 126 rows where one row an end second
 *   priced 109);
 * - its children's progress at each checkpoint, and as each root is done.
 */
function coordinatorRowsInATree(roots: number, windows: number, endTicks: number): number {
  const flushesPerS = roots * AGGREGATOR_FLUSHES_PER_S;
  const loggedSeconds = Math.max(0, windows - COORDINATOR_FIRST_WINDOWS_S);
  const log = flushesPerS * loggedSeconds + roots + flushesPerS * Math.max(0, loggedSeconds - CHECKPOINT_EVERY_S);
  const ticks = (windows + endTicks) * COORDINATOR_ROWS_WRITTEN_PER_TICK;
  const progress = Math.floor(windows / CHECKPOINT_EVERY_S) + roots;
  return log + ticks + progress;
}

/** When a run's first windows reach the coordinator through a tree (see coordinatorRowsInATree). */
const COORDINATOR_FIRST_WINDOWS_S = 4;

/** Rows the tree's aggregators write over `windows` seconds: their logs, ticks and checkpoints, and a forwarded window a second each through their outboxes. */
export function aggregatorRowsWritten(tree: AggregationTree, shards: number, windows: number): number {
  const logs = tree.aggregators.reduce(
    (rows, a) => rows + logRowsWritten(intakeRowsPerS(a, shards), AGGREGATOR_ROWS_WRITTEN_PER_TICK, windows, a.level === 1 ? LEVEL_1_INTAKE_LAG_S : 0),
    0,
  );
  return logs + tree.aggregators.length * windows * AGGREGATOR_ROWS_WRITTEN_PER_FORWARD;
}

/** The coordinator's ticks: all of them (from its creation), and those after the schedule's end. */
export interface CoordinatorTicks {
  readonly all: number;
  readonly afterSchedule: number;
}

/**
 * Rows the coordinator writes over `windows` seconds and its `ticks`: through a tree as
 * coordinatorRowsInATree says; in a flat run a log row per flush of each of its `reporters`
 * (the shards, whose flushes are not held together), as flatCoordinatorRowsWritten says.
 */
export function coordinatorRowsWritten(tree: AggregationTree | null, reporters: number, windows: number, ticks: CoordinatorTicks): number {
  return tree ? coordinatorRowsInATree(reporters, windows, ticks.afterSchedule) : flatCoordinatorRowsWritten(reporters, windows, ticks.all);
}
