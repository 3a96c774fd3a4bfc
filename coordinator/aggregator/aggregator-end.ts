/**
 * What a RunAggregator keeps once its run is over for it (issue 49): its parent has
 * acknowledged its done, so everything it merged is held above, and its storage (the flush
 * log, the merged windows, its node) is deleted but a tombstone. The tombstone names the run,
 * so that a late start() recreates nothing and a late child's flush is answered (stop: the
 * child ends, and lets go of its own storage) rather than refused for ever; and keeps what
 * inspect() reports. Its run's coordinator, once the run is final and in D1, has it delete
 * that too, passing the clean-up down its subtree (RunAggregator.cleanUp).
 */
import type { AggregatorPlan } from "../../core/plan/aggregation-tree.ts";
import type { FlushAck } from "../../core/run/protocol.ts";

/** The tombstone's storage key. */
const TOMBSTONE = "ended";

export interface AggregatorTombstone {
  readonly runId: string;
  /** Every window below this went up. */
  readonly watermarkS: number;
  /** Whether every child had said done (or the aggregator ended by its grace). */
  readonly allChildrenDone: boolean;
}

/** What a clean-up passed down a run's tree carries: the tree itself, as the aggregator's storage may be gone already. */
export interface TreeCleanUp {
  readonly runId: string;
  readonly aggregators: readonly AggregatorPlan[];
  /** The aggregator asked. */
  readonly index: number;
}

/** The answer to a child's flush after its aggregator ended: nothing taken, stop. */
export const LATE_FLUSH_ACK: FlushAck = { accepted: 0, duplicates: 0, stop: true };

export function aggregatorTombstone(storage: DurableObjectStorage): AggregatorTombstone | undefined {
  return storage.kv.get<AggregatorTombstone>(TOMBSTONE);
}

/** Everything but the tombstone goes (two steps: deleteAll cannot be part of a transaction). */
export async function keepAggregatorTombstone(storage: DurableObjectStorage, tombstone: AggregatorTombstone): Promise<void> {
  await storage.deleteAlarm();
  await storage.deleteAll();
  storage.kv.put(TOMBSTONE, tombstone);
}
