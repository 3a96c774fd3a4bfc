/**
 * The verdict of a scheduled run: its own end (thresholds, or why it did not finish) and
 * then `compare` against its baseline (core/results/compare.ts, the noise-aware rule):
 *
 *   failed        the run failed its thresholds, was aborted or ended in error
 *   inconclusive  the run's result could not be established, or the comparison could not
 *   regressed     it passed its thresholds, but a metric is worse than the baseline's beyond noise
 *   passed        it passed, and nothing regressed (or it is the schedule's first run: no baseline yet)
 *
 * A comparison that could not be made is never "unchanged": it makes the verdict
 * inconclusive, with its reason.
 */
import type { Comparison, MetricComparison } from "../results/compare.ts";
import type { RunStatus } from "../run/protocol.ts";

export const SCHEDULED_VERDICTS = ["passed", "regressed", "failed", "inconclusive"] as const;
export type ScheduledVerdictKind = (typeof SCHEDULED_VERDICTS)[number];

/** One metric worse than the baseline, beyond noise: compare's figures for it. */
export type Regression = Pick<MetricComparison, "region" | "metric" | "unit" | "baseline" | "candidate" | "change" | "relativeChange" | "interval">;

export interface ScheduledVerdict {
  readonly kind: ScheduledVerdictKind;
  readonly reasons: readonly string[];
  readonly regressions: readonly Regression[];
  /** The run it was compared with, if any. */
  readonly baselineRunId: string | null;
}

export interface VerdictInput {
  readonly runStatus: RunStatus;
  /** The run's own verdict reasons (thresholds failed, inconclusive causes), as its summary gives them. */
  readonly runReasons: readonly string[];
  /** null: no baseline (the schedule's first run, or none has passed yet). */
  readonly baselineRunId: string | null;
  /** The comparison with the baseline; null when there is no baseline or it has no stored rows. */
  readonly comparison: Comparison | null;
}

/**
 * @example
 * scheduledVerdict({ runStatus: "passed", runReasons: [], baselineRunId: "r-1", comparison })
 * // { kind: "regressed", regressions: [{ region: "all", metric: "p95", … }], … }
 */
export function scheduledVerdict(input: VerdictInput): ScheduledVerdict {
  const { runStatus, runReasons, baselineRunId, comparison } = input;
  const base = { regressions: [] as Regression[], baselineRunId };
  if (runStatus === "failed") return { ...base, kind: "failed", reasons: runReasons.length ? runReasons : ["the run failed its thresholds"] };
  if (runStatus === "aborted" || runStatus === "error") return { ...base, kind: "failed", reasons: [`the run ended ${runStatus}`, ...runReasons] };
  if (runStatus === "inconclusive")
    return { ...base, kind: "inconclusive", reasons: runReasons.length ? runReasons : ["the run's result could not be established"] };
  if (runStatus !== "passed") return { ...base, kind: "inconclusive", reasons: [`the run is ${runStatus}, not ended`] };
  if (baselineRunId === null) return { ...base, kind: "passed", reasons: ["no baseline yet: this run passed its thresholds and becomes the baseline"] };
  if (comparison === null) return { ...base, kind: "inconclusive", reasons: [`baseline ${baselineRunId} has no stored results to compare with`] };
  const regressions = comparison.metrics
    .filter((m) => m.verdict === "regressed")
    .map(({ region, metric, unit, baseline, candidate, change, relativeChange, interval }) => ({
      region,
      metric,
      unit,
      baseline,
      candidate,
      change,
      relativeChange,
      interval,
    }));
  if (regressions.length) return { ...base, regressions, kind: "regressed", reasons: regressions.map(describeRegression) };
  if (comparison.outcome.kind !== "passed") return { ...base, kind: "inconclusive", reasons: [...comparison.outcome.reasons] };
  return { ...base, kind: "passed", reasons: [`nothing regressed against ${baselineRunId} beyond noise`] };
}

/** "all p95 12.3 ms → 61.0 ms (+396%)", as a line of an alert shows it. */
export function describeRegression(r: Regression): string {
  const show = (v: number | null) => (v === null ? "–" : r.unit === "ms" ? `${v.toFixed(1)} ms` : `${(v * 100).toFixed(2)}%`);
  const relative = r.relativeChange === null ? "" : ` (${r.relativeChange >= 0 ? "+" : ""}${(r.relativeChange * 100).toFixed(0)}%)`;
  return `${r.region} ${r.metric} ${show(r.baseline)} → ${show(r.candidate)}${relative}`;
}
