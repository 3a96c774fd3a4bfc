/**
 * The Cloudflare platform limits a run must stay within, as documented (read 2026-11-25; the
 * Worker size re-read 2026-12-07),
 * each with its source, stated here once. core/plan/limit-checks.ts sets a planned run's
 * usage (core/plan/run-usage.ts) against them before any load is sent.
 *
 * - Workers limits: https://developers.cloudflare.com/workers/platform/limits/
 * - Durable Objects limits: https://developers.cloudflare.com/durable-objects/platform/limits/
 * - D1 limits: https://developers.cloudflare.com/d1/platform/limits/
 * - R2 limits: https://developers.cloudflare.com/r2/platform/limits/ (no read rate: see
 *   R2_READS_PER_S_BUDGET)
 */
export const PLATFORM_LIMITS = {
  /** Subrequests one invocation may make (Paid: 10,000 by default, `limits.subrequests`). */
  subrequestsPerInvocation: 10_000,
  /** CPU time one invocation may use (`limits.cpu_ms`, at most 5 minutes). */
  maxCpuMsPerInvocation: 300_000,
  /**
   * Outgoing connections one invocation may have waiting for response headers ("simultaneous
   * open connections"). Since 2026-04-09 a connection is freed when its headers arrive
   * (https://developers.cloudflare.com/changelog/2026-04-09-relaxed-connection-limiting), so an
   * SSE stream or an outbound WebSocket counts only until its 101 or 200; once open it costs
   * memory (core/plan/plan.ts STREAMS_PER_SHARD), not one of these.
   */
  connectionsPerInvocation: 6,
  /** A single Durable Object handles about this many requests per second (soft limit). */
  durableObjectRequestsPerS: 1_000,
  /** Memory of one isolate. */
  isolateMemoryBytes: 128 * 1024 * 1024,
  /** D1: queries one Worker invocation may run (Paid). */
  d1QueriesPerInvocation: 1_000,
  /** D1: bound parameters per statement. */
  d1BoundParameters: 100,
  /** D1: the largest string, BLOB or table row. */
  d1MaxRowBytes: 2_000_000,
  /**
   * A Worker's size: 64 MiB uncompressed on every plan, and no compressed limit since
   * 2026-09-04 (it was 10 MB compressed on Workers Paid, 3 MB on Free):
   * https://developers.cloudflare.com/workers/platform/limits/#worker-size
   */
  workerSizeBytes: 64 * 1024 * 1024,
  /** Wall time one Durable Object alarm handler may run (Durable Objects limits). */
  alarmWallTimeMs: 15 * 60_000,
} as const;

/**
 * D1 is one SQLite writer per database. Cloudflare documents no rows-per-second figure; a
 * write of a few rows takes on the order of a millisecond, so edgeload keeps its own budget
 * far below what one writer sustains: the coordinator's per-second batch must stay within
 * this many rows.
 */
export const D1_ROWS_PER_S_BUDGET = 1_000;

/**
 * R2 documents no read rate, per object or per bucket: its limits page lists writes to one
 * key (1 a second) and bucket management operations (50 a second, which it says do not
 * apply to reading or writing objects), nothing for reads. A seeded run's shards all read
 * the same object within their warm-up second (WARM_UP_LEAD_MS), a burst on one key, so
 * edgeload keeps its own budget, as for D1, until a run has measured more: above it, the
 * warm-up of a large seeded run would need its reads spread over more than a second.
 */
export const R2_READS_PER_S_BUDGET = 1_000;

/**
 * Browser Run's account limits on Workers Paid (Browser Sessions, i.e. the binding a shard
 * uses), read 2026-12-07 from https://developers.cloudflare.com/browser-run/limits/: 120
 * concurrent browsers per account and 1 new browser instance a second, enforced as a
 * per-second fill rate (a burst is refused, not queued). A variant of the same page has
 * shown 200 and 3 a second; the lower figures are kept until an account's `limits()` says
 * otherwise. Both are per account: another run, or anything else of the account's using
 * Browser Run at once, shares them.
 */
export const BROWSER_RUN_LIMITS = {
  concurrentBrowsersPerAccount: 120,
  newBrowsersPerS: 1,
} as const;
