/**
 * A finished run's verdict from what it measured: its thresholds' outcomes, whether the
 * generator limited the run, and whether every shard reported. Pure, so each rule is a row
 * of run-verdict.test.ts; the summary is built once with its answer (summary.ts).
 *
 * - A threshold that failed on the data that arrived fails the run: missing data could not
 *   make it hold. Unless the generator was saturated and every failing threshold is a
 *   time the generator measured: then the failing figures may be edgeload's own, and the
 *   run is inconclusive (a failed check or a false positive is the target's answer, however
 *   loaded the generator was; a target that slowed until it held every slot is the finding).
 * - Otherwise, a threshold with no data, shards that never reported done, or edgeload
 *   leaving more of the schedule unsent than the run's bound (restarts, late starts:
 *   not-sent.ts, maxNotSentShare) make it inconclusive: a limit nobody measured, or a run
 *   missing part of its load, is not a pass.
 * - Otherwise it passed.
 */
import type { ThresholdOutcome } from "../metrics/thresholds.ts";
import { notSentReason, type NotSent } from "./not-sent.ts";
import { failed, inconclusive, PASSED, type Verdict } from "./verdict.ts";

export interface RunEvidence {
  readonly outcomes: readonly ThresholdOutcome[];
  /** Whether a threshold's metric key names a time the generator measured (isTimingMetric). */
  readonly isTiming: (metricKey: string) => boolean;
  /** The generator itself (not the target) limited the run (core/run/saturation.ts). */
  readonly generatorSaturated: boolean;
  /** Why the run's thresholds could not be parsed (ThresholdSet.problems), if they could not. */
  readonly thresholdProblems?: readonly string[];
  /** Shards that never reported done (counted through an aggregation tree), of the run's shards. */
  readonly silentReporters: number;
  readonly reporters: number;
  /** What edgeload itself did not send of the schedule, with the run's bound (not-sent.ts); absent: nothing known. */
  readonly notSent?: NotSent;
}

export function runVerdict(e: RunEvidence): Verdict {
  const broken = e.outcomes.filter((o) => o.state === "failed");
  if (broken.length) {
    const reasons = broken.map((o) => `threshold ${o.key}: ${o.source} failed (observed ${o.observed})`);
    if (e.generatorSaturated && broken.every((o) => e.isTiming(o.key))) {
      return inconclusive(
        ...reasons.map((r) => `${r} while the generator was saturated: the time may be edgeload's own (re-run at a lower rate or with more shards)`),
      );
    }
    return failed(...reasons);
  }
  const unknown = [
    ...(e.thresholdProblems ?? []).map((p) => `the run's thresholds could not be read, so none was evaluated: ${p}`),
    ...(e.silentReporters > 0 ? [`${e.silentReporters} of ${e.reporters} shards never reported done: what they measured is missing`] : []),
    ...(e.notSent ? [notSentReason(e.notSent)].filter((r): r is string => r !== null) : []),
    ...e.outcomes.filter((o) => o.state === "no-data").map(noDataReason),
  ];
  return unknown.length ? inconclusive(...unknown) : PASSED;
}

/**
 * Whether a threshold's metric is a time the generator measured (a trend), not a count or
 * an answer's verdict. `customKind` gives a custom metric's kind, when the run declares it.
 */
export function isTimingMetric(metricKey: string, customKind: (name: string) => string | undefined): boolean {
  const base = metricKey.replace(/\{.*$/, "");
  if (base.startsWith("http_req_")) return base !== "http_req_failed";
  if (base === "iteration_duration" || base === "schedule_lag" || base === "client_delay") return true;
  return customKind(base) === "trend";
}

/** Why a threshold has no data: its metric was never recorded, or no sample matched its tag filter. */
function noDataReason(o: ThresholdOutcome): string {
  const filter = o.key.indexOf("{");
  const why = filter >= 0 ? `no sample matched ${o.key.slice(filter)}` : "its metric was never recorded";
  return `threshold ${o.key}: ${o.source} has no data (${why})`;
}
