/**
 * The coordinator's summaries of its run: a live one over what has arrived, and the final
 * one, built once with its verdict (core/run/summary.ts buildFinalSummary) from the thresholds
 * parsed when the run was created or restored. With the final one go the D1 statements
 * that store it and each shard's totals.
 */
import { buildFinalSummary, buildSummary, type ForcedStatus, type Summary, type SummaryInput } from "../../core/run/summary.ts";
import type { RunTotals } from "../../core/run/run-totals.ts";
import type { ThresholdSet } from "../../core/metrics/thresholds.ts";
import type { ChildProgress } from "../merge/child-progress.ts";
import { shardRowStatement, updateRunStatus } from "../store/results-store.ts";
import type { RunRecord } from "./run-record.ts";
import { reportersOf } from "../../core/plan/aggregation-tree.ts";
import { hideInSummary, redactSpec, secretHider } from "../../core/spec/redact.ts";

/** What the summary of a run that stopped measuring at `endMs` is built from. */
export interface SummarySources {
  readonly totals: RunTotals;
  readonly shards: ChildProgress;
  readonly thresholds: ThresholdSet;
}

function summaryInput(run: RunRecord, endMs: number, sources: SummarySources): Omit<SummaryInput, "status"> {
  return {
    runId: run.runId,
    // Its name, target and the rest as they may be shown (a no-op on an ended run's, already redacted).
    spec: redactSpec(run.spec),
    plan: run.plan,
    t0Ms: run.t0Ms,
    // Rates are per second of schedule: never past its end, never zero-length.
    endMs: Math.max(run.t0Ms + 1, Math.min(endMs, run.t0Ms + run.spec.durationMs)),
    totals: sources.totals,
    abortReason: run.abortReason,
    ...(run.endedByScript ? { endedByScript: true } : {}),
    ...(run.scriptTimeout ? { scriptTimeout: run.scriptTimeout } : {}),
    phases: run.phases ?? {},
    thresholds: sources.thresholds,
    shards: reportersOf(run.plan).map((s) => ({
      index: s.index,
      region: s.region,
      segment: "segment" in s ? String(s.segment) : `aggregator of ${run.plan.tree!.aggregators[s.index]!.shardCount} shards`,
      colo: sources.shards.telemetry(s.index)?.colo ?? "unknown",
      telemetry: sources.shards.telemetry(s.index),
    })),
  };
}

/** The summary of a run that has not ended, over what arrived by `nowMs`, its secrets hidden wherever they appear. */
export function liveSummary(run: RunRecord, nowMs: number, sources: SummarySources): Summary {
  return hideInSummary(buildSummary({ ...summaryInput(run, nowMs, sources), status: run.status }), secretHider(run.spec));
}

/**
 * The final summary of `run` (its spec redacted, its end set): its status is `forced`
 * (aborted, failed by abortOnFail, error) or its verdict's, which counts the
 * `silentReporters` (shards or aggregators that never reported done) as missing data.
 */
export function endSummary(run: RunRecord, endMs: number, forced: ForcedStatus | null, sources: SummarySources, silentReporters = 0): Summary {
  return buildFinalSummary({ ...summaryInput(run, endMs, sources), silentReporters }, forced);
}

/**
 * Statements storing the ended run (its status, summary and verdict) and each shard's
 * totals — in a run with a tree, its level-1 aggregators write their shards' rows instead
 * (aggregator/run-aggregator.ts), so this batch stays one statement however many shards.
 */
export function endedRunStatements(db: D1Database, run: RunRecord, endMs: number, summary: Summary, sources: SummarySources): D1PreparedStatement[] {
  const elapsedS = Math.max(0.001, (endMs - run.t0Ms) / 1000);
  return [
    updateRunStatus(db, run.runId, run.status, {
      endedAt: endMs,
      summaryJson: JSON.stringify(summary),
      thresholdsOk: summary.edgeload.thresholdsPassed,
      abortReason: run.abortReason,
    }),
    ...(run.plan.tree ? [] : run.plan.shards).map((s) =>
      shardRowStatement(db, run.runId, s.index, sources.totals.shard(s.index), sources.shards.telemetry(s.index), elapsedS),
    ),
  ];
}
