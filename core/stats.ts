/**
 * The mergeable measurement record: counters, status counts and latency histograms.
 *
 * One class serves every level: a shard records into one per (window, step); the
 * coordinator merges them per (window, region, step) and into run totals per region, step
 * and shard. Merging is exact addition, so any grouping of the same samples gives the
 * same numbers, and every percentile anywhere comes from a merged histogram.
 */
import { Histogram, type HistogramSnapshot } from "./histogram.ts";

/** Counters, in wire order. Counts of iterations unless the name says otherwise. */
export const COUNTERS = [
  "sent", // requests actually sent (http_reqs counts completed ones, like k6)
  "completed", // requests that produced a response or an error
  "failed", // http_req_failed: unexpected status, timeout or connection error
  "dropped", // dropped_iterations: no free in-flight capacity at the due time
  "timeouts",
  "connectionErrors",
  "status4xx",
  "status5xx",
  "checksPassed",
  "checksFailed",
  "checkFailedRequests", // requests with at least one failed check
  "bytesReceived",
  "interrupted", // due iterations lost to a shard restart (counted, never replayed)
] as const;
export type CounterName = (typeof COUNTERS)[number];

/** Latency histograms, all in microseconds. */
export const TRENDS = [
  "duration", // http_req_duration: actual send → body read (k6 semantics)
  "ttfb", // http_req_waiting: actual send → response headers
  "corrected", // intended send time → body read (coordinated-omission corrected)
  "lag", // schedule lag: intended → actual send (includes slot wait)
  "slotWait", // time spent waiting for an outgoing-connection slot
] as const;
export type TrendName = (typeof TRENDS)[number];

/** The wire and storage form of MetricStats. */
export interface MetricStatsWire {
  /** Counter values in COUNTERS order. */
  readonly c: readonly number[];
  /** Responses by status code, plus "timeout" and "connection" for errors. */
  readonly s: Readonly<Record<string, number>>;
  readonly h: Readonly<Record<TrendName, HistogramSnapshot>>;
}

export class MetricStats {
  readonly counters: Record<CounterName, number>;
  readonly statuses: Record<string, number> = {};
  readonly trends: Record<TrendName, Histogram>;

  constructor() {
    this.counters = Object.fromEntries(COUNTERS.map((n) => [n, 0])) as Record<CounterName, number>;
    this.trends = Object.fromEntries(TRENDS.map((n) => [n, new Histogram()])) as Record<TrendName, Histogram>;
  }

  get isEmpty(): boolean {
    return this.counters.sent === 0 && this.counters.completed === 0 && this.counters.dropped === 0 && this.counters.interrupted === 0;
  }

  countStatus(key: string | number): void {
    this.statuses[key] = (this.statuses[key] ?? 0) + 1;
  }

  merge(other: MetricStats): this {
    for (const n of COUNTERS) this.counters[n] += other.counters[n];
    for (const [k, v] of Object.entries(other.statuses)) this.statuses[k] = (this.statuses[k] ?? 0) + v;
    for (const n of TRENDS) this.trends[n].merge(other.trends[n]);
    return this;
  }

  mergeWire(wire: MetricStatsWire): this {
    COUNTERS.forEach((n, i) => (this.counters[n] += wire.c[i] ?? 0));
    for (const [k, v] of Object.entries(wire.s)) this.statuses[k] = (this.statuses[k] ?? 0) + v;
    for (const n of TRENDS) if (wire.h[n]) this.trends[n].mergeSnapshot(wire.h[n]);
    return this;
  }

  toWire(): MetricStatsWire {
    return {
      c: COUNTERS.map((n) => this.counters[n]),
      s: { ...this.statuses },
      h: Object.fromEntries(TRENDS.map((n) => [n, this.trends[n].snapshot()])) as Record<TrendName, HistogramSnapshot>,
    };
  }

  static fromWire(wire: MetricStatsWire): MetricStats {
    return new MetricStats().mergeWire(wire);
  }
}
