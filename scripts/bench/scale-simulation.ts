/**
 * A whole run on one virtual clock, at the scale of the capacity model: the planner sizes a
 * six-region userinfo run (like examples/edge-35k.json) for a peak rate; every shard runs
 * the real ShardEngine against a fake target whose latencies are known; its windows go up
 * the plan's aggregation tree (core/plan/aggregation-tree.ts) through the real
 * AggregatorBook of each aggregator, and from the region roots — or, in a run of at most
 * one fan-in of shards, from the shards themselves — into the coordinator's real flush
 * intake, which writes closed windows to a recording D1 once a second. The objects around
 * those pieces are in scale-shard.ts, scale-aggregator.ts and scale-coordinator.ts (what
 * they share in scale-objects.ts).
 *
 * What comes out (scale-result.ts, worked out in scale-figures.ts), for the scale bench
 * (scale-bench.ts) and its test (scale-simulation.test.ts): the requests counted at every
 * stage against the schedule (the shards' sends, their windows, the coordinator's totals,
 * the rows in D1), the merged percentiles against the exact ones, the requests into each
 * object per virtual second, each object's own CPU (performance.now() around its
 * synchronous work, this process's GC pauses taken out: scale-meter.ts), D1 rows per window
 * and per second, and how late each window reached D1.
 *
 * Assumptions (not measured): an RPC between two objects takes `hopMs` (default 20 ms) each
 * way; timers fire on a 1 ms grid, as the Workers runtime's do (test/support/virtual-time.ts);
 * an object's work takes no virtual time. The target answers every request with 200 after
 * a latency fixed by the request's number: 20–40 ms, and one request in 500 100–139 ms.
 */
import { PerformanceObserver } from "node:perf_hooks";
import { LoopWatch } from "../../core/metrics/loop-delay.ts";
import { MAX_FAN_IN } from "../../core/plan/aggregation-tree.ts";
import { DEFAULT_LIMITS, planRun, type Plan } from "../../core/plan/plan.ts";
import { ArrivalSchedule } from "../../core/schedule/arrival-schedule.ts";
import { shardAssignments, type AssignmentInput } from "../../core/schedule/shard-assignment.ts";
import { parseRunSpec, type RunSpec } from "../../core/spec/run-spec.ts";
import { SHARD_FLUSH_GRACE_MS, START_LEAD_MS, type RunRecord } from "../../coordinator/run/run-record.ts";
import { recordingD1 } from "../../test/support/recording-d1.ts";
import { VirtualTime } from "../../test/support/virtual-time.ts";
import { SimAggregator } from "./scale-aggregator.ts";
import { SimCoordinator } from "./scale-coordinator.ts";
import { type D1Batch, d1Figures, objectFigures, quantilesAgainstExact } from "./scale-figures.ts";
import type { ObjectMeter, Span } from "./scale-meter.ts";
import type { FlushTarget, SimContext } from "./scale-objects.ts";
import type { ScaleResult } from "./scale-result.ts";
import { SimShard } from "./scale-shard.ts";
import { abortDown, cleanUpAfterEnd, type SimObjects, startObjects, watchRun } from "./scale-lifecycle.ts";

export type { ObjectLoad, PerSecond, Quantile, RequestCounts, ScaleResult } from "./scale-result.ts";

export const SIM_REGIONS = ["wnam", "enam", "weur", "eeur", "apac", "oc"] as const;

export interface ScaleOptions {
  readonly ratePerS: number;
  /** The ramp from 0 to the rate, then the steady period, in whole seconds. */
  readonly rampS: number;
  readonly steadyS: number;
  /** Children per aggregator (default: the deployment default, MAX_FAN_IN). */
  readonly fanIn?: number;
  /** One-way RPC latency between objects, virtual ms (an assumption). */
  readonly hopMs?: number;
  /** Abort the run this long after t0 (seconds): the coordinator's abort, passed down the tree. */
  readonly abortAtS?: number;
}

