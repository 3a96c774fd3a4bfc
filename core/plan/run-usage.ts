/**
 * The capacity model's second half: what a planned run uses of the platform, checked
 * against every documented limit by core/plan/limit-checks.ts. The plan
 * (core/plan/plan.ts) decides how many shards, where, and how they report (its aggregation
 * tree, core/plan/aggregation-tree.ts); this module counts what those shards, the
 * aggregators, the RunCoordinator, D1 and R2 will do for the run's length, level by level,
 * so that `edgeload plan` can show it, core/plan/run-cost.ts can price it, and a run that
 * would break a limit is known before any load is sent.
 *
 * The model, per second of run (the window is one second):
 * - each shard invocation (an alarm) sends at most the plan's iteration budget, then hands
 *   over: invocations = 1 + ⌈its iterations / budget⌉ per shard;
 * - each shard writes its state to its own SQLite storage, holding its closed windows until
 *   they are acknowledged — 1 row a write, 2 when its flow keeps state of its own
 *   (refresh-token families), no reads (its windows are mirrored in memory) — then sends
 *   those windows to its parent, the coordinator when the run is flat (at most one fan-in
 *   of shards), else its level-1 aggregator. In a flat run it writes and sends each window,
 *   one a second; in a run with a tree it holds them and writes and sends every
 *   WINDOWS_PER_WRITE_IN_A_TREE-th (every fourth), at its own phase, because every write is
 *   a billed row (core/schedule/shard-assignment.ts; workers/shard/shard-state.test.ts pins
 *   when). Its flushes, each a billed request, are counted as sent (object-requests.ts);
 * - each aggregator logs what its children flush a quarter-second at a time (1 read a child
 *   window when merged), ticks once a second, checkpoints every 5 s and passes its merged
 *   windows (every step in them) up through its outbox as its cut-off rises (1 read a window
 *   to send it), two at a time, every other second (receiver-rows.ts,
 *   AGGREGATOR_FLUSHES_PER_S); object-requests.ts counts those flushes and the ticks, and
 *   receiver-rows.ts the rows it writes, both held to what the simulated objects did by
 *   scripts/bench/scale-simulation.test.ts;
 * - the coordinator hears from the reporters (the region roots, else every shard), ticks
 *   once a second and logs what they flush (receiver-rows.ts counts its rows too);
 * - start travels down the same edges, one RPC per edge (coordinator → roots → … → shards),
 *   and so does the clean-up once the run is final and in D1; an abort does too, uncounted:
 *   the run it stops costs less than the run planned (object-requests.ts counts every
 *   request by kind of object, and why);
 * - D1 gets at most regions × steps × (1 window row + 6 histogram rows + custom trends)
 *   rows a second, in multi-row INSERTs of 5 (windows) and 10 (histograms) rows; the
 *   coordinator inserts the shards' rows when the run is created (25 a statement), and at
 *   the end each shard's row is updated once — by its level-1 aggregator (one batch of at
 *   most a fan-in of UPDATEs), or by the coordinator when the run is flat;
 * - someone watching the run costs the coordinator a request a second, from its creation
 *   until it is final: a CI job's
 *   `GET /v1/runs/:id?wait=` asks it once a second while it holds the answer, and a
 *   polling client does the same; `edgeload run` follows the live event stream instead
 *   (one request, its events sent on the coordinator's own tick) and polls only when the
 *   stream is refused, so the model prices the costlier of the two; plus creating the run
 *   and reading its summary;
 * - each shard reads its seed set (and a script run its bundle) from R2 once per object
 *   instance, within its warm-up second before t0;
 * - a k6 script run calls its Dynamic Workers (dynamic-worker-usage.ts);
 * - Workers Logs keeps an event for each invocation it samples (the objects' requests and
 *   alarms, the API's requests, the Dynamic Worker calls), at the deployment's
 *   `head_sampling_rate`;
 * - D1 keeps the run's rows for the results retention, and its objects hold their storage
 *   while it runs (storage-usage.ts).
 * Objects are billed for duration while active: shards, aggregators and the coordinator
 * are active for the whole run plus a grace of a few seconds.
 */
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { WARM_UP_LEAD_MS, WINDOWS_PER_WRITE_IN_A_TREE } from "../schedule/shard-assignment.ts";
import { SUBREQUEST_RESERVE, type Plan } from "./plan.ts";
import { requestsPerIteration } from "./closed-model.ts";
import { concurrentSockets, concurrentStreams } from "./held-connections.ts";
import type { RunSpec } from "../spec/types.ts";
import { reportersOf, type AggregationTree } from "./aggregation-tree.ts";
import { aggregatorRowsWritten, coordinatorRowsWritten as receiverCoordinatorRows } from "./receiver-rows.ts";
import { longestClosedInvocationMs, longestInvocationMs } from "./wall-time.ts";
import { DEFAULT_RESULTS_RETENTION_DAYS, DURABLE_OBJECT_BILLED_GB, WORKERS_LOGS_HEAD_SAMPLING_RATE } from "./cloudflare-pricing.ts";
import { dynamicWorkerUsage, type DynamicWorkerUsage } from "./dynamic-worker-usage.ts";
import { objectRequestsByKind, reportingEndLagS, reportingRequests, statusPolls, type ObjectRequestsByKind } from "./object-requests.ts";
import { storageUsage } from "./storage-usage.ts";
import type { AggregatorUsage, RunUsage, UsageOptions } from "./run-usage-types.ts";

