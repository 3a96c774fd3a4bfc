/**
 * The mergeable measurement record: counters, status counts and latency histograms.
 *
 * One class serves every level: a shard records into one per (window, step); the
 * coordinator merges them per (window, region, step) and into run totals per region, step
 * and shard. Merging is exact addition, so any grouping of the same samples gives the
 * same numbers, and every percentile anywhere comes from a merged histogram.
 */
import { Histogram, type HistogramSnapshot } from "./histogram.ts";
import { ScriptOutput, type ScriptOutputWire } from "./script-output.ts";
import { CheckResults, type CheckResultsWire } from "./check-results.ts";
import { laterGauge, recordedGauge, type GaugeLast } from "./gauge-last.ts";

/** Counters, in wire order. Counts of iterations unless the name says otherwise. */
export const COUNTERS = [
  "sent", // requests actually sent (http_reqs counts completed ones, like k6)
  "completed", // requests that produced a response or an error
  "failed", // http_req_failed: unexpected status, timeout or connection error
  "dropped", // dropped_iterations: not started at the due time (the in-flight cap; also `interrupted` and `unstarted`)
  "timeouts",
  "connectionErrors",
  "status4xx",
  "status5xx",
  "checksPassed",
  "checksFailed",
  "checkFailedRequests", // requests with at least one failed check
  "bytesReceived",
  // Iterations lost to a shard restart: an arrival-rate shard's due ones it skipped or whose
  // results died with it (also in `dropped`), a VU shard's in flight (workers/shard/restart-loss.ts).
  "interrupted",
  "iterations", // finished iterations: one per flow, whatever its number of requests (k6 iterations)
  // Due iterations never started by the shard's deadline (its first alarm came late, or it fell
  // behind; also in `dropped`). Last: a wire array stored before it decodes with 0 here (mergeWire).
  "unstarted",
] as const;
export type CounterName = (typeof COUNTERS)[number];

/** Latency histograms, all in microseconds. */
export const TRENDS = [
  "duration", // http_req_duration: actual send → body read (k6 semantics)
  "ttfb", // http_req_waiting: actual send → response headers
  "corrected", // intended send time → body read (coordinated-omission corrected)
  "lag", // schedule lag: intended → actual send (includes slot wait)
  "slotWait", // time spent waiting for an outgoing-connection slot
  "clientDelay", // how long the generator's own event loop kept a response waiting (core/metrics/loop-delay.ts)
] as const;
export type TrendName = (typeof TRENDS)[number];

/**
 * A scenario's own metrics, as k6 custom metrics: counters, rates (passes of total), trends
 * (ms histograms in µs) and gauges' last values (gauge-last.ts; a k6 Gauge's samples are a
 * trend too, for its min and max), by name. A name may carry tags in k6's sub-metric form,
 * e.g. `false_positives{type:revoked}`.
 */
export interface CustomMetricsWire {
  readonly c?: Readonly<Record<string, number>>;
  readonly r?: Readonly<Record<string, readonly [passes: number, total: number]>>;
  readonly t?: Readonly<Record<string, HistogramSnapshot>>;
  readonly g?: Readonly<Record<string, GaugeLast>>;
}

/** The wire and storage form of MetricStats. */
export interface MetricStatsWire {
  /** Counter values in COUNTERS order. */
  readonly c: readonly number[];
  /** Responses by status code, plus "timeout" and "connection" for errors. */
  readonly s: Readonly<Record<string, number>>;
  readonly h: Readonly<Record<TrendName, HistogramSnapshot>>;
  /** Custom metrics; absent when the run has none. */
  readonly x?: CustomMetricsWire;
  /** Error samples (see MetricStats.errors); absent when nothing failed. */
  readonly e?: Readonly<Record<string, number>>;
  /** A k6 script's errors, console lines, abort and exec.test.fail() mark (script-output.ts); absent when it said nothing. */
  readonly y?: ScriptOutputWire;
  /** Each k6 check's passes and fails by group and name (check-results.ts); absent when no check was named. */
  readonly k?: CheckResultsWire;
}

