/**
 * The Worker's bindings as its routes (and tests) see them: the Durable Object namespaces
 * typed by their classes, so a route calls a run's coordinator with its real RPC methods.
 * The classes are named here, above both objects, and not in workers/env.ts, which the
 * objects themselves import.
 */
import type { Env, ObjectNamespaces } from "../../workers/env.ts";
import type { LoadShard } from "../../workers/shard/load-shard.ts";
import type { FlushReceiver } from "../../workers/shard/window-flusher.ts";
import type { RunCoordinator } from "../run/run-coordinator.ts";
import type { RunAggregator } from "../aggregator/run-aggregator.ts";

export type RoutesEnv = Env & ObjectNamespaces<RunCoordinator, LoadShard, RunAggregator>;

/** A shard reaches its receiver through FlushReceiver: RunCoordinator and RunAggregator must offer it. */
type Offers<T extends FlushReceiver> = T;
export type ShardsCoordinator = Offers<RunCoordinator>;
export type ShardsAggregator = Offers<RunAggregator>;
