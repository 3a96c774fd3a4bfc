/**
 * A whole run on one virtual clock, at the scale of the capacity model: the planner sizes a
 * six-region userinfo run (like examples/edge-35k.json) for a peak rate; every shard runs
 * the real ShardEngine against a fake target whose latencies are known; its windows go up
 * the plan's aggregation tree (core/plan/aggregation-tree.ts) through the real
 * AggregatorBook of each aggregator, and from the region roots — or, in a run of at most
 * one fan-in of shards, from the shards themselves — into the coordinator's real flush
 * intake, which writes closed windows to a recording D1 once a second. The objects around
 * those pieces are in scale-objects.ts and scale-shard.ts.
 *
 * What comes out, for the scale bench (scale-bench.ts) and its test (scale-simulation.test.ts):
 * the requests counted at every stage against the schedule (the shards' sends, their
 * windows, the coordinator's totals, the rows in D1), the merged percentiles against the
 * exact ones, the requests into each object per virtual second, each object's own CPU
 * (performance.now() around its synchronous work, this process's GC pauses taken out:
 * scale-meter.ts), D1 rows per window and per second, and how late each window reached D1.
 *
 * Assumptions (not measured): an RPC between two objects takes `hopMs` (default 20 ms) each
 * way; timers fire on a 1 ms grid, as the Workers runtime's do (test/support/virtual-time.ts);
 * an object's work takes no virtual time. The target answers every request with 200 after
 * a latency fixed by the request's number: 20–40 ms, and one request in 500 100–139 ms.
 */
import { PerformanceObserver } from "node:perf_hooks";
import { RELATIVE_ERROR } from "../../core/metrics/histogram.ts";
import { LoopWatch } from "../../core/metrics/loop-delay.ts";
import { type AggregationTree, MAX_FAN_IN } from "../../core/plan/aggregation-tree.ts";
import { DEFAULT_LIMITS, planRun, type Plan } from "../../core/plan/plan.ts";
import { ArrivalSchedule } from "../../core/schedule/arrival-schedule.ts";
import { shardAssignments, type AssignmentInput } from "../../core/schedule/shard-assignment.ts";
import { parseRunSpec, type RunSpec } from "../../core/spec/run-spec.ts";
import { SHARD_FLUSH_GRACE_MS, type RunRecord } from "../../coordinator/run/run-record.ts";
import { recordingD1, rowsOf, type RecordedStatement } from "../../test/support/recording-d1.ts";
import { VirtualTime } from "../../test/support/virtual-time.ts";
import type { ObjectMeter, Span } from "./scale-meter.ts";
import { type FlushTarget, type SimContext, SimAggregator, SimCoordinator } from "./scale-objects.ts";
import { SimShard } from "./scale-shard.ts";

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
  };
  /** Durable Object storage rows written, by kind of object, the whole run (see each object's storageRowsWritten). */
  readonly storageRows: { readonly shards: number; readonly aggregators: number; readonly coordinator: number };
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

/** Columns of the D1 tables written per window (coordinator/store/results-store.ts), and where window_s is. */
const COLUMNS = { windows: 18, histograms: 10 } as const;
const W_WINDOW_S = 1;
const W_REGION = 2;
const W_STEP = 3;
const W_REQUESTS = 5;

/** The target's latency for its n-th request (see the header). */
function latencyMs(n: number): number {
  return n % 500 === 499 ? 100 + ((n * 7919) % 40) : 20 + ((n * 7919) % 21);
}