/**
 * Distinct error messages one MetricStats keeps with their counts; later distinct ones are
 * counted under OTHER_ERRORS. Bounded so that a target answering a new message per request
 * cannot grow a window, a flush or the summary.
 */
export const MAX_ERROR_SAMPLES = 10;
export const OTHER_ERRORS = "(other errors)";

/** Custom metrics of one MetricStats. Created on first use, so plain runs pay nothing. */
export class CustomMetrics {
  readonly counters = new Map<string, number>();
  readonly rates = new Map<string, [passes: number, total: number]>();
  readonly trends = new Map<string, Histogram>();
  readonly gauges = new Map<string, GaugeLast>();

  count(name: string, n = 1): void {
    this.counters.set(name, (this.counters.get(name) ?? 0) + n);
  }

  rate(name: string, passed: boolean): void {
    this.#addRate(name, passed ? 1 : 0, 1);
  }

  /** Records a trend sample in microseconds. */
  trend(name: string, us: number): void {
    this.#trend(name).record(us);
  }

  /** Sets a gauge to `value` at `atMs` (epoch ms): its last value, unless one set later is kept. */
  gauge(name: string, value: number, atMs: number): void {
    this.gauges.set(name, recordedGauge(this.gauges.get(name), atMs, value));
  }

  merge(other: CustomMetrics): void {
    for (const [k, v] of other.counters) this.count(k, v);
    for (const [k, [p, t]] of other.rates) this.#addRate(k, p, t);
    for (const [k, h] of other.trends) this.#trend(k).merge(h);
    for (const [k, g] of other.gauges) this.gauges.set(k, laterGauge(this.gauges.get(k), g));
  }

  mergeWire(wire: CustomMetricsWire): void {
    for (const [k, v] of Object.entries(wire.c ?? {})) this.count(k, v);
    for (const [k, [p, t]] of Object.entries(wire.r ?? {})) this.#addRate(k, p, t);
    for (const [k, snap] of Object.entries(wire.t ?? {})) this.#trend(k).mergeSnapshot(snap);
    for (const [k, g] of Object.entries(wire.g ?? {})) this.gauges.set(k, laterGauge(this.gauges.get(k), g));
  }

  toWire(): CustomMetricsWire {
    const out: { c?: Record<string, number>; r?: Record<string, [number, number]>; t?: Record<string, HistogramSnapshot>; g?: Record<string, GaugeLast> } = {};
    if (this.counters.size) out.c = Object.fromEntries(this.counters);
    if (this.rates.size) out.r = Object.fromEntries([...this.rates].map(([k, v]) => [k, [v[0], v[1]]]));
    if (this.trends.size) out.t = Object.fromEntries([...this.trends].map(([k, h]) => [k, h.snapshot()]));
    if (this.gauges.size) out.g = Object.fromEntries(this.gauges);
    return out;
  }

  get isEmpty(): boolean {
    return this.counters.size === 0 && this.rates.size === 0 && this.trends.size === 0 && this.gauges.size === 0;
  }

  #addRate(name: string, passes: number, total: number): void {
    let r = this.rates.get(name);
    if (!r) this.rates.set(name, (r = [0, 0]));
    r[0] += passes;
    r[1] += total;
  }

  #trend(name: string): Histogram {
    let h = this.trends.get(name);
    if (!h) this.trends.set(name, (h = new Histogram()));
    return h;
  }
}

export class MetricStats {
  readonly counters: Record<CounterName, number>;
  readonly statuses: Record<string, number> = {};
  /**
   * The first distinct failures, message → count: "HTTP 503 Service Unavailable",
   * "timeout after 10000 ms", "connection error: Network connection lost.". What the
   * status counts cannot say (which error), for the end-of-run summary.
   */
  readonly errors: Record<string, number> = {};
  readonly trends: Record<TrendName, Histogram>;
  #custom: CustomMetrics | null = null;
  #script: ScriptOutput | null = null;
  #checks: CheckResults | null = null;

