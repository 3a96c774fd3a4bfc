/**
 * What a scale run (scale-simulation.ts) reports, for the scale bench (scale-bench.ts) and
 * its test (scale-simulation.test.ts): the requests counted at every stage against the
 * schedule, the merged percentiles against the exact ones, the requests into each object
 * per virtual second, each object's own CPU, D1 rows and Durable Object storage rows, how
 * late each window reached D1 and, for an abort run, how long the abort took to reach
 * every shard. The figures are worked out in scale-figures.ts.
 */
import type { AggregationTree } from "../../core/plan/aggregation-tree.ts";
import type { Plan } from "../../core/plan/plan.ts";
import type { RunSpec } from "../../core/spec/run-spec.ts";
import type { ObjectMeter } from "./scale-meter.ts";

/** A figure for each kind of object of the run. */
export interface ByKind {
  readonly shards: number;
  readonly aggregators: number;
  readonly coordinator: number;
}

/** Counts of one stage of the path, and what the run scheduled. */
export interface RequestCounts {
  readonly scheduled: number;
  /** Iterations the shards started (each one request here). */
  readonly sent: number;
  /** What the target answered. */
  readonly answered: number;
  /** Completed requests in the windows the shards closed. */
  readonly inShardWindows: number;
  /** Completed requests in the coordinator's totals. */
  readonly merged: number;
  /** Completed requests in the D1 window rows. */
  readonly inD1: number;
  readonly dropped: number;
}

export interface Quantile {
  readonly q: number;
  readonly exactMs: number;
  readonly mergedMs: number;
  /** Within the histogram's bound: |merged − exact| ≤ exact × RELATIVE_ERROR (+ 1 µs of rounding). */
  readonly withinBound: boolean;
}

export interface ObjectLoad {
  readonly kind: ObjectMeter["kind"];
  readonly name: string;
  readonly requestsPerS: number;
}

/** A figure over an object's seconds: the median second and the busiest. */
export interface PerSecond {
  readonly median: number;
  readonly max: number;
}

export interface ScaleResult {
  readonly spec: RunSpec;
  readonly plan: Plan;
  readonly tree: AggregationTree | null;
  /** Seconds of schedule: while they last the run is "running"; after them come its final flushes. */
  readonly durationS: number;
  readonly counts: RequestCounts;
  readonly quantiles: readonly Quantile[];
  /**
   * The object with the most requests in one virtual second: `steady` before any of its
   * senders was done, `end` from the second the first one's final flush arrived.
   */
  readonly busiest: { readonly steady: ObjectLoad; readonly end: ObjectLoad };
  readonly coordinatorRequestsPerS: { readonly steady: number; readonly end: number };
  /** The coordinator's CPU by virtual second (here and below: the process's GC pauses taken out, see scale-meter.ts). */
  readonly coordinatorCpuMsPerS: PerSecond;
  /** Aggregators' CPU by virtual second (intake and ticks): the highest median and the highest second of any. */
  readonly aggregatorCpuMsPerS: PerSecond | null;
  /** Aggregator ticks (their own work: closing windows, storing them to pass up, checkpoints): the median and the longest. */
  readonly aggregatorTickMs: PerSecond | null;
  /** Aggregators' intake CPU per child window taken in (take(): log, merge, progress): the median flush's and the mean. */
  readonly mergeMsPerWindow: { readonly median: number; readonly mean: number } | null;
  readonly d1: {
    /** Rows of one window of the run (windows and histograms tables), the most of any window. */
    readonly rowsPerWindow: number;
    /** Rows sent to D1 in one virtual second, the most (the end writes every open window at once). */
    readonly rowsPerS: number;
    /** Shard rows updated at the end, and the most in one virtual second. */
    readonly shardRows: number;
    readonly shardRowsPerS: number;
    /** The most bound parameters of any statement (D1 allows 100). */
    readonly maxParams: number;
    /** Bytes bound into each table's rows, the whole run (text as UTF-8, a number 8): what D1 stores, before SQLite's own overhead. */
    readonly bytesWritten: { readonly windows: number; readonly histograms: number; readonly shards: number };
  };
  /**
   * Billed Durable Object requests the reporting path made, the whole run: shard invocations
   * (each engine run: the first, then one per hand-over), and the flushes and ticks into the
   * aggregators and into the coordinator (start, abort and API calls are not simulated).
   */
  readonly objectRequests: {
    readonly shardInvocations: number;
    readonly intoAggregators: number;
    readonly intoCoordinator: number;
    /** Of those into the coordinator, the reporters' flushes (the rest are its alarms). */
    readonly flushesIntoCoordinator: number;
  };
  /**
   * Every billed request into each kind of object, the whole run from its creation to its
   * clean-up: the reporting path's (above), the alarms a shard sends in, every RPC (create,
   * start, abort, clean-up, and a watching client's status and summary: scale-lifecycle.ts)
   * and the coordinator's clean-up alarm. Each is an invocation, so also an execution log
   * Workers Logs may keep (at head_sampling_rate 1: one each).
   */
  readonly requestsByKind: ByKind;
  /** Lines the objects' code wrote to the console while the run went (each a Workers Logs event of its own). */
  readonly consoleLines: number;
  /** From the end of the schedule to the last reporter's done at the coordinator, virtual ms. */
  readonly reportersDoneAfterScheduleMs: number;
  /** Durable Object storage rows written, by kind of object, the whole run (see each object's storageRowsWritten). */
  readonly storageRows: ByKind;
  /**
   * Durable Object storage bytes each kind of object held as the run ended (its storage before
   * it let go of it, issue 49: see each object's storageBytes). What is left once the run is
   * cleaned up is nothing (coordinator/run/run-cleanup.ts; test/workers/storage-cleanup.test.ts).
   */
  readonly storageBytesAtEnd: ByKind;
  /** The same once the run's clean-up has run (scale-lifecycle.ts cleanUpAfterEnd): what is left behind. */
  readonly storageBytesAfterCleanUp: ByKind;
  /** (window, region, step) cells written more than once (a part arrived after its window was written). */
  readonly lateCells: number;
  /** From a window's end to its rows in D1: the slowest, virtual ms. */
  readonly windowToD1Ms: number;
  /**
   * An abort run, from the abort at the coordinator: to the last shard told (it sends nothing
   * after), to the last shard drained (its requests in flight answered, or cut), and to
   * every final flush at the coordinator.
   */
  readonly abort: { readonly lastShardToldMs: number; readonly lastShardStoppedMs: number; readonly everythingInMs: number } | null;
  readonly wallMs: number;
  /** The simulating process's GC pauses, all of them. */
  readonly gcMs: number;
}