export async function simulateScale(options: ScaleOptions): Promise<ScaleResult> {
  const { spec, plan } = scalePlan(options);
  const hopMs = options.hopMs ?? 20;
  const time = new VirtualTime({ batch: true, gridMs: 1 });
  const t0Ms = time.now + 1_000;
  const runId = "r-scale";
  const schedule = new ArrivalSchedule(spec.stages);

  // D1: every batch, stamped with the virtual second it was sent in.
  const batches: Array<{ atMs: number; statements: readonly RecordedStatement[] }> = [];
  const d1 = recordingD1((statements) => batches.push({ atMs: time.now, statements }));
  const sim: SimContext = { time, t0Ms, hopMs, db: d1.db };

  // The target: counts of each latency, for the exact percentiles.
  const latencyCounts = new Float64Array(200);
  let answered = 0;
  const fetcher = (async () => {
    const delay = latencyMs(answered++);
    latencyCounts[delay]!++;
    await time.sleep(delay);
    return new Response(null);
  }) as unknown as typeof fetch;

  const run: RunRecord = { runId, spec, plan, mode: "deployed", createdMs: t0Ms, t0Ms, status: "running", stopping: null, endMs: null, abortReason: null };
  const coordinator = new SimCoordinator(sim, run);
  const tree = plan.tree ?? null;
  const aggregators: SimAggregator[] = [];
  for (const planned of tree?.aggregators ?? []) {
    aggregators.push(new SimAggregator(sim, planned, run, SHARD_FLUSH_GRACE_MS, () => (planned.parent === null ? coordinator : aggregators[planned.parent]!)));
  }
  const input: AssignmentInput = { runId, spec, plan, t0Ms, mode: "deployed", flushGraceMs: SHARD_FLUSH_GRACE_MS };
  // Every engine runs in this one event loop: one probe chain for all, as LoadShard's isolate shares one.
  const loopWatch = new LoopWatch(time.clock);
  const shards = shardAssignments(input).map(
    (a) => new SimShard(a, sim, fetcher, loopWatch, (): FlushTarget => (a.reportsTo === undefined ? coordinator : aggregators[a.reportsTo]!)),
  );

  const abort = options.abortAtS === undefined ? null : { atMs: t0Ms + options.abortAtS * 1000, lastToldMs: 0 };
  const gcPauses: Span[] = [];
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcPauses.push([e.startTime, e.startTime + e.duration]);
  });
  gc.observe({ entryTypes: ["gc"] });
  const started = performance.now();
  await time.run(
    Promise.all([
      ...shards.map((s) => s.run()),
      ...aggregators.map((a) => a.run()),
      coordinator.run(),
      ...(abort ? [abortDown(sim, abort.atMs, coordinator, tree, aggregators, shards).then((lastToldMs) => (abort.lastToldMs = lastToldMs))] : []),
    ]),
  );
  const wallMs = performance.now() - started;
  // GC entries arrive after the pause: let the last ones in.
  await new Promise((resolve) => setTimeout(resolve, 50));
  gc.disconnect();
  gcPauses.sort((a, b) => a[0] - b[0]);

  const secondOf = (atMs: number) => Math.floor((atMs - t0Ms) / 1000);
  const durationS = spec.durationMs / 1000;

  // What reached D1: rows per window and per second, the requests in the window rows.
  const d1Cells = new Map<string, number>();
  const rowsByWindow = new Map<number, number>();
  const rowsBySecond = new Map<number, number>();
  const shardRowsBySecond = new Map<number, number>();
  let inD1 = 0;
  let windowToD1Ms = 0;
  let maxParams = 0;
  for (const { atMs, statements } of batches) {
    const second = secondOf(atMs);
    for (const s of statements) {
      maxParams = Math.max(maxParams, s.params.length);
      const table = /^\s*(?:INSERT INTO|UPDATE) (\w+)/i.exec(s.sql)?.[1];
      if (table === "shards") {
        shardRowsBySecond.set(second, (shardRowsBySecond.get(second) ?? 0) + rowsOf(s));
        continue;
      }
      if (table !== "windows" && table !== "histograms") continue;
      rowsBySecond.set(second, (rowsBySecond.get(second) ?? 0) + rowsOf(s));
      for (let row = 0; row < s.params.length; row += COLUMNS[table]) {
        const windowS = s.params[row + W_WINDOW_S] as number;
        rowsByWindow.set(windowS, (rowsByWindow.get(windowS) ?? 0) + 1);
        if (table === "histograms") continue;
        const key = `${windowS}|${String(s.params[row + W_REGION])}|${String(s.params[row + W_STEP])}`;
        d1Cells.set(key, (d1Cells.get(key) ?? 0) + 1);
        inD1 += s.params[row + W_REQUESTS] as number;
        windowToD1Ms = Math.max(windowToD1Ms, atMs - (t0Ms + (windowS + 1) * 1000));
      }
    }
  }

  // Exact percentiles from the target's counts against the coordinator's merged histogram.
  const merged = coordinator.totals.select();
  const quantiles = [0.5, 0.9, 0.99, 0.999].map((q): Quantile => {
    const exactMs = exactQuantile(latencyCounts, answered, q);
    const mergedMs = merged.trends.duration.quantile(q) / 1000;
    const exactUs = exactMs * 1000;
    return { q, exactMs, mergedMs, withinBound: Math.abs(mergedMs * 1000 - exactUs) <= exactUs * RELATIVE_ERROR + 1 };
  });

  // Requests into each object by virtual second: before any of its senders was done, and from then on.
  const meters = [coordinator.meter, ...aggregators.map((a) => a.meter)];
  const requestsPerS = (m: ObjectMeter, steady: boolean) =>
    Math.max(0, ...[...m.requestsBySecond].filter(([second]) => (m.firstDoneSecond === null || second < m.firstDoneSecond) === steady).map(([, n]) => n));
  const busiestIn = (steady: boolean) =>
    meters
      .map((m): ObjectLoad => ({ kind: m.kind, name: m.name, requestsPerS: requestsPerS(m, steady) }))
      .reduce((a, b) => (b.requestsPerS > a.requestsPerS ? b : a));
  const coordinatorCpu = coordinator.meter.cpu(gcPauses);
  const aggregatorCpu = aggregators.map((a) => ({ meter: a.meter, cpu: a.meter.cpu(gcPauses) }));
  const aggregatorSeconds = aggregatorCpu.map(({ cpu }) => perSecond([...cpu.msBySecond.values()]));
  const taken = aggregatorCpu.reduce((n, { meter }) => n + meter.windowsTaken, 0);

  return {
    spec,
    plan,
    tree,
    durationS,
    counts: {
      scheduled: schedule.total,
      sent: shards.reduce((n, s) => n + s.sent, 0),
      answered,
      inShardWindows: shards.reduce((n, s) => n + s.completed, 0),
      merged: merged.counters.completed,
      inD1,
      dropped: merged.counters.dropped,
    },
    quantiles,
    busiest: { steady: busiestIn(true), end: busiestIn(false) },
    coordinatorRequestsPerS: { steady: requestsPerS(coordinator.meter, true), end: requestsPerS(coordinator.meter, false) },
    coordinatorCpuMsPerS: perSecond([...coordinatorCpu.msBySecond.values()]),
    aggregatorCpuMsPerS: aggregators.length
      ? { median: Math.max(...aggregatorSeconds.map((s) => s.median)), max: Math.max(...aggregatorSeconds.map((s) => s.max)) }
      : null,
    aggregatorTickMs: aggregators.length ? perSecond(aggregatorCpu.flatMap(({ cpu }) => cpu.tickMs)) : null,
    mergeMsPerWindow: taken
      ? {
          median: perSecond(aggregatorCpu.flatMap(({ cpu }) => cpu.intakeMsPerUnit)).median,
          mean: aggregatorCpu.reduce((n, { cpu }) => n + cpu.intakeMs, 0) / taken,
        }
      : null,
    d1: {
      rowsPerWindow: Math.max(0, ...rowsByWindow.values()),
      rowsPerS: Math.max(0, ...rowsBySecond.values()),
      shardRows: [...shardRowsBySecond.values()].reduce((a, b) => a + b, 0),
      shardRowsPerS: Math.max(0, ...shardRowsBySecond.values()),
      maxParams,
    },
    storageRows: {
      shards: shards.reduce((n, s) => n + s.storageRowsWritten, 0),
      aggregators: aggregators.reduce((n, a) => n + a.storageRowsWritten, 0),
      coordinator: coordinator.storageRowsWritten,
    },
    lateCells: [...d1Cells.values()].filter((n) => n > 1).length,
    windowToD1Ms,
    abort: abort && {
      lastShardToldMs: abort.lastToldMs - abort.atMs,
      lastShardStoppedMs: Math.max(...shards.map((s) => s.stoppedAtMs ?? Infinity)) - abort.atMs,
      everythingInMs: (coordinator.everyoneDoneAtMs ?? Infinity) - abort.atMs,
    },
    wallMs,
    gcMs: gcPauses.reduce((n, [start, end]) => n + end - start, 0),
  };
}

