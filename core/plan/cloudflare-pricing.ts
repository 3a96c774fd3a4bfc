/**
 * Cloudflare's list prices for what an edgeload run uses, in one place, with the date they
 * were read and where. The cost pre-flight (core/plan/run-cost.ts) multiplies a run's modelled
 * usage by these.
 *
 * Prices are the Workers Paid plan's *marginal* prices: what one more unit costs once the
 * monthly included usage is spent. A run that fits in the included usage costs nothing
 * extra beyond the plan's $5/month minimum; the estimate deliberately ignores that. It
 * prices the lines run-cost.ts lists; what a run may add beyond them (Workers Logs events,
 * Durable Object storage kept after the run, a Dynamic Worker per setup and teardown) is
 * not priced yet (docs/cost-and-limits.md says which). Re-check the sources before relying
 * on a figure: prices change.
 *
 * Sources (read 2026-11-25):
 * - Workers: https://developers.cloudflare.com/workers/platform/pricing/
 * - Durable Objects: https://developers.cloudflare.com/durable-objects/platform/pricing/
 *   (each RPC call on a stub and each alarm invocation is one request; duration is
 *   wall-clock time while the object is active, at 128 MB)
 * - D1: https://developers.cloudflare.com/d1/platform/pricing/
 * - R2: https://developers.cloudflare.com/r2/pricing/
 * - Dynamic Workers (the Worker Loader a k6 script runs in): each call into one is a
 *   Workers request with its CPU, plus a daily fee per Dynamic Worker past 1,000 a month
 * - Grafana Cloud k6 (for comparison only): https://grafana.com/pricing/ and
 *   https://grafana.com/docs/grafana-cloud/testing/k6/author-run/vu-hours/ — VUh =
 *   max VUs × minutes / 60 (arrival-rate tests: maxVUs), minimum 1 VUh per test.
 */

export const PRICING_DATE = "2026-11-25";

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
   * A Dynamic Worker (Worker Loader, open beta on Workers Paid since 2026-03-24) a day,
   * past the 1,000 a month included; its calls are Workers requests and CPU, priced above.
   */
  dynamicWorkerPerDay: 0.002,
} as const;

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
