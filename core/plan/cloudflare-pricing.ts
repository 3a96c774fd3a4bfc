/**
 * Cloudflare's list prices for what an edgeload run uses, in one place, with the date they
 * were read and where. The cost pre-flight (core/plan/run-cost.ts) multiplies a run's modelled
 * usage by these.
 *
 * Prices are the Workers Paid plan's *marginal* prices: what one more unit costs once the
 * monthly included usage is spent. A run that fits in the included usage costs nothing
 * extra beyond the plan's $5/month minimum; the estimate deliberately ignores that. Every
 * line Cloudflare bills a run for has a price here (docs/cost-and-limits.md lists them and
 * what each counts). Re-check the sources before relying on a figure: prices change.
 *
 * Sources (read 2026-11-25; Workers Logs, Dynamic Workers and storage re-read 2026-12-07):
 * - Workers: https://developers.cloudflare.com/workers/platform/pricing/
 * - Workers Logs: https://developers.cloudflare.com/workers/observability/logs/workers-logs/#pricing
 *   (20 million events a month included, then $0.60 a million; each invocation's execution
 *   log is an event, and each console line in it; `head_sampling_rate` logs that share of
 *   invocations)
 * - Durable Objects: https://developers.cloudflare.com/durable-objects/platform/pricing/
 *   (each RPC call on a stub and each alarm invocation is one request; duration is
 *   wall-clock time while the object is active, at 128 MB; SQLite storage $0.20 a GB-month
 *   past 5 GB-month, billed until the data is removed)
 * - D1: https://developers.cloudflare.com/d1/platform/pricing/ (storage $0.75 a GB-month
 *   past 5 GB)
 * - R2: https://developers.cloudflare.com/r2/pricing/ (standard storage $0.015 a GB-month
 *   past 10 GB-month; a write is a class A operation)
 * - Dynamic Workers (the Worker Loader a k6 script runs in):
 *   https://developers.cloudflare.com/dynamic-workers/pricing/ — each call into one is a
 *   Workers request with its CPU (startup included), plus $0.002 a day for each unique
 *   Dynamic Worker created that day past 1,000 a month, where unique is a Worker ID and its
 *   code: the same code under another ID is another Dynamic Worker. (That page says billing
 *   has not started yet; the estimate prices it all the same.)
 * - Grafana Cloud k6 (for comparison only): https://grafana.com/pricing/ and
 *   https://grafana.com/docs/grafana-cloud/testing/k6/author-run/vu-hours/ — VUh =
 *   max VUs × minutes / 60 (arrival-rate tests: maxVUs), minimum 1 VUh per test.
 */

export const PRICING_DATE = "2026-12-07";

/** USD per unit, by what is metered. */
export const PRICES = {
  /** Workers requests (the API Worker: run creation, status polls, summaries). */
  workersRequestPerMillion: 0.3,
  /** Workers CPU time (the API Worker; Durable Objects bill duration instead). */
  workersCpuMsPerMillion: 0.02,
  /** Durable Object requests: HTTP and RPC calls, alarm invocations. */
  durableObjectRequestPerMillion: 0.15,
  /** Durable Object duration, GB-s at 128 MB per active object. */
  durableObjectGbSecondPerMillion: 12.5,
  /** SQLite-backed Durable Object storage. */
  durableObjectRowsReadPerMillion: 0.001,
  durableObjectRowsWrittenPerMillion: 1.0,
  /** D1. */
  d1RowsReadPerMillion: 0.001,
  d1RowsWrittenPerMillion: 1.0,
  /** R2 operations: class B (reads) and class A (writes, lists). */
  r2ClassBPerMillion: 0.36,
  r2ClassAPerMillion: 4.5,
  /**
   * A Dynamic Worker (Worker Loader, open beta on every Workers Paid account) a day, past the
   * 1,000 a month included: each Worker ID with its code; its calls are Workers requests and
   * CPU, priced above.
   */
  dynamicWorkerPerDay: 0.002,
  /** Workers Logs: an event is an invocation's execution log or one of its console lines. */
  workersLogsEventsPerMillion: 0.6,
  /** Stored data, per GB-month: D1's results, SQLite-backed Durable Objects' while they hold it, R2's (a browser script's screenshots). */
  d1StorageGbMonth: 0.75,
  durableObjectStorageGbMonth: 0.2,
  r2StorageGbMonth: 0.015,
} as const;

/** A billing month as the storage prices count it: 30 days, in seconds. */
export const SECONDS_PER_BILLED_MONTH = 30 * 86_400;

/**
 * The share of invocations Workers Logs keeps: wrangler.toml's `[observability]
 * head_sampling_rate` (cli/plan-usage-options.test.ts holds the two equal), which the
 * CLI's planner reads from the config it plans under. At 1 every object invocation of a run
 * is an event: ~0.6 M for the 1,000,000/s example, $0.39, 8 % of its bill; at 0.01 under a
 * cent.
 */
export const WORKERS_LOGS_HEAD_SAMPLING_RATE = 0.01;

/**
 * Days a run's D1 rows are kept before they are deleted: a deployment's RESULTS_RETENTION_DAYS
 * var, 90 unless it sets another. Its storage is priced for that long.
 */
export const DEFAULT_RESULTS_RETENTION_DAYS = 90;

/** Memory a Durable Object is billed at while active. */
export const DURABLE_OBJECT_BILLED_GB = 0.128;

/**
 * Grafana Cloud k6's list price per protocol VU hour beyond the included hours (Pro plan,
 * as published on grafana.com/pricing; volume discounts apply above it). Used only to set
 * a run's cost beside what the same load would cost there.
 */
export const K6_CLOUD_USD_PER_VUH = 0.15;
/** k6 Cloud bills at least this many VUh per test. */
export const K6_CLOUD_MIN_VUH_PER_TEST = 1;

/**
 * Browser Run (formerly Browser Rendering), what a k6/browser scenario's sessions are billed
 * on Workers Paid, read 2026-12-07 from https://developers.cloudflare.com/browser-run/pricing/
 * (and its FAQ, "How is the number of concurrent browsers calculated?"): browser hours past
 * 10 h a month at $0.09 an hour (seconds summed per day, rounded to the hour once a month),
 * and concurrent browsers past 10 at $2.00 each, counted as the month's average of each day's
 * peak. A run on one day raises that average by its peak / 30 at most (core/plan/browser-plan.ts).
 */
export const BROWSER_RUN_PRICES = {
  browserHour: 0.09,
  /** One concurrent browser of the month's average daily peak. */
  concurrentBrowserMonth: 2.0,
} as const;

/** Days the concurrency price averages daily peaks over (as SECONDS_PER_BILLED_MONTH, a 30-day month). */
export const DAYS_PER_BILLED_MONTH = 30;
