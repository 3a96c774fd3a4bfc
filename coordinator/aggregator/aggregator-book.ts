/**
 * What an aggregator of a run's tree (core/plan/aggregation-tree.ts) keeps, and its
 * decisions, over its SQLite storage: the windows its children flushed, merged, and the
 * merged windows it passes up. The RunAggregator object is a thin shell over it; the scale
 * simulation (scripts/bench/scale-simulation.ts) runs the same code in Node.
 *
 * Exactly once through the tree, as at the coordinator, with the same pieces:
 * - a child's window is appended to the flush log (coordinator/merge/flush-log.ts), keyed by
 *   (child, window, part), in the turn it is merged and before the flush is acknowledged —
 *   the flushes of a quarter-second together, one row (coordinator/merge/intake-batch.ts):
 *   a window delivered twice is recognised and skipped; a restarted aggregator replays the
 *   rows not yet passed up into its open windows;
 * - a merged window is passed up under a part number of its own (a counter kept in the
 *   same storage), in the same turn as its log rows are marked as passed: the receiver
 *   dedups on (aggregator, window, part), so resending it after a restart counts it once,
 *   and a child's window that arrives after its second was passed up goes up as a new part.
 *
 * The aggregator's own watermark is its cut-off: every window below it has been passed up.
 */
import type { AggregatorPlan } from "../../core/plan/aggregation-tree.ts";
import { SHARD_ROWS_STAGGER_MS, type ChildFlush, type ShardTelemetry, type ShardWindow } from "../../core/run/protocol.ts";
import type { RunSpec } from "../../core/spec/types.ts";
import { shardRowStatement } from "../store/results-store.ts";
import { takeableBelow } from "../../core/run/run-lifecycle.ts";
import type { RunTotals } from "../../core/run/run-totals.ts";
import type { MetricStats } from "../../core/metrics/metric-stats.ts";
import { ChildProgress, shardsDoneUnder } from "../merge/child-progress.ts";
import { takeInFlushes } from "../merge/flush-intake.ts";
import { FlushLog, type TotalsCheckpoint } from "../merge/flush-log.ts";
import { OpenWindows } from "../merge/open-windows.ts";
import { afterEndMs } from "../../core/schedule/graceful-stop.ts";

/** One node of a run's tree as its aggregator keeps it (storage key "node"): its plan, and its run's timing. */
export interface AggregatorNode extends AggregatorPlan {
  readonly runId: string;
  readonly t0Ms: number;
  readonly durationMs: number;
  /** The latest of its shards' deadlines; with `flushGraceMs`, when it stops retrying. */
  readonly deadlineMs: number;
  readonly flushGraceMs: number;
}

/** After its shards' grace, each level up keeps trying to pass its windows up this much longer. */
export const GRACE_PER_LEVEL_MS = 15_000;

export { SHARD_ROWS_STAGGER_MS };

/** The node an aggregator keeps, from its plan and its run. */
export function aggregatorNode(
  planned: AggregatorPlan,
  run: { readonly runId: string; readonly t0Ms: number; readonly spec: Pick<RunSpec, "durationMs" | "timeoutMs" | "gracefulStopMs"> },
  flushGraceMs: number,
): AggregatorNode {
  return {
    runId: run.runId,
    index: planned.index,
    region: planned.region,
    level: planned.level,
    children: planned.children,
    parent: planned.parent,
    shardCount: planned.shardCount,
    t0Ms: run.t0Ms,
    durationMs: run.spec.durationMs,
    deadlineMs: run.t0Ms + run.spec.durationMs + afterEndMs(run.spec),
    flushGraceMs: flushGraceMs + planned.level * GRACE_PER_LEVEL_MS,
  };
}

/** What a finished aggregator does next: its shards' rows go to D1 (level 1) before its done goes up. */
export type FinishStep =
  /** Level 1, rows not yet due (SHARD_ROWS_STAGGER_MS): pass the windows up, come back then. */
  { readonly kind: "wait-for-rows"; readonly untilMs: number } | { readonly kind: "write-rows" } | { readonly kind: "send-done" };