/** The plan and spec a scale run uses: the six-region userinfo run at `ratePerS`, caps raised to allow it. */
export function scalePlan(options: Pick<ScaleOptions, "ratePerS" | "rampS" | "steadyS" | "fanIn">): { spec: RunSpec; plan: Plan } {
  const parsed = parseRunSpec({
    target: "https://auth.example.com",
    steps: [{ name: "userinfo", path: "/userinfo", checks: [{ status: 200 }] }],
    executor: "ramping-arrival-rate",
    stages: [
      { target: options.ratePerS, duration: `${options.rampS}s` },
      { target: options.ratePerS, duration: `${options.steadyS}s` },
    ],
    regions: SIM_REGIONS,
    expectedLatency: "30ms",
    // As the examples have it: ~6% of the rate (2,000 at 35,000/s, 60,000 at 1,000,000/s).
    maxVUs: Math.ceil(options.ratePerS * 0.06),
    timeout: "10s",
    thresholds: { http_req_duration: ["p(95)<200", "p(99)<300"], http_req_failed: ["rate<0.001"] },
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const spec = parsed.spec;
  const limits = {
    ...DEFAULT_LIMITS,
    maxRatePerS: options.ratePerS,
    maxShards: 1_000_000,
    maxTotalRequests: Number.MAX_SAFE_INTEGER,
    maxVUs: Number.MAX_SAFE_INTEGER,
    aggregatorFanIn: options.fanIn ?? MAX_FAN_IN,
  };
  const planned = planRun(spec, new ArrivalSchedule(spec.stages).total, limits);
  if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
  return { spec, plan: planned.plan };
}

/** The target's latency for its n-th request (see the header). */
function latencyMs(n: number): number {
  return n % 500 === 499 ? 100 + ((n * 7919) % 40) : 20 + ((n * 7919) % 21);
}

/** The fake target: answers its n-th request after latencyMs(n), counting each latency for the exact percentiles. */
function fakeTarget(time: VirtualTime): { readonly fetch: typeof fetch; readonly latencyCounts: Float64Array; readonly answered: number } {
  const latencyCounts = new Float64Array(200);
  let answered = 0;
  const fetcher = (async () => {
    const delay = latencyMs(answered++);
    latencyCounts[delay]!++;
    await time.sleep(delay);
    return new Response(null);
  }) as unknown as typeof fetch;
  return {
    fetch: fetcher,
    latencyCounts,
    get answered() {
      return answered;
    },
  };
}

function simObjects(sim: SimContext, run: RunRecord, fetcher: typeof fetch): SimObjects {
  const coordinator = new SimCoordinator(sim, run);
  const tree = run.plan.tree ?? null;
  const aggregators: SimAggregator[] = [];
  for (const planned of tree?.aggregators ?? []) {
    aggregators.push(new SimAggregator(sim, planned, run, SHARD_FLUSH_GRACE_MS, () => (planned.parent === null ? coordinator : aggregators[planned.parent]!)));
  }
  const input: AssignmentInput = { runId: run.runId, spec: run.spec, plan: run.plan, t0Ms: run.t0Ms, mode: "deployed", flushGraceMs: SHARD_FLUSH_GRACE_MS };
  // Every engine runs in this one event loop: one probe chain for all, as LoadShard's isolate shares one.
  const loopWatch = new LoopWatch(sim.time.clock);
  const shards = shardAssignments(input).map(
    (a) => new SimShard(a, sim, fetcher, loopWatch, (): FlushTarget => (a.reportsTo === undefined ? coordinator : aggregators[a.reportsTo]!)),
  );
  return { coordinator, tree, aggregators, shards };
}

/** Runs `work`, timing it on the wall clock and keeping this process's GC pauses meanwhile. */
async function watchingGc(work: () => Promise<unknown>): Promise<{ wallMs: number; gcPauses: Span[] }> {
  const gcPauses: Span[] = [];
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcPauses.push([e.startTime, e.startTime + e.duration]);
  });
  gc.observe({ entryTypes: ["gc"] });
  const started = performance.now();
  await work();
  const wallMs = performance.now() - started;
  // GC entries arrive after the pause: let the last ones in.
  await new Promise((resolve) => setTimeout(resolve, 50));
  gc.disconnect();
  gcPauses.sort((a, b) => a[0] - b[0]);
  return { wallMs, gcPauses };
}

