/**
 * Messages between the RunCoordinator and its LoadShards (Durable Object RPC).
 *
 * Kept in one module so both sides compile against the same shapes. Everything here is
 * structured-clone friendly: plain objects, arrays, numbers and strings.
 */
import type { SubMetricFilter } from "../metrics/sub-metrics.ts";
import type { ShardPlan } from "../plan/plan.ts";
import type { ShardSlice } from "../schedule/shard-slice.ts";
import type { RunSpec } from "../spec/types.ts";
import type { MetricStatsWire } from "../metrics/metric-stats.ts";
import { VERDICT_EXIT_CODES, type Verdict } from "./verdict.ts";

/**
 * The header every load request carries: `<run id>;<second it was sent in>;<step index>`,
 * so a target can count what arrived of a run (workers/target/request-ledger.ts) and the
 * run be reconciled with it (core/run/delivery.ts).
 */
export const RUN_HEADER = "x-edgeload-run";

/**
 * The RUN_HEADER value of a request sent in window `sentWindowS` for step `stepIndex`, in
 * the run's numbering: a named scenario's shard counts windows from its own start and
 * steps from its own first (`part`).
 */
export function runHeaderValue(runId: string, sentWindowS: number, stepIndex: number, part: ScenarioPart | undefined): string {
  return part ? `${runId};${sentWindowS + part.windowOffsetS};${stepIndex + part.stepOffset}` : `${runId};${sentWindowS};${stepIndex}`;
}

/** Width of a metrics window. Windows are numbered by seconds since T0. */
export const WINDOW_MS = 1000;

/**
 * How long a flush may wait at its receiver for others to share its log row
 * (coordinator/merge/intake-batch.ts); the planner counts those rows by it (core/plan/intake-rows.ts).
 */
export const INTAKE_HOLD_MS = 250;

/**
 * Level-1 aggregators write their shards' D1 rows this far apart (by aggregator index), so
 * that a run's end writes at most a fan-in of rows per this long: 1,000 rows a second at
 * 100 (core/plan/platform-limits.ts D1_ROWS_PER_S_BUDGET), not 7,146 in one second at 1M/s.
 * The planner counts the coordinator's ticks over that end (core/plan/run-usage.ts).
 */
export const SHARD_ROWS_STAGGER_MS = 100;

export type Mode = "local" | "deployed";

/** Everything a shard needs to run its share; stored in the shard's own storage. */
export interface ShardAssignment {
  readonly runId: string;
  readonly shard: ShardPlan;
  /**
   * Its slice of the plan's weights (core/schedule/shard-slice.ts): what it owns of the
   * interleaved cycle, the cycle's length, where its segment starts, how many shards. An
   * assignment stored before slices has the plan's `weights` instead; the shard reads it
   * through `withSlice`.
   */
  readonly slice: ShardSlice;
  readonly iterationsPerInvocation: number;
  /** Common start time (epoch ms) of every shard. */
  readonly t0Ms: number;
  /** Epoch ms by which the shard has stopped, whatever happens to the coordinator. */
  readonly deadlineMs: number;
  /** After the deadline, how long the shard keeps retrying its last flushes. */
  readonly flushGraceMs: number;
  /** Full spec including secrets: lives only in Durable Object storage, never in D1. */
  readonly spec: RunSpec;
  readonly mode: Mode;
  /**
   * In a run of named scenarios: the scenario this shard runs (`spec` is that scenario's,
   * `shard` and `slice` its own; `t0Ms` its start). Its windows and steps are moved
   * into the run's numbering when flushed (see toRunWindow).
   */
  readonly part?: ScenarioPart;
  /**
   * In a run with an aggregation tree (core/plan/aggregation-tree.ts): the aggregator this
   * shard flushes its windows to. Absent: the run's coordinator.
   */
  readonly reportsTo?: number;
  /**
   * Closed windows per write of the shard's state (workers/shard/load-shard.ts): it keeps
   * the windows in between in memory, unsent, and stores and sends them together. Absent: 1.
   */
  readonly windowsPerWrite?: number;
  /**
   * The k6 sub-metrics the run's thresholds name beyond its cells (core/metrics/sub-metrics.ts):
   * the shard records matching samples under each. Absent in assignments stored before them.
   */
  readonly subMetrics?: readonly SubMetricFilter[];
  /**
   * The hosts whose proof of ownership stood at admission: a request or redirect to another
   * host that needs proof is refused (workers/outbound/policies.ts targetPolicy). Absent: the
   * run was admitted without the check.
   */
  readonly ownedHosts?: readonly string[];
  /**
   * A browser scenario's shard: when it may acquire its Browser Run session, ms after `t0Ms`,
   * spread so the run asks for no more new browsers a second than the account allows
   * (core/plan/browser-sessions.ts browserStartsByShard). Absent: at once (a shard without a browser).
   */
  readonly browserStartMs?: number;
}

