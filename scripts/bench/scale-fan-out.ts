/**
 * How long a run's start takes to reach its last shard, down the aggregation tree
 * (core/plan/aggregation-tree.ts) or straight from the coordinator in a flat run: a model,
 * part measured and part assumed, for the scale bench (scale-bench.ts).
 *
 * Measured (performance.now(), best of three): what each sender computes before each of
 * its start RPCs leaves — the coordinator and each aggregator build their children's
 * starts (subtreeStart, core/schedule/shard-assignment.ts), a level-1 aggregator its shards' assignments
 * (shardAssignments) — and the serialisation of each message, taken as structuredClone's
 * time (serialise and deserialise, both booked to the sender). A sender issues its RPCs
 * one after another, so its k-th child's start leaves after k messages' work.
 *
 * Assumed: every edge (coordinator → root, aggregator → child, aggregator → shard) takes
 * `hopMs` one way; nothing else is modelled (storage writes and setAlarm at each receiver,
 * queueing in the network). The coordinator → root edge is cross-region for all but one
 * region, so with a uniform `hopMs` the figure is a floor for that first hop.
 *
 * An abort carries no payload: it reaches the last shard after (depth + 1) hops; the
 * simulation (scale-simulation.ts, `abortAtS`) runs one to see what follows.
 */
import { shardAssignments, subtreeStart, type AssignmentInput } from "../../core/schedule/shard-assignment.ts";

export interface StartFanOut {
  /** When the last shard's start arrives, ms after the coordinator began sending. */
  readonly lastShardMs: number;
  /** The measured CPU on that shard's path (the rest is hops). */
  readonly cpuOnPathMs: number;
  /** Edges on a shard's path: depth + 1. */
  readonly hops: number;
}

function measured<T>(work: () => T): [T, number] {
  const start = performance.now();
  const result = work();
  return [result, performance.now() - start];
}

/** One pass of the model (see the header). */
function startOnce(input: AssignmentInput, hopMs: number): StartFanOut {
  const tree = input.plan.tree;
  let last = { atMs: 0, cpuMs: 0 };
  const reached = (atMs: number, cpuMs: number) => {
    if (atMs > last.atMs) last = { atMs, cpuMs };
  };
  /** A level-1 node (or the flat coordinator) starting its shards, from `atMs` with `cpuMs` spent on the way. */
  const startShards = (run: AssignmentInput, atMs: number, cpuMs: number) => {
    const [assignments, planMs] = measured(() => shardAssignments(run));
    let spent = planMs;
    for (const a of assignments) {
      spent += measured(() => structuredClone(a))[1];
      reached(atMs + spent + hopMs, cpuMs + spent);
    }
  };
  if (!tree) {
    startShards(input, 0, 0);
    return { lastShardMs: last.atMs, cpuOnPathMs: last.cpuMs, hops: 1 };
  }
  const startNode = (run: AssignmentInput, index: number, atMs: number, cpuMs: number): void => {
    const node = tree.aggregators[index]!;
    if (node.level === 1) {
      startShards(run, atMs, cpuMs);
      return;
    }
    let spent = 0;
    for (const child of node.children) {
      const [message, ms] = measured(() => structuredClone(subtreeStart(run, child)));
      spent += ms;
      startNode(message.run, child, atMs + spent + hopMs, cpuMs + spent);
    }
  };
  let spent = 0;
  for (const root of tree.roots) {
    const [message, ms] = measured(() => structuredClone(subtreeStart(input, root)));
    spent += ms;
    startNode(message.run, root, spent + hopMs, spent);
  }
  return { lastShardMs: last.atMs, cpuOnPathMs: last.cpuMs, hops: tree.depth + 1 };
}

/** The start model, best of three passes (the first pays for compiling the code it runs). */
export function startFanOut(input: AssignmentInput, hopMs: number): StartFanOut {
  const passes = [startOnce(input, hopMs), startOnce(input, hopMs), startOnce(input, hopMs)];
  return passes.reduce((best, p) => (p.lastShardMs < best.lastShardMs ? p : best));
}