export async function simulateScale(options: ScaleOptions): Promise<ScaleResult> {
  const { spec, plan } = scalePlan(options);
  const time = new VirtualTime({ batch: true, gridMs: 1 });
  // Created now, started START_LEAD_MS before t0 as a deployed run is: its coordinator ticks from here.
  const createdMs = time.now;
  const t0Ms = createdMs + START_LEAD_MS.deployed;
  const schedule = new ArrivalSchedule(spec.stages);

  // D1: every batch, stamped with the virtual second it was sent in.
  const batches: D1Batch[] = [];
  const d1 = recordingD1((statements) => batches.push({ atMs: time.now, statements }));
  const sim: SimContext = { time, t0Ms, hopMs: options.hopMs ?? 20, db: d1.db };
  const target = fakeTarget(time);
  const run: RunRecord = {
    runId: "r-scale",
    spec,
    plan,
    mode: "deployed",
    createdMs,
    t0Ms,
    status: "running",
    stopping: null,
    endMs: null,
    abortReason: null,
  };
  const objects = simObjects(sim, run, target.fetch);
  const { coordinator, tree, aggregators, shards } = objects;

  const abort = options.abortAtS === undefined ? null : { atMs: t0Ms + options.abortAtS * 1000, lastToldMs: 0 };
  const life = await runObjects(sim, objects, abort);

  const merged = coordinator.totals.select();
  const stored = d1Figures(batches, t0Ms);
  return {
    spec,
    plan,
    tree,
    durationS: spec.durationMs / 1000,
    counts: {
      scheduled: schedule.total,
      sent: shards.reduce((n, s) => n + s.sent, 0),
      answered: target.answered,
      inShardWindows: shards.reduce((n, s) => n + s.completed, 0),
      merged: merged.counters.completed,
      inD1: stored.inD1,
      dropped: merged.counters.dropped,
    },
    quantiles: quantilesAgainstExact(target.latencyCounts, target.answered, merged.trends.duration),
    ...objectFigures(
      coordinator.meter,
      aggregators.map((a) => a.meter),
      life.gcPauses,
    ),
    d1: stored.d1,
    objectRequests: objectRequestsOf(shards, aggregators, coordinator),
    requestsByKind: { shards: sumOf(shards, (s) => s.requests), aggregators: sumOf(aggregators, (a) => a.requests), coordinator: coordinator.requests },
    consoleLines: life.consoleLines,
    reportersDoneAfterScheduleMs: (coordinator.everyoneDoneAtMs ?? Infinity) - (t0Ms + spec.durationMs),
    storageRows: {
      shards: shards.reduce((n, s) => n + s.storageRowsWritten, 0),
      aggregators: aggregators.reduce((n, a) => n + a.storageRowsWritten, 0),
      coordinator: coordinator.storageRowsWritten,
    },
    storageBytesAtEnd: life.storageBytesAtEnd,
    storageBytesAfterCleanUp: storageBytesOf(objects),
    lateCells: stored.lateCells,
    windowToD1Ms: stored.windowToD1Ms,
    abort: abort && {
      lastShardToldMs: abort.lastToldMs - abort.atMs,
      lastShardStoppedMs: Math.max(...shards.map((s) => s.stoppedAtMs ?? Infinity)) - abort.atMs,
      everythingInMs: (coordinator.everyoneDoneAtMs ?? Infinity) - abort.atMs,
    },
    wallMs: life.wallMs,
    gcMs: life.gcPauses.reduce((n, [start, end]) => n + end - start, 0),
  };
}