export type { AggregatorUsage, RunUsage, UsageOptions } from "./run-usage-types.ts";
import { TRENDS } from "../metrics/metric-stats.ts";

/** Seconds objects stay active after the last window: final flushes, the summary. */
const END_GRACE_S = 5;
/**
 * Storage rows (each billed; a setAlarm() is one too). A shard (workers/shard/load-shard.ts)
 * writes its state with each closed window — every fourth in a run with a tree,
 * WINDOWS_PER_WRITE_IN_A_TREE — (and a flow's own state, if any, beside it); at
 * start its assignment, its state, its alarm and the warm-up's state; per invocation its
 * state as it starts and as it ends, and its alarm set (a hand-over) or deleted; at the end
 * its assignment again, its secrets removed, and the alarm that guards its final flush.
 */
const SHARD_ROWS_WRITTEN_AT_START_AND_END = 6;
const SHARD_ROWS_WRITTEN_PER_INVOCATION = 3;
const SHARD_ROWS_READ_PER_S = 0;
const AGGREGATOR_ROWS_READ_PER_CHILD_WINDOW = 1;
/** Aggregator outbox rows read per forwarded window: once, to send it. */
const AGGREGATOR_ROWS_READ_PER_FORWARD = 1;
/**
 * CPU an aggregator spends taking in one child window (logging it, merging every step's
 * counters and histograms): 0.053–0.064 ms median, 0.092 ms mean at the most, measured by
 * `npm run bench -- scale` (the real AggregatorBook in Node on the 2-core development
 * machine, 35,000–1,000,000/s), rounded up.
 */
