/**
 * What a run looks like from outside at `now`, computed from the coordinator's state
 * without touching storage: the status view (GET /v1/runs/:id), the live status the
 * dashboard gets each tick, and the source of the run's Prometheus metrics.
 */
import { reportersOf } from "../../core/plan/aggregation-tree.ts";
import { liveVerdicts, shardHealthRows, type ShardLatest } from "../../core/run/live-view.ts";
import { targetLoadAt } from "../../core/schedule/load-profile.ts";
import { roundToResolution } from "../../core/metrics/clock-resolution.ts";
import { clockView } from "../../core/metrics/measured-path.ts";
import type { RunMetricsSource } from "../../core/formats/prometheus-text-writer.ts";
import { FINAL_STATUSES, type OutputStatus, type RunView } from "../../core/run/protocol.ts";
import type { RunTotals } from "../../core/run/run-totals.ts";
import type { ThresholdSet } from "../../core/metrics/thresholds.ts";
import type { ChildProgress } from "../merge/child-progress.ts";
import type { RunRecord } from "./run-record.ts";
import { redactRun } from "../../core/spec/redact.ts";

/** What the coordinator knows of a run's figures, read-only. */
export interface RunFigures {
  readonly totals: RunTotals;
  readonly shards: ChildProgress;
  /** Iterations of a window across shards. */
  iterationsAt(windowS: number): number;
}

/**
 * How far the run is at `now`: elapsed time (capped at its duration), the load the
 * schedule asks for then, and the iterations of the last second every shard has passed.
 */
export function progressAt(run: RunRecord, figures: RunFigures, now: number) {
  const elapsedMs = Math.max(0, Math.min((run.endMs ?? now) - run.t0Ms, run.spec.durationMs));
  const target = targetLoadAt(run.spec, Math.min(elapsedMs, run.spec.durationMs - 1));
  if (FINAL_STATUSES.includes(run.status)) {
    // Once the run has ended there is no "last second": both rates are the whole run's
    // means, as the summary gives them (not the ramp-down's last instant against 0/s).
    const elapsedS = Math.max(0.001, elapsedMs / 1000);
    const meanTarget = target.ratePerS === null ? null : run.plan.totalIterations / (run.spec.durationMs / 1000);
    return { elapsedMs, target: { ...target, ratePerS: meanTarget }, achievedRatePerS: figures.totals.select().counters.iterations / elapsedS };
  }
  const lastComplete = Math.min(...reportersOf(run.plan).map((s) => figures.shards.watermark(s.index))) - 1;
  return { elapsedMs, target, achievedRatePerS: figures.iterationsAt(lastComplete) };
}

/** Status, progress and live totals; `outputs` the push outputs' state when the run has any. */
export function runView(run: RunRecord, figures: RunFigures, now: number, outputs: readonly OutputStatus[] | null): RunView {
  const { elapsedMs, target, achievedRatePerS } = progressAt(run, figures, now);
  const all = figures.totals.select();
  const clock = clockView(reportersOf(run.plan).map((s) => figures.shards.telemetry(s.index)));
  const p95 = all.trends.duration.count ? roundToResolution(all.trends.duration.quantile(0.95) / 1000, clock.resolutionMs) : null;
  // While it runs the record holds the spec as given: the view shows it redacted, and its
  // messages (an abort's reason, a failing write's) with the run's secrets hidden.
  const { shown, hider } = redactRun(run.spec);
  const hide = (text: string | null | undefined) => (text ? hider.hide(text) : (text ?? null));
  return {
    id: run.runId,
    name: shown.name,
    status: run.status,
    target: shown.target,
    createdAt: new Date(run.createdMs).toISOString(),
    startedAt: new Date(run.t0Ms).toISOString(),
    endedAt: run.endMs ? new Date(run.endMs).toISOString() : null,
    abortReason: hide(run.abortReason),
    ...(run.endedByScript ? { endedByScript: true as const } : {}),
    ...(run.scriptTimeout ? { scriptTimeout: run.scriptTimeout } : {}),
    progress: { elapsedS: elapsedMs / 1000, durationS: run.spec.durationMs / 1000, fraction: run.spec.durationMs ? elapsedMs / run.spec.durationMs : 1 },
    live: {
      targetRatePerS: target.ratePerS,
      ...(target.vus !== null ? { targetVUs: target.vus } : {}),
      achievedRatePerS,
      requests: all.counters.completed,
      failed: all.counters.failed,
      dropped: all.counters.dropped,
      p95Ms: p95,
      clockResolutionMs: clock.resolutionMs,
      shardsDone: figures.shards.shardsDone(),
      shards: run.plan.shards.length,
    },
    thresholdsOk: FINAL_STATUSES.includes(run.status) ? run.status !== "failed" && run.status !== "inconclusive" : null,
    verdict: run.verdict ?? null,
    lastError: hide(run.lastError),
    ...(outputs ? { outputs } : {}),
  };
}

/** The run as the dashboard shows it each tick: the status view, verdicts so far, shard health. */
export function liveStatus(
  run: RunRecord,
  figures: RunFigures,
  now: number,
  outputs: readonly OutputStatus[] | null,
  thresholds: ThresholdSet,
  shardHealth: ReadonlyMap<number, ShardLatest>,
) {
  const view = runView(run, figures, now, outputs);
  return {
    ...view,
    t0Ms: run.t0Ms,
    ...liveVerdicts(run.spec, figures.totals, view.progress.elapsedS, thresholds),
    shardHealth: shardHealthRows(reportersOf(run.plan), shardHealth, figures.shards.doneShards()),
  };
}

/** What GET /v1/runs/:id/metrics and the push outputs read (core/formats/prometheus-text-writer.ts). */
export function metricsSourceOf(run: RunRecord, figures: RunFigures, now: number): RunMetricsSource {
  const ended = FINAL_STATUSES.includes(run.status);
  const { target, achievedRatePerS } = progressAt(run, figures, now);
  return {
    runId: run.runId,
    name: redactRun(run.spec).shown.name,
    status: run.status,
    verdict: run.verdict ?? null,
    endedByScript: run.endedByScript === true,
    totals: figures.totals,
    // An ended run asks for nothing more: its gauges drop to 0 rather than freeze.
    targetRatePerS: target.ratePerS === null ? null : ended ? 0 : target.ratePerS,
    targetVUs: target.vus === null ? null : ended ? 0 : target.vus,
    achievedRatePerS: ended ? 0 : achievedRatePerS,
    peakInFlight: figures.shards.peakInFlight(),
    ...(run.spec.unitlessTrends?.length ? { unitlessTrends: run.spec.unitlessTrends } : {}),
  };
}
