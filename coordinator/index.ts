/**
 * The coordinator Worker: the HTTP API, plus the Durable Object classes it deploys
 * (RunCoordinator, one per run; RunAggregator, one per node of a run's aggregation tree,
 * when it has one; LoadShard, one per shard).
 */
import { api } from "./http/api.ts";
import type { RoutesEnv } from "./http/routes-env.ts";

export { RunCoordinator } from "./run/run-coordinator.ts";
export { LoadShard } from "../workers/shard/load-shard.ts";
export { RunAggregator } from "./aggregator/run-aggregator.ts";

export default {
  fetch: (request, env, ctx) => api.fetch(request, env, ctx),
} satisfies ExportedHandler<RoutesEnv>;