export const AGGREGATOR_MERGE_CPU_MS_PER_WINDOW = 0.1;
/** D1 rows per multi-row INSERT (100 bound parameters / columns): windows 18, histograms 10, shards 4. */
const WINDOW_ROWS_PER_STATEMENT = 5;
const HISTOGRAM_ROWS_PER_STATEMENT = 10;
export const SHARD_ROWS_PER_STATEMENT = 25;
/** The coordinator's own statements in its create and end batches: the run's row. */
const RUN_ROW_STATEMENTS = 1;
/** A Worker request of the API (auth, forward to the coordinator): about a millisecond of CPU. */
const API_CPU_MS_PER_REQUEST = 1;
/** Counts what a planned run uses (see the model in the header). */
export function estimateUsage(spec: RunSpec, plan: Plan, options: UsageOptions = {}): RunUsage {
  const shards = plan.shards.length;
  const durationS = Math.ceil(spec.durationMs / 1000);
  const activeS = durationS + END_GRACE_S;
  const windows = durationS + 1; // windows each child closes, one a second and the last one (rows read once each)
  const work = shardWork(spec, plan);
  const d1PerS = d1WindowWritesPerS(spec, plan);
  const tree = plan.tree ?? null;
  const reporters = reportersOf(plan).length;
  const shape = { tree, shards, durationS, expectedLatencyMs: spec.expectedLatencyMs, sendingInvocationsPerShard: work.invocationsPerShard };
  const reporting = reportingRequests(shape);
  const watched = options.watched !== false;
  const requestsByKind = objectRequestsByKind(shape, reporting, watched);
  const apiRequests = 2 + statusPolls(reporting, watched); // create, summary, polls
  const durableObjectRequests = requestsByKind.shards + requestsByKind.coordinator;
  const seeded = Boolean(spec.scenario?.seed ?? spec.data?.seed);
  const r2ReadsPerShard = (seeded ? 1 : 0) + (spec.script ? 1 : 0);

  const shardRowsWritten = shardRowsWrittenOf(spec, tree !== null, shards, windows, work);
  const ticks = { all: reporting.coordinatorTicks, afterSchedule: Math.ceil(reportingEndLagS(tree, spec.expectedLatencyMs)) };
  const coordinatorRowsWritten = receiverCoordinatorRows(tree, reporters, windows, ticks);
  const d1RowsWritten = d1PerS.d1RowsPerS * durationS + 2 * shards + 4; // windows + shards rows (insert, update) + run row and its updates
  const aggregators = aggregatorUsage(tree, shards, reporters, windows, activeS, requestsByKind.aggregators);
  const dynamicWorker = dynamicWorkerOf(spec, plan, work);
  const logsSamplingRate = options.logsSamplingRate ?? WORKERS_LOGS_HEAD_SAMPLING_RATE;
  const runRowBytes = byteLength(JSON.stringify(spec)) + byteLength(JSON.stringify(plan));
  return {
    durationS,
    shards,
    reporters,
    requests: work.requests,
    shardInvocations: work.shardInvocations,
    durableObjectRequests,
    durableObjectGbSeconds: (shards + 1) * activeS * DURABLE_OBJECT_BILLED_GB,
    durableObjectRowsWritten: shardRowsWritten + coordinatorRowsWritten,
    shardRowsWritten,
    coordinatorRowsWritten,
    durableObjectRowsRead: shards * durationS * SHARD_ROWS_READ_PER_S + reporters * windows,
    aggregators,
    d1RowsWritten,
    // One full read of the stored rows (the summary, a query or the report) is the estimate.
    d1RowsRead: d1RowsWritten,
    r2Reads: shards * r2ReadsPerShard,
    workersRequests: apiRequests,
    workersCpuMs: apiRequests * API_CPU_MS_PER_REQUEST,
    dynamicWorker,
    reporting,
    requestsByKind,
    logEventsByKind: logEventsOf(requestsByKind, logsSamplingRate),
    // Every invocation of an object, of the API Worker and of a Dynamic Worker is an execution log.
    workersLogsEvents: (durableObjectRequests + aggregators.requests + apiRequests + dynamicWorker.calls) * logsSamplingRate,
    logsSamplingRate,
    storage: storageUsage({
      durationS,
      activeS,
      requests: work.requests,
      regions: new Set(plan.shards.map((s) => s.region)).size,
      steps: spec.steps.length,
      d1RowsPerS: d1PerS.d1RowsPerS,
      shards,
      aggregators: aggregators.count,
      windowsHeldPerShard: tree ? WINDOWS_PER_WRITE_IN_A_TREE : 1,
      runRowBytes,
      specBytes: byteLength(JSON.stringify(spec)),
      reporters,
      retentionDays: options.resultsRetentionDays ?? DEFAULT_RESULTS_RETENTION_DAYS,
      screenshots: options.screenshots ?? 0,
    }),
    peak: {
      ...shardPeak(spec, plan, work, durationS, options.cpuMsPerRequest ?? 0.6),
      ...receiverPeak(tree, reporters, watched),
      ...d1PerS,
      ...d1Batches(tree, shards),
      runRowBytes,
      r2ReadsPerSAtStart: (shards * r2ReadsPerShard) / (WARM_UP_LEAD_MS / 1000),
    },
  };
}

