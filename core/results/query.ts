/**
 * Analytics over a run's stored windows: group by region, step, status class or time
 * bucket (or, for the whole run, by shard or colo) and compute counts, rates, error
 * rates and latency figures. Every percentile comes from histograms merged bucket by
 * bucket, so a p99 per region per minute is exact to the histogram's 0.39% bound — never a
 * maximum or an average of percentiles.
 *
 * Pure: it takes the rows of `windows`, `histograms` and `shards` as D1 (or a local
 * SQLite file) returns them. The coordinator serves it at /v1/runs/:id/query; the CLI runs
 * it against the local state directly when no stack is running.
 *
 * @example
 * runQuery(rows, parseQuery({ by: "region", every: "1m", metrics: "rps,p95,p99,error_rate" }))
 */
import { parseDurationMs } from "../spec/duration.ts";
import { Histogram } from "../metrics/histogram.ts";
import type { Problem } from "../spec/input-problem.ts";

export const GROUP_KEYS = ["region", "step", "status_class", "shard", "colo"] as const;
export type GroupKey = (typeof GROUP_KEYS)[number];

/** Latency histograms a query can read, by their D1 metric name. */
export const QUERY_TRENDS = { duration: "http_req_duration", ttfb: "http_req_waiting", corrected: "http_req_corrected" } as const;
export type QueryTrend = keyof typeof QUERY_TRENDS;

const COUNT_METRICS = [
  "requests",
  "rps",
  "iterations",
  "failed",
  "error_rate",
  "error_rate_4xx",
  "error_rate_5xx",
  "error_rate_timeout",
  "error_rate_connection",
  "dropped",
] as const;
/** The metrics in milliseconds (the rest are counts, rates and shares). */
export const LATENCY_METRICS = ["min", "mean", "p50", "p90", "p95", "p99", "p99.9", "max"] as const;
export const QUERY_METRICS = [...COUNT_METRICS, ...LATENCY_METRICS] as const;
export type QueryMetric = (typeof QUERY_METRICS)[number];

export interface Query {
  readonly by: readonly GroupKey[];
  /** Time bucket in seconds, or null for the whole run. */
  readonly everyS: number | null;
  readonly metrics: readonly QueryMetric[];
  readonly trend: QueryTrend;
}

/** One `windows` row as stored (see migrations/SCHEMA.md). */
export interface WindowRow {
  readonly window_s: number;
  readonly region: string;
  readonly step: string;
  readonly requests: number;
  readonly iterations: number;
  readonly failed: number;
  readonly dropped: number;
  readonly timeouts: number;
  readonly connection_errors: number;
  readonly status_4xx: number;
  readonly status_5xx: number;
  readonly statuses_json: string;
}

export interface HistogramRow {
  readonly window_s: number;
  readonly region: string;
  readonly step: string;
  readonly metric: string;
  readonly count: number;
  readonly sum_us: number;
  readonly min_us: number;
  readonly max_us: number;
  readonly buckets: string;
}

/** A shard's whole-run figures (`shards` row): counters and its histograms as JSON. */
export interface ShardRow {
  readonly shard: number;
  readonly region: string;
  readonly colo: string | null;
  readonly requests: number;
  readonly failed: number;
  readonly dropped: number;
  /** `{"http_req_duration": {"count","sum_us","min_us","max_us","buckets"}, …}` or null. */
  readonly histograms_json: string | null;
}

export interface QueryInput {
  readonly windows: readonly WindowRow[];
  readonly histograms: readonly HistogramRow[];
  readonly shards: readonly ShardRow[];
  /** Seconds the run lasted (rates over the whole run divide by it). */
  readonly durationS: number;
  /** The step of the clock its latencies were timed with (ms), from its summary; null when unknown. */
  readonly clockResolutionMs?: number | null;
  /** Seconds per window row: 60 for a run whose per-second rows were rolled up into minutes (SCHEMA.md 0012); absent: 1. */
  readonly resolutionS?: number;
}

export type QueryRow = Record<string, string | number | null>;

export type QueryParse = { ok: true; query: Query } | { ok: false; problems: Problem[] };