/** The Durable Object name of aggregator `index` of run `runId` (a shard's is `<run>/<index>`). */
export function aggregatorName(runId: string, index: number): string {
  return `${runId}/aggregator/${index}`;
}

export interface ScenarioPart {
  readonly scenario: string;
  /** The shard's index among the run's shards (what the coordinator knows it by). */
  readonly runShard: number;
  readonly stepOffset: number;
  /** The scenario's start in whole seconds after the run's T0. */
  readonly windowOffsetS: number;
  /**
   * Its VUs' ids in the test start after this (core/schedule/vu-ids.ts), so no two scenarios
   * share a `__VU`; absent (assignments stored before it): 0.
   */
  readonly vuIdOffset?: number;
}

/** A window of a scenario's shard in the run's numbering of windows and steps. */
export function toRunWindow(window: ShardWindow, part: ScenarioPart | undefined): ShardWindow {
  if (!part) return window;
  return {
    ...window,
    windowS: window.windowS + part.windowOffsetS,
    steps: window.steps.map(([step, stats]) => [step + part.stepOffset, stats] as const),
  };
}

/**
 * One window's measurements from one shard, per step index. A window measured across two
 * shard invocations (a handoff, a restart) arrives in parts; (shard, window, part) is the
 * key that makes a retried flush recognisable.
 */
export interface ShardWindow {
  readonly windowS: number;
  /** The shard invocation that measured this part of the window. */
  readonly part: number;
  readonly steps: ReadonlyArray<readonly [stepIndex: number, stats: MetricStatsWire]>;
  /** Samples of the target's series scraped in this window (scrape steps), if any. */
  readonly series?: readonly SeriesPoint[];
}

/** One sample of a scraped Prometheus series, stored with the run (D1 `series`). */
export interface SeriesPoint {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** When it was scraped (epoch ms). */
  readonly tMs: number;
  readonly value: number;
}

/** Saturation and placement telemetry a shard reports with each flush. */
export interface ShardTelemetry {
  readonly region: string;
  /** Observed colo (`/cdn-cgi/trace` when deployed, "local" under wrangler dev). */
  readonly colo: string;
  readonly invocations: number;
  readonly restarts: number;
  readonly subrequests: number;
  readonly peakInFlight: number;
  /** The finest grid of the clock readings this shard timed requests with, in µs (core/metrics/clock-resolution.ts). */
  readonly clockResolutionUs?: number | null;
  /** A response carried `cf-ray` or `server: cloudflare`: the target is behind Cloudflare. */
  readonly behindCloudflare?: boolean;
  /**
   * From an aggregator: how many shards this report stands for, and how many of them are
   * done (absent from a shard, which stands for itself).
   */
  readonly shards?: number;
  readonly shardsDone?: number;
}

export interface ChildFlush {
  readonly runId: string;
  /** The sender: a shard's index, or an aggregator's in a run with a tree (it reports for its shards). */
  readonly childIndex: number;
  /** Completed windows, oldest first. Re-sending a window is harmless: it is deduplicated. */
  readonly windows: readonly ShardWindow[];
  /** Every window below this number is complete at the shard (nothing more will come). */
  readonly watermarkS: number;
  /** The shard has finished: no further flushes. */
  readonly done: boolean;
  readonly telemetry: ShardTelemetry;
}

export interface FlushAck {
  /** Windows merged now. */
  readonly accepted: number;
  /** Windows already received earlier (retries), ignored. */
  readonly duplicates: number;
  /** The run is over (aborted or failed): the shard must stop sending. */
  readonly stop: boolean;
}

export type RunStatus = "pending" | "running" | "finishing" | "passed" | "failed" | "inconclusive" | "aborted" | "error";
export const FINAL_STATUSES: readonly RunStatus[] = ["passed", "failed", "inconclusive", "aborted", "error"];
/** A run not yet final: it holds one of the deployment's concurrent-run slots. */
export const ACTIVE_STATUSES: readonly RunStatus[] = ["pending", "running", "finishing"];