/** A k6 script run's Dynamic Workers (its own script, or its named scenarios' shared bundle); none for a spec. */
function dynamicWorkerOf(spec: RunSpec, plan: Plan, work: ShardWork): DynamicWorkerUsage {
  const script = spec.script ?? spec.scenarios?.find((s) => s.spec.script)?.spec.script;
  if (!script) return { calls: 0, cpuMs: 0, workers: 0 };
  const iterations = plan.closedModel ? plan.closedModel.estimatedIterations : plan.totalIterations;
  return dynamicWorkerUsage(iterations, work.shardInvocations, script);
}

/** What the shards send and in how many invocations. */
interface ShardWork {
  /** Requests sent to the target, in all and by each shard. */
  readonly requests: number;
  readonly requestsPerShard: number;
  /** Requests one invocation sends at most: the plan's iteration budget, in requests. */
  readonly budgetRequests: number;
  /** A shard's invocations that send: the first (which warms up before t0), and one per hand-over. */
  readonly invocationsPerShard: number;
  readonly shardInvocations: number;
}

function shardWork(spec: RunSpec, plan: Plan): ShardWork {
  const shards = plan.shards.length;
  const perIteration = requestsPerIteration(spec);
  const requests = plan.closedModel ? plan.closedModel.estimatedRequests : plan.totalIterations * perIteration;
  const budgetRequests = plan.closedModel ? plan.iterationsPerInvocation : plan.iterationsPerInvocation * perIteration;
  const requestsPerShard = requests / Math.max(1, shards);
  const invocationsPerShard = Math.max(1, Math.ceil(requestsPerShard / Math.max(1, budgetRequests)));
  return { requests, requestsPerShard, budgetRequests, invocationsPerShard, shardInvocations: shards * invocationsPerShard };
}

/** D1 rows a second (each region's window and histogram rows of every step) and the multi-row INSERTs they take. */
function d1WindowWritesPerS(spec: RunSpec, plan: Plan): Pick<RunUsage["peak"], "d1RowsPerS" | "d1StatementsPerS"> {
  const regions = new Set(plan.shards.map((s) => s.region)).size;
  // A gauge's samples are kept as a trend too (its histogram rows).
  const customTrends = Object.values(spec.metrics).filter((kind) => kind === "trend" || kind === "gauge").length;
  return {
    d1RowsPerS: regions * spec.steps.length * (1 + TRENDS.length + customTrends),
    d1StatementsPerS:
      Math.ceil((regions * spec.steps.length) / WINDOW_ROWS_PER_STATEMENT) +
      Math.ceil((regions * spec.steps.length * (TRENDS.length + customTrends)) / HISTOGRAM_ROWS_PER_STATEMENT),
  };
}

/** What a tree's aggregators use over the run (zeros for a flat run): the flushes into them and their ticks, rows. */
function aggregatorUsage(tree: AggregationTree | null, shards: number, reporters: number, windows: number, activeS: number, requests: number): AggregatorUsage {
  const aggregatorCount = tree?.aggregators.length ?? 0;
  // The tree: every shard and every aggregator has one parent, so edges = shards + aggregators.
  const edges = shards + aggregatorCount;
  const childWindowsIntoAggregators = (edges - reporters) * windows; // shards and non-root aggregators send theirs to an aggregator
  const forwards = aggregatorCount * windows;
  return {
    count: aggregatorCount,
    requests,
    gbSeconds: aggregatorCount * activeS * DURABLE_OBJECT_BILLED_GB,
    rowsWritten: tree ? aggregatorRowsWritten(tree, shards, windows) : 0,
    rowsRead: childWindowsIntoAggregators * AGGREGATOR_ROWS_READ_PER_CHILD_WINDOW + forwards * AGGREGATOR_ROWS_READ_PER_FORWARD,
  };
}

/** Workers Logs events of each kind of object: an execution log per invocation it samples (the objects write no console line on a run's normal path). */
function logEventsOf(requests: ObjectRequestsByKind, samplingRate: number): ObjectRequestsByKind {
  return { shards: requests.shards * samplingRate, aggregators: requests.aggregators * samplingRate, coordinator: requests.coordinator * samplingRate };
}