  constructor() {
    this.counters = Object.fromEntries(COUNTERS.map((n) => [n, 0])) as Record<CounterName, number>;
    this.trends = Object.fromEntries(TRENDS.map((n) => [n, new Histogram()])) as Record<TrendName, Histogram>;
  }

  /**
   * Nothing recorded. A window part can hold only an iteration's end, its checks, its
   * custom metrics (a flow that finishes after think time in a later second than its
   * last request) or what a script said: that is not empty.
   */
  get isEmpty(): boolean {
    return COUNTERS.every((n) => this.counters[n] === 0) && !this.hasCustom && !this.hasScript;
  }

  /** What a k6 script said: its uncaught errors, console lines, abort (created on first use). */
  get script(): ScriptOutput {
    return (this.#script ??= new ScriptOutput());
  }

  /** Each k6 check's results by group and name (created on first use); the counters keep their sum. */
  get checkResults(): CheckResults {
    return (this.#checks ??= new CheckResults());
  }

  get hasCheckResults(): boolean {
    return this.#checks !== null && !this.#checks.isEmpty;
  }

  get hasScript(): boolean {
    return this.#script !== null && !this.#script.isEmpty;
  }

  /** The scenario's custom metrics (created on first use). */
  get custom(): CustomMetrics {
    return (this.#custom ??= new CustomMetrics());
  }

  get hasCustom(): boolean {
    return this.#custom !== null && !this.#custom.isEmpty;
  }

  countStatus(key: string | number): void {
    this.statuses[key] = (this.statuses[key] ?? 0) + 1;
  }

  /** Counts `n` failures with this message, within MAX_ERROR_SAMPLES distinct messages. */
  countError(message: string, n = 1): void {
    const known = this.errors[message] !== undefined;
    const distinct = Object.keys(this.errors).filter((k) => k !== OTHER_ERRORS).length;
    const key = known || distinct < MAX_ERROR_SAMPLES ? message : OTHER_ERRORS;
    this.errors[key] = (this.errors[key] ?? 0) + n;
  }

  merge(other: MetricStats): this {
    for (const n of COUNTERS) this.counters[n] += other.counters[n];
    for (const [k, v] of Object.entries(other.statuses)) this.statuses[k] = (this.statuses[k] ?? 0) + v;
    for (const [k, v] of Object.entries(other.errors)) this.countError(k, v);
    for (const n of TRENDS) this.trends[n].merge(other.trends[n]);
    if (other.hasCustom) this.custom.merge(other.custom);
    if (other.hasScript) this.script.merge(other.script);
    if (other.hasCheckResults) this.checkResults.merge(other.checkResults);
    return this;
  }

  mergeWire(wire: MetricStatsWire): this {
    COUNTERS.forEach((n, i) => (this.counters[n] += wire.c[i] ?? 0));
    for (const [k, v] of Object.entries(wire.s)) this.statuses[k] = (this.statuses[k] ?? 0) + v;
    for (const [k, v] of Object.entries(wire.e ?? {})) this.countError(k, v);
    for (const n of TRENDS) if (wire.h[n]) this.trends[n].mergeSnapshot(wire.h[n]);
    if (wire.x) this.custom.mergeWire(wire.x);
    if (wire.y) this.script.mergeWire(wire.y);
    if (wire.k) this.checkResults.mergeWire(wire.k);
    return this;
  }

  toWire(): MetricStatsWire {
    return {
      c: COUNTERS.map((n) => this.counters[n]),
      s: { ...this.statuses },
      h: Object.fromEntries(TRENDS.map((n) => [n, this.trends[n].snapshot()])) as Record<TrendName, HistogramSnapshot>,
      ...(this.hasCustom ? { x: this.custom.toWire() } : {}),
      ...(Object.keys(this.errors).length ? { e: { ...this.errors } } : {}),
      ...(this.hasScript ? { y: this.script.toWire() } : {}),
      ...(this.hasCheckResults ? { k: this.checkResults.toWire() } : {}),
    };
  }

  static fromWire(wire: MetricStatsWire): MetricStats {
    return new MetricStats().mergeWire(wire);
  }
}