/**
 * The exit code of a run that ended so: k6's errext codes (0 passed, 99 thresholds failed,
 * 105 aborted, 103 any other error) and 75 for a run whose result could not be established
 * (core/run/verdict.ts); null while the run goes on. A run its k6 script ended
 * (`endedByScript`) has k6's codes for that: 108 aborted by exec.test.abort()
 * (ScriptAborted), 107 in error by an exception in setup() or teardown() (ScriptException),
 * 110 failed by exec.test.fail() (MarkedAsFailed; k6 v1.8.1 exits 110 when thresholds failed
 * too: its run command returns the mark and only logs the thresholds' error); one whose
 * setup() or teardown() ran past its timeout, 100 or 101 (k6's SetupTimeout and
 * TeardownTimeout). The CLI exits with it and the HTTP API reports it, so a CI job reads one
 * verdict either way.
 */
export function exitCodeOf(
  status: RunStatus,
  endedByScript = false,
  scriptTimeout?: ScriptTimeout,
): 0 | 75 | 99 | 100 | 101 | 103 | 105 | 107 | 108 | 110 | null {
  switch (status) {
    case "passed":
      return VERDICT_EXIT_CODES.passed;
    case "failed":
      return endedByScript ? 110 : VERDICT_EXIT_CODES.failed;
    case "inconclusive":
      return VERDICT_EXIT_CODES.inconclusive;
    case "aborted":
      return endedByScript ? 108 : 105;
    case "error":
      if (scriptTimeout) return scriptTimeout === "setup" ? 100 : 101;
      return endedByScript ? 107 : 103;
    default:
      return null;
  }
}

/** Which once-per-test phase of a k6 script ran past its timeout (setupTimeout, teardownTimeout). */
export type ScriptTimeout = "setup" | "teardown";

/** A run as the API shows it: status, progress and live totals (GET /v1/runs/:id). */
export interface RunView {
  readonly id: string;
  readonly name: string;
  readonly status: RunStatus;
  readonly target: string;
  readonly createdAt: string;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly abortReason: string | null;
  /**
   * The k6 script decided how the run ended: exec.test.abort() (aborted), an exception in
   * setup() or teardown() (error), or exec.test.fail() (failed, once the run went to its end);
   * see exitCodeOf. Absent otherwise.
   */
  readonly endedByScript?: true;
  /** Its setup() or teardown() ran past its timeout: the run ended in error (exit 100 or 101). */
  readonly scriptTimeout?: ScriptTimeout;
  readonly progress: { readonly elapsedS: number; readonly durationS: number; readonly fraction: number };
  readonly live: {
    /** The schedule's rate now; null for closed-model runs, whose load is `targetVUs`. */
    readonly targetRatePerS: number | null;
    /** Closed-model runs: VUs the schedule has active now (absent for arrival-rate runs). */
    readonly targetVUs?: number;
    readonly achievedRatePerS: number;
    readonly requests: number;
    readonly failed: number;
    readonly dropped: number;
    /** Whole run so far, rounded to the clock's step (clockResolutionMs). */
    readonly p95Ms: number | null;
    /**
     * The shards' clock step as detected so far (ms; null before any shard has timed a
     * request): figures finer than it were not measured, so none is shown finer.
     */
    readonly clockResolutionMs?: number | null;
    readonly shardsDone: number;
    readonly shards: number;
  };
  readonly thresholdsOk: boolean | null;
  /** The run's verdict once it has ended (core/run/verdict.ts): inconclusive carries its reasons. */
  readonly verdict: Verdict | null;
  /** The coordinator's last failure to progress (e.g. D1 unavailable), while it retries. */
  readonly lastError: string | null;
  /** Push outputs (spec `outputs`) and how their pushes went; absent without outputs. */
  readonly outputs?: readonly OutputStatus[];
  /** An externally-controlled run's level as the user last set it (core/run/vu-control.ts); absent for other runs. */
  readonly control?: { readonly vus: number; readonly paused: boolean; readonly maxVUs: number };
}

export interface OutputStatus {
  readonly type: string;
  readonly url: string;
  /** Pushes the endpoint accepted. */
  readonly pushed: number;
  /** Attempts that failed (timeouts, connection errors, non-2xx), retries included. */
  readonly failedAttempts: number;
  /** Windows whose push was given up, or skipped while the previous one was under way. */
  readonly dropped: number;
  readonly lastError: string | null;
}
