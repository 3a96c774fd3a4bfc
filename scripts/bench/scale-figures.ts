/**
 * The figures of a scale run (scale-result.ts), worked out once the virtual clock has
 * stopped from what its pieces recorded: what reached D1 (the recording D1's batches), the
 * merged percentiles against the exact ones (the fake target's latency counts), and the
 * requests into each object and its CPU (their meters, this process's GC pauses taken out:
 * scale-meter.ts). No clock and no object here: scale-simulation.ts runs the objects and
 * hands their records over.
 */
import { type Histogram, RELATIVE_ERROR } from "../../core/metrics/histogram.ts";
import { rowsOf, type RecordedStatement } from "../../test/support/recording-d1.ts";
import type { ObjectMeter, Span } from "./scale-meter.ts";
import type { ObjectLoad, PerSecond, Quantile, ScaleResult } from "./scale-result.ts";

/** Columns of the D1 tables written per window (coordinator/store/results-store.ts), and where window_s is. */
const COLUMNS = { windows: 18, histograms: 10 } as const;
const W_WINDOW_S = 1;
const W_REGION = 2;
const W_STEP = 3;
const W_REQUESTS = 5;

/** A batch sent to the recording D1, stamped with the virtual time it was sent at. */
export interface D1Batch {
  readonly atMs: number;
  readonly statements: readonly RecordedStatement[];
}

/** What reached D1: rows per window and per second, the requests in the window rows, cells written twice, the slowest window. */
export interface D1Figures {
  readonly d1: ScaleResult["d1"];
  /** Completed requests in the D1 window rows. */
  readonly inD1: number;
  readonly lateCells: number;
  readonly windowToD1Ms: number;
}

export function d1Figures(batches: readonly D1Batch[], t0Ms: number): D1Figures {
  const secondOf = (atMs: number) => Math.floor((atMs - t0Ms) / 1000);
  const d1Cells = new Map<string, number>();
  const rowsByWindow = new Map<number, number>();
  const rowsBySecond = new Map<number, number>();
  const shardRowsBySecond = new Map<number, number>();
  let inD1 = 0;
  let windowToD1Ms = 0;
  let maxParams = 0;
  const bytesWritten = { windows: 0, histograms: 0, shards: 0 };
  for (const { atMs, statements } of batches) {
    const second = secondOf(atMs);
    for (const s of statements) {
      maxParams = Math.max(maxParams, s.params.length);
      const table = /^\s*(?:INSERT INTO|UPDATE) (\w+)/i.exec(s.sql)?.[1];
      if (table === "windows" || table === "histograms" || table === "shards") bytesWritten[table] += boundBytes(s.params);
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
  return {
    d1: {
      rowsPerWindow: Math.max(0, ...rowsByWindow.values()),
      rowsPerS: Math.max(0, ...rowsBySecond.values()),
      shardRows: [...shardRowsBySecond.values()].reduce((a, b) => a + b, 0),
      shardRowsPerS: Math.max(0, ...shardRowsBySecond.values()),
      maxParams,
      bytesWritten,
    },
    inD1,
    lateCells: [...d1Cells.values()].filter((n) => n > 1).length,
    windowToD1Ms,
  };
}

/** Bytes of a statement's bound values as stored: text as UTF-8, a number as 8, anything else (null) as 1. */
function boundBytes(params: readonly unknown[]): number {
  const encoder = new TextEncoder();
  return params.reduce<number>((n, p) => n + (typeof p === "string" ? encoder.encode(p).length : typeof p === "number" ? 8 : 1), 0);
}

/** p50, p90, p99 and p99.9: the exact ones from the target's counts against the coordinator's merged histogram. */
export function quantilesAgainstExact(latencyCounts: Float64Array, answered: number, merged: Histogram): Quantile[] {
  return [0.5, 0.9, 0.99, 0.999].map((q): Quantile => {
    const exactMs = exactQuantile(latencyCounts, answered, q);
    const mergedMs = merged.quantile(q) / 1000;
    const exactUs = exactMs * 1000;
    return { q, exactMs, mergedMs, withinBound: Math.abs(mergedMs * 1000 - exactUs) <= exactUs * RELATIVE_ERROR + 1 };
  });
}

/** What the objects were asked for and what their own work cost, from their meters. */
export type ObjectFigures = Pick<
  ScaleResult,
  "busiest" | "coordinatorRequestsPerS" | "coordinatorCpuMsPerS" | "aggregatorCpuMsPerS" | "aggregatorTickMs" | "mergeMsPerWindow"
>;

export function objectFigures(coordinator: ObjectMeter, aggregators: readonly ObjectMeter[], gcPauses: readonly Span[]): ObjectFigures {
  // Requests into each object by virtual second: before any of its senders was done, and from then on.
  const meters = [coordinator, ...aggregators];
  const requestsPerS = (m: ObjectMeter, steady: boolean) =>
    Math.max(0, ...[...m.requestsBySecond].filter(([second]) => (m.firstDoneSecond === null || second < m.firstDoneSecond) === steady).map(([, n]) => n));
  const busiestIn = (steady: boolean) =>
    meters
      .map((m): ObjectLoad => ({ kind: m.kind, name: m.name, requestsPerS: requestsPerS(m, steady) }))
      .reduce((a, b) => (b.requestsPerS > a.requestsPerS ? b : a));
  const coordinatorCpu = coordinator.cpu(gcPauses);
  const aggregatorCpu = aggregators.map((meter) => ({ meter, cpu: meter.cpu(gcPauses) }));
  const aggregatorSeconds = aggregatorCpu.map(({ cpu }) => perSecond([...cpu.msBySecond.values()]));
  const taken = aggregatorCpu.reduce((n, { meter }) => n + meter.windowsTaken, 0);
  return {
    busiest: { steady: busiestIn(true), end: busiestIn(false) },
    coordinatorRequestsPerS: { steady: requestsPerS(coordinator, true), end: requestsPerS(coordinator, false) },
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