/** Reads a query from URL-style parameters: `by`, `every`, `metrics`, `trend`. */
export function parseQuery(params: { by?: string | null; every?: string | null; metrics?: string | null; trend?: string | null }): QueryParse {
  const problems: Problem[] = [];
  const list = (v: string | null | undefined) =>
    (v ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  const by = list(params.by);
  for (const k of by) if (!GROUP_KEYS.includes(k as GroupKey)) problems.push({ field: "by", detail: `"${k}" is not one of ${GROUP_KEYS.join(", ")}` });
  let everyS: number | null = null;
  if (params.every && params.every !== "run") {
    const ms = parseDurationMs(params.every);
    if (ms === undefined || ms < 1000 || ms % 1000 !== 0)
      problems.push({ field: "every", detail: `"${params.every}" must be whole seconds like 1s, 10s, 1m, or "run"` });
    else everyS = ms / 1000;
  }
  const metrics = list(params.metrics ?? "requests,rps,error_rate,p50,p95,p99");
  for (const m of metrics)
    if (!QUERY_METRICS.includes(m as QueryMetric)) problems.push({ field: "metrics", detail: `"${m}" is not one of ${QUERY_METRICS.join(", ")}` });
  const trend = params.trend ?? "duration";
  if (!(trend in QUERY_TRENDS)) problems.push({ field: "trend", detail: `must be one of ${Object.keys(QUERY_TRENDS).join(", ")}` });
  const wholeRunOnly = by.filter((k) => k === "shard" || k === "colo");
  if (wholeRunOnly.length && everyS !== null)
    problems.push({ field: "every", detail: `${wholeRunOnly.join(" and ")} are whole-run groupings (D1 keeps per-second data per region); drop every` });
  if (wholeRunOnly.length && by.some((k) => k === "step" || k === "status_class"))
    problems.push({ field: "by", detail: "shard and colo combine with region only" });
  const latency = metrics.filter((m) => (LATENCY_METRICS as readonly string[]).includes(m));
  if (by.includes("status_class") && latency.length)
    problems.push({ field: "metrics", detail: `latency is not split by status class; drop ${latency.join(", ")} or status_class` });
  if (problems.length) return { ok: false, problems };
  return { ok: true, query: { by: by as GroupKey[], everyS, metrics: metrics as QueryMetric[], trend: trend as QueryTrend } };
}

/** One group of a query before metrics are computed: its counts and merged histogram. */
export interface QueryGroup {
  readonly key: QueryRow;
  requests: number;
  iterations: number;
  failed: number;
  dropped: number;
  timeouts: number;
  connection: number;
  s4xx: number;
  s5xx: number;
  readonly h: Histogram;
}

const statusClass = (status: string) => (/^\d{3}$/.test(status) ? `${status[0]}xx` : status);

/** Runs a parsed query over a run's rows. Rows come out ordered by their group columns. */
export function runQuery(input: QueryInput, q: Query): QueryRow[] {
  const seconds = q.everyS ?? Math.max(1, input.durationS);
  return aggregateGroups(input, q).map((g) => {
    const row: QueryRow = { ...g.key };
    for (const m of q.metrics) row[m] = metricOf(g, m, seconds);
    return row;
  });
}

/**
 * The groups of a query with their counts and merged histograms (in µs), ordered by their
 * group columns: what runQuery turns into figures, and what run comparison tests.
 */
export function aggregateGroups(input: QueryInput, q: Pick<Query, "by" | "everyS" | "trend">): QueryGroup[] {
  const groups = new Map<string, QueryGroup>();
  const groupOf = (key: QueryRow): QueryGroup => {
    const id = JSON.stringify(key);
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { key, requests: 0, iterations: 0, failed: 0, dropped: 0, timeouts: 0, connection: 0, s4xx: 0, s5xx: 0, h: new Histogram() }));
    return g;
  };
  const timeKey = (windowS: number): QueryRow => (q.everyS === null ? {} : { t: Math.floor(windowS / q.everyS) * q.everyS });
  const keyOf = (r: { window_s: number; region: string; step: string }, extra: QueryRow = {}): QueryRow => {
    const key: QueryRow = { ...timeKey(r.window_s) };
    for (const k of q.by) {
      if (k === "region") key.region = r.region;
      else if (k === "step") key.step = r.step;
      else if (k === "status_class") key.status_class = extra.status_class ?? null;
    }
    return key;
  };

  if (q.by.includes("shard") || q.by.includes("colo")) {
    for (const s of input.shards) {
      const key: QueryRow = {};
      for (const k of q.by) key[k] = k === "shard" ? s.shard : k === "colo" ? (s.colo ?? "unknown") : s.region;
      const g = groupOf(key);
      g.requests += s.requests;
      g.iterations += s.requests;
      g.failed += s.failed;
      g.dropped += s.dropped;
      const stored = s.histograms_json
        ? (JSON.parse(s.histograms_json) as Record<string, Omit<HistogramRow, "window_s" | "region" | "step" | "metric">>)[QUERY_TRENDS[q.trend]]
        : undefined;
      if (stored) g.h.merge(histogramOf(stored));
    }
  } else if (q.by.includes("status_class")) {
    for (const r of input.windows) {
      for (const [status, n] of Object.entries(JSON.parse(r.statuses_json) as Record<string, number>)) {
        const cls = statusClass(status);
        const g = groupOf(keyOf(r, { status_class: cls }));
        g.requests += n;
        g.iterations += n;
        if (cls === "timeout") g.timeouts += n;
        if (cls === "connection") g.connection += n;
      }
    }
  } else {
    for (const r of input.windows) {
      const g = groupOf(keyOf(r));
      g.requests += r.requests;
      g.iterations += r.iterations;
      g.failed += r.failed;
      g.dropped += r.dropped;
      g.timeouts += r.timeouts;
      g.connection += r.connection_errors;
      g.s4xx += r.status_4xx;
      g.s5xx += r.status_5xx;
    }
    const metric = QUERY_TRENDS[q.trend];
    for (const r of input.histograms) if (r.metric === metric) groupOf(keyOf(r)).h.merge(histogramOf(r));
  }

  const columns = [...(q.everyS === null ? [] : ["t"]), ...q.by];
  return [...groups.values()]
    .filter((g) => g.requests > 0 || g.dropped > 0 || g.h.count > 0)
    .sort((a, b) => {
      for (const c of columns) {
        const x = a.key[c] ?? "";
        const y = b.key[c] ?? "";
        if (x !== y) return typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      }
      return 0;
    });
}