/** The median and the most of `values` (by second, or by tick). */
function perSecond(values: readonly number[]): PerSecond {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)] ?? 0, max: sorted.at(-1) ?? 0 };
}

/** The `q` quantile of the latencies counted in `counts` (by whole ms): the ⌈q·n⌉-th smallest. */
function exactQuantile(counts: Float64Array, n: number, q: number): number {
  const rank = Math.ceil(q * n);
  let seen = 0;
  for (let ms = 0; ms < counts.length; ms++) {
    seen += counts[ms]!;
    if (seen >= rank) return ms;
  }
  throw new Error(`no ${q} quantile among ${n} latencies`);
}

/**
 * The coordinator's abort at `atMs`, passed down as RunCoordinator and RunAggregator pass
 * it: each receiver stops its own part and calls its children, one `hopMs` per edge.
 * Resolves with when the last shard was told (virtual ms).
 */
async function abortDown(
  sim: SimContext,
  atMs: number,
  coordinator: SimCoordinator,
  tree: AggregationTree | null,
  aggregators: readonly SimAggregator[],
  shards: readonly SimShard[],
): Promise<number> {
  await sim.time.sleep(atMs - sim.time.now);
  coordinator.abort();
  let lastToldMs = 0;
  const hop = () => sim.time.sleep(sim.hopMs);
  const tell = (shard: SimShard) => {
    shard.abort();
    lastToldMs = sim.time.now;
  };
  const down = async (index: number): Promise<void> => {
    await hop();
    const aggregator = aggregators[index]!;
    aggregator.abort();
    const node = tree!.aggregators[index]!;
    await Promise.all(node.level === 1 ? node.children.map(async (shard) => (await hop(), tell(shards[shard]!))) : node.children.map((child) => down(child)));
  };
  if (tree) await Promise.all(tree.roots.map((root) => down(root)));
  else await Promise.all(shards.map(async (s) => (await hop(), tell(s))));
  return lastToldMs;
}
