/**
 * RunAggregator: one Durable Object per node of a run's aggregation tree
 * (core/plan/aggregation-tree.ts), placed in its region. It starts its children (shards,
 * or aggregators of the level below), takes their window flushes, merges them exactly and
 * passes the merged windows (one per step) up as its cut-off passes them — at most once a
 * tick; two windows every other tick in `npm run bench -- scale`, as its shards write every
 * fourth window — to its parent aggregator, or, at a region's root, to the RunCoordinator,
 * and it passes an abort down. So no object of a run hears from more than one aggregator's
 * fan-in of senders a second.
 *
 * The object is thin: what it keeps and decides is aggregator-book.ts; sending the merged
 * windows up (stored first, deleted once acknowledged, a final flush retried until its
 * grace ends) is the shards' own WindowFlusher. At the end a level-1 aggregator writes its
 * shards' rows to D1, which the coordinator of a flat run does itself.
 *
 * Once its parent has acknowledged its done it deletes its storage but a tombstone
 * (aggregator-end.ts), and once the run is final and in D1 its coordinator has it delete
 * that too, passing the clean-up down to its children (cleanUp).
 *
 * RPC surface: start(), flush(), abort(), inspect(), cleanUp().
 */
import { systemClock } from "../../workers/shard/engine-types.ts";
import { DurableObject } from "cloudflare:workers";
import { aggregatorName, type FlushAck, type ChildFlush, type ShardWindow } from "../../core/run/protocol.ts";
import { shardAssignments, subtreeStart, type TreeStart } from "../../core/schedule/shard-assignment.ts";
import type { Env, ObjectNamespaces } from "../../workers/env.ts";
import type { LoadShard } from "../../workers/shard/load-shard.ts";
import { keyedPendingWindows, WindowFlusher, windowKey, type FlushReceiver, type FlushRoute } from "../../workers/shard/window-flusher.ts";
import { CHECKPOINT_EVERY_MS, TICK_MS } from "../merge/ticks.ts";
import { IntakeBatch } from "../merge/intake-batch.ts";
import { AggregatorBook, aggregatorNode, finishStep, GRACE_PER_LEVEL_MS, type AggregatorNode, type Intake } from "./aggregator-book.ts";
import { aggregatorTombstone, keepAggregatorTombstone, LATE_FLUSH_ACK, type TreeCleanUp } from "./aggregator-end.ts";
import { deleteEverything } from "../../workers/shard/shard-end.ts";

type AggregatorEnv = Env & ObjectNamespaces<FlushReceiver, LoadShard, RunAggregator>;

/** Whether the shard rows of a level-1 aggregator are in D1, and when it finished (storage keys). */
const SHARD_ROWS_WRITTEN = "shardRowsWritten";
const FINISHED_AT = "finishedAt";