/** Storage rows the shards write: their state with each written window, and at start, end and per invocation that sends. */
function shardRowsWrittenOf(spec: RunSpec, inATree: boolean, shards: number, windows: number, work: ShardWork): number {
  // A tree's shards write at their own phase: windows / WINDOWS_PER_WRITE_IN_A_TREE each on average.
  const writes = windows / (inATree ? WINDOWS_PER_WRITE_IN_A_TREE : 1);
  return (
    shards * (writes * (flowKeepsState(spec) ? 2 : 1) + SHARD_ROWS_WRITTEN_AT_START_AND_END) +
    shards * work.invocationsPerShard * SHARD_ROWS_WRITTEN_PER_INVOCATION
  );
}

/** The busiest second's figures of a shard, for the limits. */
function shardPeak(
  spec: RunSpec,
  plan: Plan,
  work: ShardWork,
  durationS: number,
  cpuMsPerRequest: number,
): Pick<RunUsage["peak"], "subrequestsPerInvocation" | "invocationWallTimeMs" | "cpuMsPerInvocation" | "ratePerShardPerS" | "streamsPerShard"> {
  const shards = plan.shards.length;
  return {
    subrequestsPerInvocation: work.budgetRequests + SUBREQUEST_RESERVE,
    invocationWallTimeMs: plan.closedModel
      ? longestClosedInvocationMs(plan.iterationsPerInvocation, plan.closedModel.estimatedRequests / durationS / Math.max(1, shards), spec.durationMs)
      : longestInvocationMs(new ArrivalSchedule(spec.stages), Math.max(1, shards), plan.iterationsPerInvocation),
    cpuMsPerInvocation: Math.min(work.budgetRequests, work.requestsPerShard) * cpuMsPerRequest,
    ratePerShardPerS: plan.peakPerShardPerS,
    streamsPerShard: streamsPerShard(spec, plan),
  };
}

/** Requests a second into the busiest aggregator and the coordinator, and the aggregator's merging. */
function receiverPeak(
  tree: AggregationTree | null,
  reporters: number,
  polled: boolean,
): Pick<RunUsage["peak"], "aggregatorRequestsPerS" | "aggregatorCpuMsPerTick" | "coordinatorRequestsPerS"> {
  const mostChildren = Math.max(0, ...(tree?.aggregators.map((a) => a.children.length) ?? []));
  return {
    aggregatorRequestsPerS: tree ? mostChildren + 1 /* tick */ : 0,
    aggregatorCpuMsPerTick: mostChildren * AGGREGATOR_MERGE_CPU_MS_PER_WINDOW,
    coordinatorRequestsPerS: reporters + 1 /* tick */ + (polled ? 1 : 0),
  };
}

/** The D1 batches of the run's creation and end: the coordinator's, and a level-1 aggregator's. */
function d1Batches(
  tree: AggregationTree | null,
  shards: number,
): Pick<RunUsage["peak"], "d1CoordinatorCreateStatements" | "d1CoordinatorEndStatements" | "d1AggregatorEndStatements"> {
  return {
    d1CoordinatorCreateStatements: RUN_ROW_STATEMENTS + Math.ceil(shards / SHARD_ROWS_PER_STATEMENT),
    d1CoordinatorEndStatements: RUN_ROW_STATEMENTS + (tree ? 0 : shards),
    d1AggregatorEndStatements: Math.max(0, ...(tree?.aggregators.filter((a) => a.level === 1).map((a) => a.children.length) ?? [])),
  };
}

/** Whether a shard's flow keeps state of its own, stored with each window (refresh-token families, a data picker's place). */
function flowKeepsState(spec: RunSpec): boolean {
  return spec.scenario?.name === "refresh" || spec.data != null;
}

/** Held connections per shard: SSE streams and a k6 script's WebSockets (held-connections.ts). */
function streamsPerShard(spec: RunSpec, plan: Plan): number {
  const held = concurrentStreams(spec, plan.closedModel?.peakVUs ?? null) + concurrentSockets(spec);
  return Math.ceil(held / Math.max(1, plan.shards.length));
}

function byteLength(text: string): number {
  return new TextEncoder().encode(text).length;
}
