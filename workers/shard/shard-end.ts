/**
 * How a LoadShard lets go of its storage (issue 49): Durable Object storage is billed per
 * GB-month, and a shard's (its assignment, its state, its flow's state, windows not yet
 * acknowledged) is of no use once its receiver has acknowledged its done.
 *
 * - Its done acknowledged, a shard keeps only a tombstone (shard-state.ts ShardTombstone):
 *   the run it belonged to, so that a late start() of that run — its coordinator's start
 *   retried, an aggregator's — recreates nothing.
 * - Its run's coordinator, once the run is final and its results are in D1, asks it to
 *   clean up (LoadShard.cleanUp): then not even the tombstone is left. By then no start() can
 *   come: a start after the assignment's deadline and grace is refused anyway (startTooLate).
 */
import type { ShardAssignment } from "../../core/run/protocol.ts";
import type { ShardState, ShardTombstone } from "./shard-state.ts";
import { tombstoneOf } from "./shard-state.ts";

/** The tombstone's storage key. */
const TOMBSTONE = "ended";

/** The tombstone a shard left when its run ended for it; undefined while it runs, or once cleaned up. */
export function tombstone(storage: DurableObjectStorage): ShardTombstone | undefined {
  return storage.kv.get<ShardTombstone>(TOMBSTONE);
}

/**
 * Everything but the tombstone goes: the alarm, the assignment (its spec), the state and
 * its windows, the flow's state. Two steps, not one transaction (deleteAll cannot be part of
 * one): a crash between them leaves the storage empty, which the deadline guard of start()
 * covers as it covers a cleaned-up shard.
 */
export async function keepOnlyTombstone(storage: DurableObjectStorage, runId: string, state: ShardState): Promise<void> {
  await storage.deleteAlarm();
  await storage.deleteAll();
  storage.kv.put(TOMBSTONE, tombstoneOf(runId, state));
}

/** Nothing at all is left: the run is final and in D1. */
export async function deleteEverything(storage: DurableObjectStorage): Promise<void> {
  await storage.deleteAlarm();
  await storage.deleteAll();
}

/**
 * Whether a start() comes after the assignment's deadline and the grace for its last
 * flushes: the run is over for this shard, whatever its storage says (it may have been
 * cleaned up), so it is not stored and nothing runs.
 */
export function startTooLate(a: Pick<ShardAssignment, "deadlineMs" | "flushGraceMs">, nowMs: number): boolean {
  return nowMs > a.deadlineMs + a.flushGraceMs;
}