export class RunAggregator extends DurableObject<AggregatorEnv> {
  #node: AggregatorNode | null | undefined;
  #book: AggregatorBook | null = null;
  #lastCheckpointMs = 0;
  /** The alarm was moved up for the end, every child being done. */
  #endArmed = false;
  /** Its storage was let go (aggregator-end.ts): nothing this instance still runs may write it again. */
  #letGo = false;
  /** Children's flushes, taken in a quarter-second at a time: one log row (intake-batch.ts). */
  readonly #intake = new IntakeBatch<ChildFlush, Intake>((messages) => this.#bookOf(this.#nodeRecord()!).takeAll(messages, Date.now()), clock.sleep);
  readonly #flusher = new WindowFlusher({
    pending: keyedPendingWindows(this.ctx.storage),
    clock,
    route: () => {
      const node = this.#nodeRecord();
      return node ? this.#route(node) : undefined;
    },
    progress: () => {
      const book = this.#bookOf(this.#nodeRecord()!);
      return { finished: book.finished(Date.now()), watermarkS: book.watermarkS, telemetry: book.telemetry() };
    },
    stopEngine: () => this.#setStopping(),
  });

  /** Stores its node, starts every child and arms its tick. Idempotent: a repeated start starts children not yet started. */
  async start(input: TreeStart): Promise<{ ok: true }> {
    const tree = input.run.plan.tree;
    const planned = tree?.aggregators[input.index];
    if (!tree || !planned) throw new Error(`run ${input.run.runId} has no aggregator ${input.index}`);
    let node = this.#nodeRecord();
    const holds = node?.runId ?? aggregatorTombstone(this.ctx.storage)?.runId;
    if (holds && holds !== input.run.runId) throw new Error(`aggregator already belongs to run ${holds}`);
    const fresh = aggregatorNode(planned, input.run, input.run.flushGraceMs);
    // Its run ended for it (a tombstone, or cleaned up, or past its grace): a late start recreates nothing.
    if (!node && (holds !== undefined || this.#letGo || Date.now() > fresh.deadlineMs + fresh.flushGraceMs)) return { ok: true };
    if (!node) {
      node = fresh;
      this.ctx.storage.kv.put("node", node);
      this.#node = node;
      await this.ctx.storage.setAlarm(node.t0Ms + TICK_MS);
    }
    const started = await Promise.allSettled(
      node.level === 1
        ? shardAssignments(input.run).map((a) => this.#shard(node, a.shard.index).start(a))
        : node.children.map((child) => this.#child(node, child).start(subtreeStart(input.run, child))),
    );
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw new Error(`aggregator ${node.index}: a child did not start: ${String((failed as PromiseRejectedResult).reason)}`);
    return { ok: true };
  }

  /** A child's windows. Idempotent per (child, window, part). */
  async flush(message: ChildFlush): Promise<FlushAck> {
    const node = this.#nodeRecord();
    // A child late for an aggregator that has passed everything up and ended: nothing can go up any more.
    if (!node && aggregatorTombstone(this.ctx.storage)?.runId === message.runId) return LATE_FLUSH_ACK;
    if (!node || node.runId !== message.runId) throw new Error(`unknown run ${message.runId}`);
    const book = this.#bookOf(node);
    book.assertChild(message.childIndex);
    const { accepted, duplicates } = await this.#intake.add(message);
    // Every child done: pass everything up now rather than at the next tick (once: each
    // setAlarm() is a row written, and the last batch may hold many children's done).
    if (book.allChildrenDone && !this.#endArmed) {
      this.#endArmed = true;
      await this.ctx.storage.setAlarm(Date.now());
    }
    return { accepted, duplicates, stop: this.ctx.storage.kv.get<boolean>("stopping") ?? false };
  }

  /** Passes an abort down to every child; each child stops within seconds and flushes what it measured. */
  async abort(): Promise<{ ok: true }> {
    const node = this.#nodeRecord();
    if (!node) return { ok: true };
    this.#setStopping();
    await Promise.allSettled(node.children.map((child) => (node.level === 1 ? this.#shard(node, child) : this.#child(node, child)).abort()));
    return { ok: true };
  }

  /** State for tests and diagnostics; once it ended, as its tombstone keeps it. */
  async inspect(): Promise<{ node: AggregatorNode | null; watermarkS: number; allChildrenDone: boolean; pendingWindows: number; alarm: number | null }> {
    const node = this.#nodeRecord();
    const book = node ? this.#bookOf(node) : null;
    const ended = book ? undefined : aggregatorTombstone(this.ctx.storage);
    return {
      node,
      watermarkS: book?.watermarkS ?? ended?.watermarkS ?? 0,
      allChildrenDone: book?.allChildrenDone ?? ended?.allChildrenDone ?? false,
      pendingWindows: this.#letGo ? 0 : this.#flusher.storedCount(),
      alarm: await this.ctx.storage.getAlarm(),
    };
  }

  /**
   * The run is final and in D1 (its coordinator, or its parent, says so): every child is
   * asked to clean up, then nothing of this aggregator is kept. The tree comes with the
   * request, so an aggregator already emptied still reaches its children. `cleaned`: every
   * child answered.
   */
  async cleanUp(input: TreeCleanUp): Promise<{ cleaned: boolean }> {
    const planned = input.aggregators[input.index];
    if (!planned) throw new Error(`run ${input.runId} has no aggregator ${input.index}`);
    const holds = this.#nodeRecord()?.runId ?? aggregatorTombstone(this.ctx.storage)?.runId;
    if (holds !== undefined && holds !== input.runId) throw new Error(`aggregator belongs to run ${holds}, not ${input.runId}`);
    const node = { runId: input.runId, region: planned.region };
    const answers = await Promise.allSettled(
      planned.level === 1
        ? planned.children.map((i) => this.#shard(node, i).cleanUp(input.runId))
        : planned.children.map((i) => this.#child(node, i).cleanUp({ ...input, index: i })),
    );
    await this.#letGoOf(() => deleteEverything(this.ctx.storage));
    return { cleaned: answers.every((a) => a.status === "fulfilled" && a.value.cleaned) };
  }

  /** One tick: pass up what may go, and end once every child is done (or their grace is over). */
  override async alarm(): Promise<void> {
    const node = this.#nodeRecord();
    if (!node) return;
    const book = this.#bookOf(node);
    this.#intake.takeNow(); // what has arrived is in before the cut-off
    const now = Date.now();
    const finished = book.finished(now);
    this.#passUp(book.closeDue(now, finished));
    if (now - this.#lastCheckpointMs >= CHECKPOINT_EVERY_MS) {
      book.checkpoint();
      this.#lastCheckpointMs = now;
    }
    if (!finished) {
      await this.ctx.storage.setAlarm(now + TICK_MS);
      await this.#flusher.flush(false);
      return;
    }
    // The run ends with every shard's row in place: they go before the done (finishStep).
    let finishedAt = this.ctx.storage.kv.get<number>(FINISHED_AT);
    if (finishedAt === undefined) this.ctx.storage.kv.put(FINISHED_AT, (finishedAt = now));
    const step = finishStep(node, this.ctx.storage.kv.get<boolean>(SHARD_ROWS_WRITTEN) ?? false, finishedAt, Date.now());
    if (step.kind === "wait-for-rows") {
      await this.ctx.storage.setAlarm(step.untilMs);
      await this.#flusher.flush(false); // the merged windows go up meanwhile
      return;
    }
    if (step.kind === "write-rows" && !(await this.#writeShardRows(node, book, Date.now()))) return;
    await this.#flusher.flush(true);
    // Its done acknowledged, its parent holds all it merged: only a tombstone is kept (aggregator-end.ts).
    if (this.#flusher.doneAcknowledged && !this.#letGo) {
      const ended = { runId: node.runId, watermarkS: book.watermarkS, allChildrenDone: book.allChildrenDone };
      await this.#letGoOf(() => keepAggregatorTombstone(this.ctx.storage, ended));
    }
  }

  /** Deletes the storage by `deletion`, and what this instance holds of it, never to write it again. */
  async #letGoOf(deletion: () => Promise<void>): Promise<void> {
    this.#letGo = true;
    await deletion();
    this.#node = null;
    this.#book = null;
  }

  /** Stores merged windows to pass up, in the turn the book marked them (see aggregator-book.ts). */
  #passUp(windows: readonly ShardWindow[]): void {
    if (this.#letGo) return;
    for (const window of windows) {
      const key = windowKey(window);
      this.ctx.storage.kv.put(key, window);
      this.#flusher.stored(key, window);
    }
  }

  /** The D1 rows of this aggregator's shards, when finishStep says (aggregator-book.ts). */
  /**
   * False when the write failed and is retried (its alarm armed); after its grace the rows are
   * given up, and the done goes up without them.
   */
  async #writeShardRows(node: AggregatorNode, book: AggregatorBook, nowMs: number): Promise<boolean> {
    const db = this.env.DB;
    try {
      await db.batch(book.shardRowStatements(db, nowMs));
      this.ctx.storage.kv.put(SHARD_ROWS_WRITTEN, true);
      return true;
    } catch (error) {
      const retry = nowMs < node.deadlineMs + node.flushGraceMs - GRACE_PER_LEVEL_MS;
      console.error(
        `aggregator ${node.index}: shard rows not written${retry ? ", retrying" : ", given up"}: ${error instanceof Error ? error.message : String(error)}`,
      );
      if (!retry) return true;
      await this.ctx.storage.setAlarm(nowMs + 5_000);
      return false;
    }
  }

  #route(node: AggregatorNode): FlushRoute {
    const receiver = node.parent === null ? this.env.RUN_COORDINATOR.get(this.env.RUN_COORDINATOR.idFromName(node.runId)) : this.#child(node, node.parent);
    return { runId: node.runId, senderIndex: node.index, receiver, giveUpAtMs: node.deadlineMs + node.flushGraceMs, sender: `aggregator ${node.index}` };
  }

  #setStopping(): void {
    if (!this.#letGo) this.ctx.storage.kv.put("stopping", true);
  }

  #shard(node: Pick<AggregatorNode, "runId" | "region">, index: number) {
    const ns = this.env.LOAD_SHARD;
    return ns.get(ns.idFromName(`${node.runId}/${index}`), { locationHint: node.region as DurableObjectLocationHint });
  }

  /** Another aggregator of the same run (a child or the parent), in the same region. */
  #child(node: Pick<AggregatorNode, "runId" | "region">, index: number) {
    const ns = this.env.RUN_AGGREGATOR;
    return ns.get(ns.idFromName(aggregatorName(node.runId, index)), { locationHint: node.region as DurableObjectLocationHint });
  }

  #nodeRecord(): AggregatorNode | null {
    if (this.#node === undefined) this.#node = this.ctx.storage.kv.get<AggregatorNode>("node") ?? null;
    return this.#node;
  }

  #bookOf(node: AggregatorNode): AggregatorBook {
    // Its storage is gone: a book now would create its tables again in it.
    if (this.#letGo) throw new Error(`aggregator of run ${node?.runId}: its run has ended here`);
    return (this.#book ??= new AggregatorBook(this.ctx.storage.sql, node));
  }
}

const clock = systemClock;
