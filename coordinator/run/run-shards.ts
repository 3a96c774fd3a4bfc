/**
 * How a coordinator reaches its run's shards: each one's LoadShard (one Durable Object per
 * shard, named `<run>/<index>`, placed by its region's location hint), starting them all
 * with their assignments and a common T0, and stopping them all. A run with an aggregation
 * tree (core/plan/aggregation-tree.ts) reaches them through its region roots instead: the
 * coordinator starts and stops one RunAggregator per region, each passes it down.
 * Also where each shard's watermark starts: a named scenario's shards measure nothing
 * before its start.
 */
import type { Plan } from "../../core/plan/plan.ts";
import { aggregatorName } from "../../core/run/protocol.ts";
import { shardAssignments, subtreeStart, type AssignmentInput } from "../../core/schedule/shard-assignment.ts";
import type { LoadShard } from "../../workers/shard/load-shard.ts";
import type { RunAggregator } from "../aggregator/run-aggregator.ts";
import { SHARD_FLUSH_GRACE_MS, type RunRecord } from "./run-record.ts";
import { stopSignalDue } from "./stop-signal.ts";

/** The namespaces the coordinator reaches its run's objects through. */
export interface RunObjects {
  readonly shards: DurableObjectNamespace<LoadShard>;
  readonly aggregators: DurableObjectNamespace<RunAggregator>;
}

/** The stub of shard `index` of `run`, created in its region on first use. */
export function shardStub(shards: DurableObjectNamespace<LoadShard>, run: RunRecord, index: number) {
  const region = run.plan.shards[index]!.region;
  return shards.get(shards.idFromName(`${run.runId}/${index}`), { locationHint: region as DurableObjectLocationHint });
}

/** The stub of a region root of `run`'s tree. */
function rootStub(aggregators: DurableObjectNamespace<RunAggregator>, run: RunRecord, index: number) {
  const region = run.plan.tree!.aggregators[index]!.region;
  return aggregators.get(aggregators.idFromName(aggregatorName(run.runId, index)), { locationHint: region as DurableObjectLocationHint });
}

/** What every shard's assignment is made from. */
function assignmentInput(run: RunRecord): AssignmentInput {
  return {
    runId: run.runId,
    spec: run.spec,
    plan: run.plan,
    t0Ms: run.t0Ms,
    mode: run.mode,
    flushGraceMs: SHARD_FLUSH_GRACE_MS,
    ...(run.ownedHosts ? { ownedHosts: run.ownedHosts } : {}),
  };
}

/** Starts every shard of `run` with its assignment (through the tree's roots, if it has one); settles once each has answered. */
export function startShards(objects: RunObjects, run: RunRecord) {
  const tree = run.plan.tree;
  if (tree) return Promise.allSettled(tree.roots.map((root) => rootStub(objects.aggregators, run, root).start(subtreeStart(assignmentInput(run), root))));
  const assignments = shardAssignments(assignmentInput(run));
  return Promise.allSettled(assignments.map((assignment, index) => shardStub(objects.shards, run, index).start(assignment)));
}

/**
 * Asks every shard of `run` to stop (each within seconds); true when every one (every
 * region root, in a tree) answered. One that fails to answer is asked again by the
 * coordinator's next tick (stop-signal.ts), and stops by its deadline anyway.
 */
export async function abortShards(objects: RunObjects, run: RunRecord): Promise<boolean> {
  const tree = run.plan.tree;
  const answers = await Promise.allSettled(
    tree
      ? tree.roots.map((root) => rootStub(objects.aggregators, run, root).abort())
      : run.plan.shards.map((s) => shardStub(objects.shards, run, s.index).abort()),
  );
  return answers.every((a) => a.status === "fulfilled");
}

/**
 * Tells a stopping run's shards to stop, when stop-signal.ts says it is due, without
 * waiting for their answers: a shard may answer only once its last flush has reached the
 * coordinator, which may be out of its reach or restarting meanwhile (chaos flat seeds 89
 * and 172). `delivered` is called once every one has answered.
 */
export class ShardStopper {
  /** When the stop now on its way was sent; null when none is. */
  #sentAtMs: number | null = null;

  send(objects: RunObjects, run: RunRecord, nowMs: number, delivered: () => void): void {
    if (!stopSignalDue({ stopping: run.stopping !== null, delivered: run.stopDelivered === true, sentAtMs: this.#sentAtMs }, nowMs)) return;
    this.#sentAtMs = nowMs;
    void (async () => {
      try {
        if (await abortShards(objects, run)) delivered();
        else this.#sentAtMs = null; // someone did not answer: the next tick asks again
      } catch (error) {
        // The coordinator was reset while it waited (its storage is gone to it): the next instance sends the stop again.
        console.warn(`run ${run.runId}: stop not recorded as delivered: ${String(error)}`);
      }
    })();
  }
}

/** The watermark each named scenario's shard starts at: its scenario's start, in seconds. */
export function startingWatermarks(plan: Plan): Map<number, number> {
  return new Map((plan.scenarios ?? []).flatMap((s) => Array.from({ length: s.shardCount }, (_, i) => [s.firstShard + i, s.startMs / 1000] as const)));
}