/** What running the objects leaves besides their own records: wall time and GC, storage as the run ended, console lines. */
interface ObjectsRun {
  readonly wallMs: number;
  readonly gcPauses: Span[];
  readonly storageBytesAtEnd: ScaleResult["storageBytesAtEnd"];
  readonly consoleLines: number;
}

/**
 * Runs the objects on the virtual clock from the run's creation to its clean-up: started,
 * watched by a client, aborted if `abort` says when, each running its part; storage is
 * taken as the run is final, before the clean-up CLEAN_UP_AFTER_MS later. Console lines the
 * objects' code writes meanwhile are counted: each is a Workers Logs event of its own.
 */
async function runObjects(sim: SimContext, objects: SimObjects, abort: { atMs: number; lastToldMs: number } | null): Promise<ObjectsRun> {
  const { coordinator, aggregators, shards } = objects;
  let storageBytesAtEnd: ScaleResult["storageBytesAtEnd"] = { shards: 0, aggregators: 0, coordinator: 0 };
  startObjects(objects);
  const lines = countingConsoleLines();
  try {
    const { wallMs, gcPauses } = await watchingGc(() =>
      sim.time.run(
        Promise.all([
          ...shards.map((s) => s.run()),
          ...aggregators.map((a) => a.run()),
          coordinator.run().then(() => {
            storageBytesAtEnd = storageBytesOf(objects);
            return cleanUpAfterEnd(sim, objects);
          }),
          watchRun(sim, coordinator),
          ...(abort ? [abortDown(sim, abort.atMs, objects).then((lastToldMs) => (abort.lastToldMs = lastToldMs))] : []),
        ]),
      ),
    );
    return { wallMs, gcPauses, storageBytesAtEnd, consoleLines: lines.count };
  } finally {
    lines.restore();
  }
}

/** Counts the lines written through console (still writing them) until restore(). */
function countingConsoleLines(): { readonly count: number; restore(): void } {
  const methods = ["log", "info", "warn", "error", "debug"] as const;
  const originals = methods.map((m) => console[m]);
  let count = 0;
  methods.forEach((m, i) => {
    console[m] = (...args: unknown[]) => {
      count++;
      originals[i]!.apply(console, args);
    };
  });
  return {
    get count() {
      return count;
    },
    restore: () => methods.forEach((m, i) => (console[m] = originals[i]!)),
  };
}

const sumOf = <T>(items: readonly T[], of: (item: T) => number): number => items.reduce((n, item) => n + of(item), 0);

/** The storage bytes each kind of simulated object holds now (ScaleResult.storageBytesAtEnd, storageBytesAfterCleanUp). */
function storageBytesOf({ shards, aggregators, coordinator }: SimObjects): ScaleResult["storageBytesAtEnd"] {
  return {
    shards: shards.reduce((n, s) => n + s.storageBytes, 0),
    aggregators: aggregators.reduce((n, a) => n + a.storageBytes, 0),
    coordinator: coordinator.storageBytes,
  };
}

/** The billed requests the simulated objects made and were asked (ScaleResult.objectRequests). */
function objectRequestsOf(shards: readonly SimShard[], aggregators: readonly SimAggregator[], coordinator: SimCoordinator): ScaleResult["objectRequests"] {
  const requestsOf = (meter: ObjectMeter) => [...meter.requestsBySecond.values()].reduce((a, b) => a + b, 0);
  return {
    shardInvocations: shards.reduce((n, s) => n + s.invocations, 0),
    intoAggregators: aggregators.reduce((n, a) => n + requestsOf(a.meter), 0),
    intoCoordinator: requestsOf(coordinator.meter),
    flushesIntoCoordinator: coordinator.flushesIn,
  };
}
