/**
 * Bindings of the edgeload Worker (see wrangler.toml). The RunCoordinator, RunAggregator and
 * LoadShard classes are deployed in the same Worker, so the Durable Objects share these bindings.
 *
 * The shard (workers/shard/) and the coordinator (coordinator/) both import this module, so
 * it names no class. `Env` is every binding but the Durable Object namespaces;
 * `ObjectNamespaces` types those by what their reader calls, given as type parameters: the
 * Worker's routes see the classes (coordinator/http/routes-env.ts), the RunCoordinator object
 * the shards' and aggregators' classes, a shard its receiver's flush only
 * (workers/shard/window-flusher.ts).
 */

/** The Durable Object namespaces, each typed by what its reader calls (undefined: untyped). */
export interface ObjectNamespaces<
  Coordinator extends Rpc.DurableObjectBranded | undefined = undefined,
  Shard extends Rpc.DurableObjectBranded | undefined = undefined,
  Aggregator extends Rpc.DurableObjectBranded | undefined = undefined,
> {
  readonly RUN_COORDINATOR: DurableObjectNamespace<Coordinator>;
  readonly LOAD_SHARD: DurableObjectNamespace<Shard>;
  /** The aggregators of runs with an aggregation tree (core/plan/aggregation-tree.ts). */
  readonly RUN_AGGREGATOR: DurableObjectNamespace<Aggregator>;
}

/** Every other binding and var. */
export interface Env {
  readonly DB: D1Database;
  readonly SEEDS: R2Bucket;
  /** One ScheduleVault per schedule: its secrets, never in D1 (coordinator/schedule/schedule-vault.ts). */
  readonly SCHEDULE_VAULT: DurableObjectNamespace;
  /** Worker Loader: starts a k6 script's sandboxed isolate (workers/shard/script-flow.ts). */
  readonly LOADER?: WorkerLoader;
  /** Browser Run: the Chromium k6/browser scripts drive, one session per shard (workers/shard/browser-session.ts). */
  readonly BROWSER?: Fetcher;
  /** Secret: bearer token for every control route. */
  readonly EDGELOAD_API_TOKEN?: string;
  /** Optional read-only bearer token (coordinator/http/access.ts). */
  readonly EDGELOAD_READ_TOKEN?: string;
  /**
   * Optional secret: HMAC key of signed seed URLs. Unset, a key generated on first use and
   * kept in D1 is used (coordinator/http/signed-url.ts), so rotating the API token keeps URLs valid.
   */
  readonly SEED_URL_KEY?: string;
  /** Where a deployed shard reads its colo (default https://cloudflare.com/cdn-cgi/trace). */
  readonly COLO_TRACE_URL?: string;
  /** "local" under wrangler dev (allows loopback targets), "deployed" otherwise. */
  readonly EDGELOAD_MODE?: string;
  /**
   * Secret: comma-separated allowed target origins or host patterns (`*.example.com`).
   * Unset, every run is refused with a message that says how to set it (core/spec/target-policy.ts).
   */
  readonly ALLOWED_TARGETS?: string;
  /**
   * Secret: comma-separated hosts a schedule's webhooks may call, in ALLOWED_TARGETS' form
   * (core/watch/schedule-input.ts). Unset, only loopback under wrangler dev.
   */
  readonly ALLOWED_WEBHOOKS?: string;
  /**
   * Secret: comma-separated hosts a run's push outputs may POST to, in ALLOWED_TARGETS' form
   * (core/spec/target-policy.ts). Unset, only loopback under wrangler dev.
   */
  readonly ALLOWED_OUTPUTS?: string;
  /**
   * Var: which targets must have proved that their owner runs this deployment, by a DNS TXT
   * record or a well-known file (core/spec/target-ownership.ts, docs/configuration.md). Unset:
   * every non-loopback target of a deployed coordinator, none under wrangler dev. `on`:
   * non-loopback targets under wrangler dev too. `off`: none, for a single-owner account.
   * `all`: loopback targets too, which is how the tests exercise the check under wrangler dev.
   * Any other value refuses every run (503) rather than turning the check off.
   */
  readonly TARGET_VERIFICATION?: string;
  /** Var: the DNS-over-HTTPS JSON resolver ownership TXT records are read from (default https://cloudflare-dns.com/dns-query). */
  readonly TARGET_VERIFICATION_DOH?: string;
  /** The deployment's public origin, for links in notifications (cron ticks have no request). */
  readonly EDGELOAD_PUBLIC_URL?: string;
  /** Caps (coordinator/http/policy.ts), optional secrets or vars; unset, core/plan/plan.ts's DEFAULT_LIMITS. */
  readonly MAX_RATE_PER_S?: string;
  readonly MAX_DURATION_S?: string;
  readonly MAX_SHARDS?: string;
  readonly MAX_TOTAL_REQUESTS?: string;
  /** Most VUs a closed-model run may have active at once (default 5000). */
  readonly MAX_VUS?: string;
  readonly MAX_CONCURRENT_RUNS?: string;
  readonly SUBREQUESTS_PER_INVOCATION?: string;
  /** Children per aggregator (core/plan/aggregation-tree.ts MAX_FAN_IN unless set; tests set it low). */
  readonly AGGREGATOR_FAN_IN?: string;
  /**
   * Failed ticks in a row (D1 refusing writes, …) before a run ends as `error`; retried
   * with backoff 1 s, 2 s, 4 s … up to 30 s apart. Default 12 (about four minutes).
   */
  readonly RESULT_WRITE_RETRIES?: string;
  /**
   * Days a run's per-second rows (`windows`, `histograms`) are kept after it ended; then the
   * cron tick rolls them up into per-minute rows (core/results/retention.ts). Default 90.
   */
  readonly RESULTS_RETENTION_DAYS?: string;
}
