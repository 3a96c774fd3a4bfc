/**
 * The coordinator Worker: the HTTP API, the cron tick that runs schedules
 * (coordinator/schedule/cron-tick.ts, `triggers.crons` in wrangler.toml), plus the Durable Object classes it deploys
 * (RunCoordinator, one per run; RunAggregator, one per node of a run's aggregation tree,
 * when it has one; LoadShard, one per shard).
 */
import { api } from "./http/api.ts";
import type { RoutesEnv } from "./http/routes-env.ts";
import { admitRun } from "./http/run-admission.ts";
import { cronTick } from "./schedule/cron-tick.ts";
import { ensureSchema } from "./store/schema.ts";

export { RunCoordinator } from "./run/run-coordinator.ts";
export { LoadShard } from "../workers/shard/load-shard.ts";
export { RunAggregator } from "./aggregator/run-aggregator.ts";
export { ScheduleVault } from "./schedule/schedule-vault.ts";

export default {
  fetch: (request, env, ctx) => api.fetch(request, env, ctx),
  // A schedule's turn is admitted exactly as POST /v1/runs admits a run.
  async scheduled(controller, env, ctx) {
    await ensureSchema(env.DB);
    await cronTick(env, controller.scheduledTime, { admit: (spec) => admitRun(spec, env), waitUntil: (p) => ctx.waitUntil(p) });
  },
} satisfies ExportedHandler<RoutesEnv>;
