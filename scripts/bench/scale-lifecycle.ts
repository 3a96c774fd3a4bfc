/**
 * The parts of a run's life around its reporting path, for the scale simulation
 * (scale-simulation.ts): the calls that start its objects, a client watching it, an abort
 * passed down the tree, and its clean-up once it is final (issue 49). Each is a billed
 * request into the object it reaches and an invocation Workers Logs may log, so the
 * simulation counts them beside the flushes and ticks, as the plan prices them
 * (core/plan/object-requests.ts objectRequestsByKind).
 *
 * They mirror RunCoordinator and RunAggregator: create() then start() down the tree
 * (run-start.ts; its timing is scale-fan-out.ts's), a `GET /v1/runs/:id?wait=` asking the
 * coordinator's status once a second until the run is final and then its summary
 * (http/api.ts waitForEnd), abort() down the edges (run-stop.ts), and the clean-up
 * CLEAN_UP_AFTER_MS after the end through the roots, or straight to the shards of a flat run
 * (run-cleanup.ts cleanUpObjects), the coordinator's own storage last.
 */
import type { AggregationTree } from "../../core/plan/aggregation-tree.ts";
import { CLEAN_UP_AFTER_MS } from "../../coordinator/run/run-cleanup.ts";
import type { SimAggregator } from "./scale-aggregator.ts";
import type { SimCoordinator } from "./scale-coordinator.ts";
import type { SimContext } from "./scale-objects.ts";
import type { SimShard } from "./scale-shard.ts";

/** The objects of a run's reporting path: the coordinator, the plan's aggregators (if any) and every shard. */
export interface SimObjects {
  readonly coordinator: SimCoordinator;
  readonly tree: AggregationTree | null;
  readonly aggregators: readonly SimAggregator[];
  readonly shards: readonly SimShard[];
}

/** The API's create() into the coordinator, and one start() into every aggregator and shard. */
export function startObjects({ coordinator, aggregators, shards }: SimObjects): void {
  coordinator.create();
  for (const a of aggregators) a.start();
  for (const s of shards) s.start();
}

/** A client holding `?wait=`: the coordinator's status once a second from the run's creation until it is final, then its summary. */
export async function watchRun(sim: SimContext, coordinator: SimCoordinator): Promise<void> {
  while (!coordinator.finished) {
    coordinator.answerApi();
    await sim.time.sleep(1_000);
  }
  coordinator.answerApi(); // the summary
}

/** Passes `call` down the tree from the coordinator, one `hopMs` an edge, as an abort or a clean-up goes: to every aggregator and every shard. */
async function downTheTree(
  sim: SimContext,
  { tree, aggregators, shards }: SimObjects,
  atAggregator: (a: SimAggregator) => void,
  atShard: (s: SimShard) => void,
): Promise<void> {
  const hop = () => sim.time.sleep(sim.hopMs);
  const down = async (index: number): Promise<void> => {
    await hop();
    atAggregator(aggregators[index]!);
    const node = tree!.aggregators[index]!;
    await Promise.all(
      node.level === 1 ? node.children.map(async (shard) => (await hop(), atShard(shards[shard]!))) : node.children.map((child) => down(child)),
    );
  };
  if (tree) await Promise.all(tree.roots.map((root) => down(root)));
  else await Promise.all(shards.map(async (s) => (await hop(), atShard(s))));
}

/**
 * The coordinator's abort at `atMs`, passed down as RunCoordinator and RunAggregator pass
 * it: each receiver stops its own part and calls its children, one `hopMs` per edge.
 * Resolves with when the last shard was told (virtual ms).
 */
export async function abortDown(sim: SimContext, atMs: number, objects: SimObjects): Promise<number> {
  await sim.time.sleep(atMs - sim.time.now);
  objects.coordinator.abort();
  let lastToldMs = 0;
  await downTheTree(
    sim,
    objects,
    (a) => a.abort(),
    (s) => {
      s.abort();
      lastToldMs = sim.time.now;
    },
  );
  return lastToldMs;
}

/** The clean-up finishRun arms: CLEAN_UP_AFTER_MS after the end, every aggregator and shard deletes its storage, the coordinator last. */
export async function cleanUpAfterEnd(sim: SimContext, objects: SimObjects): Promise<void> {
  await sim.time.sleep(CLEAN_UP_AFTER_MS);
  objects.coordinator.cleanUpAlarm();
  await downTheTree(
    sim,
    objects,
    (a) => a.cleanUp(),
    (s) => s.cleanUp(),
  );
  objects.coordinator.deleteStorage();
}