function histogramOf(r: Pick<HistogramRow, "sum_us" | "min_us" | "max_us" | "buckets">): Histogram {
  return Histogram.fromBuckets(JSON.parse(r.buckets) as Array<[number, number]>, { sum: r.sum_us, min: r.min_us, max: r.max_us });
}

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;

function metricOf(g: QueryGroup, m: QueryMetric, seconds: number): number | null {
  const rate = (n: number) => (g.requests ? round(n / g.requests, 6) : null);
  const ms = (us: number) => (g.h.count ? round(us / 1000) : null);
  switch (m) {
    case "requests":
      return g.requests;
    case "rps":
      return round(g.requests / seconds);
    case "iterations":
      return g.iterations;
    case "failed":
      return g.failed;
    case "dropped":
      return g.dropped;
    case "error_rate":
      return rate(g.failed);
    case "error_rate_4xx":
      return rate(g.s4xx);
    case "error_rate_5xx":
      return rate(g.s5xx);
    case "error_rate_timeout":
      return rate(g.timeouts);
    case "error_rate_connection":
      return rate(g.connection);
    case "min":
      return ms(g.h.min);
    case "mean":
      return ms(g.h.mean);
    case "max":
      return ms(g.h.max);
    case "p50":
      return ms(g.h.quantile(0.5));
    case "p90":
      return ms(g.h.quantile(0.9));
    case "p95":
      return ms(g.h.quantile(0.95));
    case "p99":
      return ms(g.h.quantile(0.99));
    case "p99.9":
      return ms(g.h.quantile(0.999));
  }
}

/** Rows as CSV (RFC 4180), columns in first-row order. */
export function toCsv(rows: readonly QueryRow[]): string {
  if (rows.length === 0) return "";
  const columns = Object.keys(rows[0]!);
  const cell = (v: unknown) => {
    const s = v === null || v === undefined ? "" : String(v);
    return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [columns.join(","), ...rows.map((r) => columns.map((c) => cell(r[c])).join(","))].join("\n") + "\n";
}
