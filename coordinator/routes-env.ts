/**
 * The Worker's bindings as its routes (and tests) see them: both Durable Object namespaces
 * typed by their classes, so a route calls a run's coordinator with its real RPC methods.
 * The classes are named here, above both objects, and not in workers/env.ts, which the
 * objects themselves import.
 */
import type { Env, ObjectNamespaces } from "../workers/env.ts";
import type { LoadShard } from "../workers/shard/load-shard.ts";
import type { CoordinatorOfShard } from "../workers/shard/window-flusher.ts";
import type { RunCoordinator } from "./run-coordinator.ts";

export type RoutesEnv = Env & ObjectNamespaces<RunCoordinator, LoadShard>;

/** A shard reaches its coordinator through CoordinatorOfShard: RunCoordinator must offer it. */
type Offers<T extends CoordinatorOfShard> = T;
export type ShardsCoordinator = Offers<RunCoordinator>;
