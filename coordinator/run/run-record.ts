/**
 * The record a RunCoordinator keeps of its run (in its storage, under "run"), and the
 * timing of its lifecycle: pending → running → finishing → passed | failed | inconclusive |
 * aborted | error.
 */
import type { Plan } from "../../core/plan/plan.ts";
import type { Mode, RunStatus, ScriptTimeout } from "../../core/run/protocol.ts";
import type { RunSpec } from "../../core/spec/run-spec.ts";
import type { PhaseResult } from "../../scenarios/run-phase.ts";
import type { ThresholdSet } from "../../core/metrics/thresholds.ts";
import type { Verdict } from "../../core/run/verdict.ts";
import type { LifecycleState } from "../../core/run/run-lifecycle.ts";
import { afterEndMs } from "../../core/schedule/graceful-stop.ts";
import type { PhaseStats } from "./phase-metrics.ts";

export interface RunRecord {
  readonly runId: string;
  /** Full spec (with secrets) until the run ends; redacted afterwards. */
  readonly spec: RunSpec;
  readonly plan: Plan;
  readonly mode: Mode;
  readonly createdMs: number;
  readonly t0Ms: number;
  readonly status: RunStatus;
  /** Set by an abort or a failing abortOnFail threshold: the status the finish will give. */
  readonly stopping: "aborted" | "failed" | null;
  readonly endMs: number | null;
  readonly abortReason: string | null;
  /** Every shard (every region root) answered the stop (stop-signal.ts); until then each tick may send it again. */
  readonly stopDelivered?: true;
  /**
   * The k6 script decided how the run ended: exec.test.abort(), an exception in setup() or
   * teardown(), or exec.test.fail() once the run went to its end (protocol.ts exitCodeOf).
   */
  readonly endedByScript?: true;
  /**
   * Why the run ends failed: its k6 script called exec.test.fail() (in an iteration, setup()
   * or teardown()), the first call's reason. The run goes on; finishRun (run-end.ts) ends it
   * failed, exit 110, unless it ends aborted or in error. Kept here so a restart keeps it.
   */
  readonly markedFailed?: string;
  /** Its setup() or teardown() ran past its timeout (protocol.ts exitCodeOf: 100, 101). */
  readonly scriptTimeout?: ScriptTimeout;
  /** Consecutive ticks that failed (D1 unreachable, …) and the last error, while retrying. */
  readonly tickFailures?: number;
  readonly lastError?: string | null;
  /**
   * The thresholds as parsed when the run was created: a restored run evaluates exactly
   * these, whatever rules the code it restarts under has. Absent from records made before
   * they were stored (those are parsed again).
   */
  readonly thresholds?: ThresholdSet;
  /**
   * The hosts whose proof of ownership stood at admission (coordinator/http/run-admission.ts):
   * its shards, setup and teardown load no other host that needs proof. Absent: admitted
   * without the check (TARGET_VERIFICATION=off, or a record made before it).
   */
  readonly ownedHosts?: readonly string[];
  /** The verdict the run ended with (core/run/verdict.ts); absent while it goes on. */
  readonly verdict?: Verdict;
  /** Outcomes of the run's setup and teardown steps (no captured values: those are secret-bearing). */
  readonly phases?: { readonly setup?: PhaseView; readonly teardown?: PhaseView };
  /** What a k6 script's setup() and teardown() measured, which the run's totals count (phase-metrics.ts). */
  readonly phaseStats?: PhaseStats;
}

/** A setup or teardown outcome as kept and shown: without what it captured. */
export type PhaseView = Omit<PhaseResult, "captured">;

export const phaseView = ({ captured: _captured, ...view }: PhaseResult): PhaseView => view;

/** Beyond its own timeouts, how long a run's setup may take (reaching R2, starting an isolate) before it is overdue. */
export const SETUP_MARGIN_MS = 30_000;

/**
 * When a run still `pending` is overdue: its setup steps (each request bounded by the run's
 * timeout) and its script's setup() (bounded by setupTimeout) should have ended well before.
 * A coordinator restarted in the middle of setup has no one left to end it but its alarm,
 * set for this time; the run then ends in error rather than hold a run slot for ever.
 */
export function setupDeadlineMs(run: Pick<RunRecord, "createdMs" | "spec">): number {
  const steps = (run.spec.setup?.length ?? 0) * run.spec.timeoutMs;
  const script = run.spec.script ?? run.spec.scenarios?.find((s) => s.spec.script)?.spec.script;
  const setupFn = script?.setup ? script.setupTimeout : 0;
  return run.createdMs + steps + setupFn + SETUP_MARGIN_MS;
}

/** How long before T0 shards are started, so every one is armed in time. */
export const START_LEAD_MS = { local: 1_500, deployed: 3_000 } as const;
/** After its deadline a shard keeps retrying its last flushes this long, then gives up. */
export const SHARD_FLUSH_GRACE_MS = 60_000;

/** When measurement stopped, for a run ending at `nowMs`: its end if set, never past its schedule. */
export function endOf(run: RunRecord, nowMs: number): number {
  return run.endMs ?? Math.min(nowMs, run.t0Ms + run.spec.durationMs);
}

/** The lifecycle decision's view of a run (core/run/run-lifecycle.ts lifecycleStep). */
export function lifecycleStateOf(run: RunRecord, everyoneDone: boolean): LifecycleState {
  const { status, stopping, endMs, t0Ms } = run;
  return { status, stopping, endMs, t0Ms, durationMs: run.spec.durationMs, afterEndMs: afterEndMs(run.spec), everyoneDone };
}
