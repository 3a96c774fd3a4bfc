/**
 * How a coordinator reaches its run's shards: each one's LoadShard (one Durable Object per
 * shard, named `<run>/<index>`, placed by its region's location hint), starting them all
 * with their assignments and a common T0, and stopping them all. Also where each shard's
 * watermark starts: a named scenario's shards measure nothing before its start.
 */
import type { Plan } from "../../core/plan/plan.ts";
import { shardAssignments } from "../../core/schedule/shard-assignment.ts";
import type { LoadShard } from "../../workers/shard/load-shard.ts";
import { SHARD_FLUSH_GRACE_MS, type RunRecord } from "./run-record.ts";

type ShardNamespace = DurableObjectNamespace<LoadShard>;

/** The stub of shard `index` of `run`, created in its region on first use. */
export function shardStub(shards: ShardNamespace, run: RunRecord, index: number) {
  const region = run.plan.shards[index]!.region;
  return shards.get(shards.idFromName(`${run.runId}/${index}`), { locationHint: region as DurableObjectLocationHint });
}

/** Starts every shard of `run` with its assignment; settles once each has answered. */
export function startShards(shards: ShardNamespace, run: RunRecord) {
  const assignments = shardAssignments({
    runId: run.runId,
    spec: run.spec,
    plan: run.plan,
    t0Ms: run.t0Ms,
    mode: run.mode,
    flushGraceMs: SHARD_FLUSH_GRACE_MS,
  });
  return Promise.allSettled(assignments.map((assignment, index) => shardStub(shards, run, index).start(assignment)));
}

/** Asks every shard of `run` to stop (each within seconds); a shard that fails to answer is left to its deadline. */
export async function abortShards(shards: ShardNamespace, run: RunRecord): Promise<void> {
  await Promise.allSettled(run.plan.shards.map((s) => shardStub(shards, run, s.index).abort()));
}

/** The watermark each named scenario's shard starts at: its scenario's start, in seconds. */
export function startingWatermarks(plan: Plan): Map<number, number> {
  return new Map((plan.scenarios ?? []).flatMap((s) => Array.from({ length: s.shardCount }, (_, i) => [s.firstShard + i, s.startMs / 1000] as const)));
}