/** The next step of `node`, finished at `finishedAtMs`, at `nowMs`. */
export function finishStep(node: AggregatorNode, rowsWritten: boolean, finishedAtMs: number, nowMs: number): FinishStep {
  if (node.level !== 1 || rowsWritten) return { kind: "send-done" };
  const dueAt = finishedAtMs + node.index * SHARD_ROWS_STAGGER_MS;
  return nowMs < dueAt ? { kind: "wait-for-rows", untilMs: dueAt } : { kind: "write-rows" };
}

/** How far windows have gone up, and the part number the next one takes (storage: aggregator_meta "passing"). */
interface Passing {
  readonly passedBelow: number;
  readonly nextPart: number;
}

/** What a flush brought in. */
export interface Intake {
  readonly accepted: number;
  readonly duplicates: number;
}

export class AggregatorBook {
  readonly #node: AggregatorNode;
  readonly #sql: SqlStorage;
  readonly #log: FlushLog;
  readonly #children: ChildProgress;
  readonly #open = new OpenWindows();
  #totals: RunTotals;
  /** Every window below this has been passed up. */
  #passedBelow: number;
  #nextPart: number;

  constructor(sql: SqlStorage, node: AggregatorNode) {
    this.#node = node;
    this.#sql = sql;
    this.#log = new FlushLog(sql);
    this.#children = new ChildProgress(sql);
    sql.exec("CREATE TABLE IF NOT EXISTS aggregator_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    const passing = JSON.parse(this.#meta("passing") ?? "null") as Passing | null;
    this.#passedBelow = passing?.passedBelow ?? 0;
    this.#nextPart = passing?.nextPart ?? 1;
    const checkpoint = this.#meta("totals");
    // Restored: the totals (checkpoint + newer rows) and every window not yet passed up.
    this.#totals = this.#log.restore(checkpoint ? (JSON.parse(checkpoint) as TotalsCheckpoint) : undefined, {
      addToTotals: (totals, child, window) => {
        for (const [step, wire] of window.steps) totals.addWire(child, node.region, step, wire);
      },
      reopen: (child, window) => this.#open.merge(child, node.region, window, null),
      unwritten: () => {}, // none: what an aggregator takes leaves in the same turn (closeDue)
    });
  }

  /** Takes in a child's flush at `nowMs`; throws for a sender that is not its child. */
  take(message: ChildFlush, nowMs: number): Intake {
    return this.takeAll([message], nowMs)[0]!;
  }

  /**
   * Takes in several children's flushes at `nowMs`, their new windows one log row (see
   * intake-batch.ts); what each brought, in order. Throws, taking nothing, for a sender that
   * is not its child.
   */
  takeAll(messages: readonly ChildFlush[], nowMs: number): Intake[] {
    for (const message of messages) this.assertChild(message.childIndex);
    const region = this.#node.region;
    const intakes = takeInFlushes(this.#log, this.#open, this.#totals, messages, () => region);
    this.#children.recordAll(messages, nowMs);
    return intakes.map(({ accepted, duplicates }) => ({ accepted, duplicates }));
  }

  /** Throws for a sender that is not one of this aggregator's children. */
  assertChild(index: number): void {
    if (!this.#node.children.includes(index)) throw new Error(`aggregator ${this.#node.index} has no child ${index}`);
  }

  get allChildrenDone(): boolean {
    return this.#children.doneCount === this.#node.children.length;
  }

  /** Every child done, or past the grace in which they could still report: pass everything up and end. */
  finished(nowMs: number): boolean {
    const node = this.#node;
    return this.allChildrenDone || nowMs > node.deadlineMs + node.flushGraceMs - GRACE_PER_LEVEL_MS;
  }

  /** The D1 statements of a level-1 aggregator's shards' rows, at `nowMs` (a flat run's coordinator writes them itself). */
  shardRowStatements(db: D1Database, nowMs: number): D1PreparedStatement[] {
    const node = this.#node;
    const elapsedS = Math.max(0.001, (Math.min(nowMs, node.t0Ms + node.durationMs) - node.t0Ms) / 1000);
    return node.children.map((index) => {
      const { stats, telemetry } = this.child(index);
      return shardRowStatement(db, node.runId, index, stats, telemetry, elapsedS);
    });
  }

  /** Every window below this has been passed up (what this aggregator reports as its watermark). */
  get watermarkS(): number {
    return this.#passedBelow;
  }

  /**
   * The merged windows that may go up at `nowMs` (all of them once every child is done, or
   * `everything`), each under a fresh part number, their log rows marked as passed. The
   * caller stores them in the same turn (nothing here awaits), so a crash keeps both or neither.
   */
  closeDue(nowMs: number, everything = false): ShardWindow[] {
    const node = this.#node;
    const everyoneDone = everything || this.allChildrenDone;
    const running = node.children.filter((c) => !this.#children.isDone(c));
    // Never below what already went up (flush-log.ts: the mark only rises).
    const cutoff = Math.max(
      this.#log.takenBelow,
      takeableBelow({ watermarks: running.map((c) => this.#children.watermark(c)), t0Ms: node.t0Ms, nowMs, everyoneDone }),
    );
    const closed = this.#open.takeBelow(cutoff, String);
    const rose = cutoff > this.#passedBelow && cutoff !== Number.MAX_SAFE_INTEGER;
    if (rose) this.#passedBelow = cutoff;
    if (!closed) {
      if (rose) this.#putPassing();
      return [];
    }
    this.#log.markWrittenBelow(cutoff);
    const byWindow = new Map<number, { steps: Array<readonly [number, ReturnType<MetricStats["toWire"]>]>; series: ShardWindow["series"] & object[] }>();
    const at = (w: number) => byWindow.get(w) ?? byWindow.set(w, { steps: [], series: [] }).get(w)!;
    for (const cell of closed.cells) at(cell.windowS).steps.push([cell.stepIndex, cell.stats.toWire()]);
    for (const { shard: _child, windowS, ...point } of closed.series) at(windowS).series.push(point);
    const windows = [...byWindow].map(
      ([windowS, { steps, series }]): ShardWindow => ({ windowS, part: this.#nextPart++, steps, ...(series.length ? { series } : {}) }),
    );
    this.#putPassing();
    this.#open.forgetIterationsBefore(closed.newestWindowS);
    return windows;
  }

  /** Checkpoints the totals and trims the log rows both in the checkpoint and passed up. */
  checkpoint(): void {
    this.#log.checkpoint(this.#totals, (c) => this.#putMeta("totals", JSON.stringify(c)));
  }

  /** What this aggregator's flushes report: its children's telemetry, summed. */
  telemetry(): ShardTelemetry {
    const colos = new Set<string>();
    let invocations = 0;
    let restarts = 0;
    let subrequests = 0;
    let peakInFlight = 0;
    let clockResolutionUs: number | null = null;
    let behindCloudflare = false;
    let shardsDone = 0;
    for (const child of this.#node.children) {
      const t = this.#children.telemetry(child);
      if (!t) continue;
      for (const colo of t.colo.split("+")) colos.add(colo);
      invocations += t.invocations;
      restarts += t.restarts;
      subrequests += t.subrequests;
      peakInFlight += t.peakInFlight;
      if (t.clockResolutionUs != null) clockResolutionUs = Math.max(clockResolutionUs ?? 0, t.clockResolutionUs);
      behindCloudflare ||= t.behindCloudflare ?? false;
      shardsDone += shardsDoneUnder(this.#children.isDone(child), t);
    }
    return {
      region: this.#node.region,
      colo: colos.size ? [...colos].sort().join("+") : "unknown",
      invocations,
      restarts,
      subrequests,
      peakInFlight,
      clockResolutionUs,
      behindCloudflare,
      shards: this.#node.shardCount,
      shardsDone,
    };
  }

  /** A child's totals and last telemetry (a level-1 aggregator's children are shards: their D1 rows). */
  child(index: number): { stats: MetricStats; telemetry: ShardTelemetry | null } {
    return { stats: this.#totals.shard(index), telemetry: this.#children.telemetry(index) };
  }

  /** The cut-off and the part counter move together each tick: one row. */
  #putPassing(): void {
    const passing: Passing = { passedBelow: this.#passedBelow, nextPart: this.#nextPart };
    this.#putMeta("passing", JSON.stringify(passing));
  }

  #meta(key: string): string | null {
    return this.#sql.exec<{ value: string }>("SELECT value FROM aggregator_meta WHERE key = ?", key).toArray()[0]?.value ?? null;
  }

  #putMeta(key: string, value: string): void {
    this.#sql.exec("INSERT INTO aggregator_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", key, value);
  }
}
