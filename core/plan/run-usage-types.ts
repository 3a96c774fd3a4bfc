/**
 * The shape of a planned run's usage (run-usage.ts counts it): what each level of the run
 * uses over its length, and its busiest second's figures for the limits. Apart from the
 * counting so that the model reads on one page.
 */
import type { DynamicWorkerUsage } from "./dynamic-worker-usage.ts";
import type { ObjectRequestsByKind, ReportingRequests } from "./object-requests.ts";
import type { StorageUsage } from "./storage-usage.ts";

export interface UsageOptions {
  /**
   * Shard CPU per request sent, in ms. Default 0.6: meant as an upper estimate of the whole
   * local engine's CPU per request, the coordinator's merging included, which
   * `npm run bench -- --only generator` measures.
   */
  readonly cpuMsPerRequest?: number;
  /** Whether someone asks the run's status once a second while it runs (`?wait=` does; the CLI's stream costs less). */
  readonly watched?: boolean;
  /** The share of invocations Workers Logs keeps (`head_sampling_rate`); default WORKERS_LOGS_HEAD_SAMPLING_RATE. */
  readonly logsSamplingRate?: number;
  /** Days D1 keeps the run's rows (RESULTS_RETENTION_DAYS); default DEFAULT_RESULTS_RETENTION_DAYS. */
  readonly resultsRetentionDays?: number;
  /**
   * Screenshots a k6/browser script takes over the run (`page.screenshot()`), kept in R2 for the
   * retention like its per-second rows; the script decides, so the plan is told (`edgeload plan
   * --screenshots N`). Default 0.
   */
  readonly screenshots?: number;
}

/** What the aggregators of a tree use, all of them together (zeros for a flat run). */
export interface AggregatorUsage {
  readonly count: number;
  /** Child flushes into them, their ticks, start and clean-up (object-requests.ts). */
  readonly requests: number;
  readonly gbSeconds: number;
  readonly rowsWritten: number;
  readonly rowsRead: number;
}

export interface RunUsage {
  readonly durationS: number;
  readonly shards: number;
  /** Who flushes to the coordinator: the region roots of a tree, else every shard. */
  readonly reporters: number;
  /** Requests sent to the target (subrequests of the shards). */
  readonly requests: number;
  readonly shardInvocations: number;
  /** Durable Object figures of the shards and the coordinator; the aggregators' are in `aggregators`. */
  readonly durableObjectRequests: number;
  readonly durableObjectGbSeconds: number;
  /** The shards' and the coordinator's (the aggregators' are in `aggregators`). */
  readonly durableObjectRowsWritten: number;
  readonly shardRowsWritten: number;
  readonly coordinatorRowsWritten: number;
  readonly durableObjectRowsRead: number;
  readonly aggregators: AggregatorUsage;
  readonly d1RowsWritten: number;
  readonly d1RowsRead: number;
  readonly r2Reads: number;
  readonly workersRequests: number;
  readonly workersCpuMs: number;
  /** A k6 script run's calls into its Dynamic Workers (a session per thousand iterations), their CPU and the Dynamic Workers it loads (0 for a spec). */
  readonly dynamicWorker: DynamicWorkerUsage;
  /** The reporting path's flushes and ticks (object-requests.ts), within the request counts above. */
  readonly reporting: ReportingRequests;
  /** Every billed request into each kind of object, creation to clean-up (object-requests.ts): durableObjectRequests is shards' and coordinator's, aggregators.requests the aggregators'. */
  readonly requestsByKind: ObjectRequestsByKind;
  /** The Workers Logs events of each kind of object: its requests, at `logsSamplingRate`. */
  readonly logEventsByKind: ObjectRequestsByKind;
  /** Workers Logs events: the invocations it samples at `logsSamplingRate`. */
  readonly workersLogsEvents: number;
  readonly logsSamplingRate: number;
  /** D1 rows kept for the retention, and what the objects hold while the run lasts. */
  readonly storage: StorageUsage;
  /** The busiest second's figures, for the limits. */
  readonly peak: {
    readonly subrequestsPerInvocation: number;
    /** The longest a shard invocation is planned to send (longestInvocationMs), against an alarm's wall time. */
    readonly invocationWallTimeMs: number;
    readonly cpuMsPerInvocation: number;
    readonly ratePerShardPerS: number;
    readonly streamsPerShard: number;
    /** Into the aggregator with the most children: one flush from each, and its tick (0: no tree). */
    readonly aggregatorRequestsPerS: number;
    /** Merging the busiest aggregator's child windows, once a second (0: no tree). */
    readonly aggregatorCpuMsPerTick: number;
    /** Flushes from the reporters, the coordinator's tick and a status poll. */
    readonly coordinatorRequestsPerS: number;
    readonly d1RowsPerS: number;
    readonly d1StatementsPerS: number;
    /** The coordinator's batch when the run is created: the run's row and the shards' rows. */
    readonly d1CoordinatorCreateStatements: number;
    /** The coordinator's batch at the end: the run's row, and a shard row per reporter when flat. */
    readonly d1CoordinatorEndStatements: number;
    /** A level-1 aggregator's batch at the end: one UPDATE per shard under it (0: no tree). */
    readonly d1AggregatorEndStatements: number;
    /** Bytes of the run's D1 row as created: its spec and its plan (the summary joins it at the end). */
    readonly runRowBytes: number;
    /** R2 reads a second while the shards warm up: each reads its objects within WARM_UP_LEAD_MS. */
    readonly r2ReadsPerSAtStart: number;
  };
}
