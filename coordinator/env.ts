/**
 * Bindings of the coordinator Worker (see wrangler.toml). The LoadShard class is deployed
 * in the same Worker, so both Durable Objects share this Env.
 */
import type { RunCoordinator } from "./run-coordinator.ts";
import type { LoadShard } from "../workers/shard/load-shard.ts";

export interface Env {
  readonly RUN_COORDINATOR: DurableObjectNamespace<RunCoordinator>;
  readonly LOAD_SHARD: DurableObjectNamespace<LoadShard>;
  readonly DB: D1Database;
  readonly SEEDS: R2Bucket;
  /** Worker Loader: starts a k6 script's sandboxed isolate (workers/shard/script-flow.ts). */
  readonly LOADER?: WorkerLoader;
  /** Secret: bearer token for every control route. */
  readonly EDGELOAD_API_TOKEN?: string;
  /** Optional read-only bearer token (coordinator/access.ts). */
  readonly EDGELOAD_READ_TOKEN?: string;
  /** Optional secret: HMAC key of signed seed URLs (default: derived from the API token). */
  readonly SEED_URL_KEY?: string;
  /** "local" under wrangler dev (allows loopback targets), "deployed" otherwise. */
  readonly EDGELOAD_MODE?: string;
  /** Comma-separated allowed target origins or host patterns (`*.example.com`). */
  readonly ALLOWED_TARGETS?: string;
  readonly MAX_RATE_PER_S?: string;
  readonly MAX_DURATION_S?: string;
  readonly MAX_SHARDS?: string;
  readonly MAX_TOTAL_REQUESTS?: string;
  /** Most VUs a closed-model run may have active at once (default 5000). */
  readonly MAX_VUS?: string;
  readonly MAX_CONCURRENT_RUNS?: string;
  readonly SUBREQUESTS_PER_INVOCATION?: string;
  /**
   * Failed ticks in a row (D1 refusing writes, …) before a run ends as `error`; retried
   * with backoff 1 s, 2 s, 4 s … up to 30 s apart. Default 12 (about four minutes).
   */
  readonly RESULT_WRITE_RETRIES?: string;
}
