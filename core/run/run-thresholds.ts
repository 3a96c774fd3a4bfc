/**
 * A run's thresholds: parsed once from its spec, evaluated against the run's totals (each
 * k6 sub-metric over the stats its tag filters select), the abortOnFail check made while
 * the run goes, and a verdict as the summary and the live view show it. Apart from the
 * summary because the coordinator asks for the abort check and the live view for the
 * verdicts long before any summary is built.
 */
import { customAggregate, metricAggregate } from "../metrics/aggregate.ts";
import type { MetricStats } from "../metrics/metric-stats.ts";
import {
  evaluateThresholds,
  parseThresholds,
  shouldAbort,
  thresholdSet,
  type MetricName,
  type Threshold,
  type ThresholdOutcome,
  type ThresholdSet,
  type ThresholdState,
} from "../metrics/thresholds.ts";
import { customMetricKinds } from "../spec/metrics-schema.ts";
import { stepsOfScenario } from "../spec/named-scenarios.ts";
import type { RunSpec } from "../spec/types.ts";
import type { RunTotals } from "./run-totals.ts";
import { round3 } from "../metrics/rounding.ts";
import { vuGauges } from "./vu-gauges.ts";

/** A threshold as the summary shows it. */
export interface ThresholdView {
  readonly metric: string;
  readonly threshold: string;
  readonly observed: number | null;
  /** Passed, failed, or no data (its metric was never recorded): see ThresholdState. */
  readonly state: ThresholdState;
  /** state === "passed", for readers of summaries stored before `state` was. */
  readonly ok: boolean;
  readonly abortOnFail: boolean;
}

/**
 * A run's thresholds parsed once, with the custom metrics its spec declares. The API
 * refuses a spec whose thresholds do not parse; one that stops parsing later (a run
 * restored by code with other rules) keeps its problems, so its verdict cannot pass.
 */
export function parseRunThresholds(spec: RunSpec): ThresholdSet {
  const parsed = parseThresholds(spec.thresholds, customMetricKinds(spec));
  return parsed.ok ? thresholdSet(parsed.value) : thresholdSet([], parsed.errors);
}

/** Evaluates a run's thresholds (`set`, parsed from the spec when not given) against run totals. */
export function thresholdOutcomes(
  spec: RunSpec,
  totals: RunTotals,
  elapsedS: number,
  set: ThresholdSet = parseRunThresholds(spec),
): { thresholds: readonly Threshold[]; outcomes: ThresholdOutcome[] } {
  const { thresholds } = set;
  const outcomes = evaluateThresholds(thresholds, (t) => {
    // k6's vus and vus_max: the shards do not count VUs; the plan's, where it fixes them (vu-gauges.ts).
    if (!t.custom && t.kind === "gauge") return vuGauges(spec)[t.metric as "vus" | "vus_max"]?.value ?? null;
    const stats = selectTagged(spec, totals, t.tags);
    // A recorded sub-metric (core/metrics/sub-metrics.ts) is read like a custom metric of its kind.
    return t.custom || t.subMetric ? customAggregate(stats, t, elapsedS) : metricAggregate(stats, t.metric as MetricName, t.aggregation, elapsedS);
  });
  return { thresholds, outcomes };
}

/** The merged stats a k6 sub-metric's tag filters select (region, step, scenario). */
export function selectTagged(spec: RunSpec, totals: RunTotals, tags: Threshold["tags"]): MetricStats {
  const stepIndex = new Map(spec.steps.map((s, i) => [s.name, i]));
  // In a run of named scenarios, {scenario:x,step:y} is the scenario's own step "x.y".
  const stepName = tags.step === undefined ? undefined : tags.scenario !== undefined ? `${tags.scenario}.${tags.step}` : tags.step;
  // {step:y} alone, in a run of named scenarios, is every scenario's step y (k6 tags a
  // request with its step whatever its scenario).
  const acrossScenarios =
    stepName !== undefined && tags.scenario === undefined && !stepIndex.has(stepName) && spec.scenarios?.length
      ? new Set(spec.steps.flatMap((s, i) => (s.name.endsWith(`.${stepName}`) ? [i] : [])))
      : undefined;
  const step = stepName === undefined || acrossScenarios ? undefined : (stepIndex.get(stepName) ?? -1);
  const scenario = tags.scenario === undefined ? undefined : spec.scenarios?.find((s) => s.name === tags.scenario);
  // A run of one scenario is k6's "default" (a script's shortcuts): {scenario:default} is all of it.
  const wholeRun = tags.scenario === DEFAULT_SCENARIO && !spec.scenarios?.length;
  const steps = acrossScenarios ?? (tags.scenario === undefined || wholeRun ? undefined : new Set(scenario ? stepsOfScenario(scenario) : []));
  return totals.select({ ...(tags.region ? { region: tags.region } : {}), ...(step !== undefined ? { step } : {}), ...(steps ? { steps } : {}) });
}

/** k6's name for the scenario of a test without named ones (the shards tag its samples so). */
export const DEFAULT_SCENARIO = "default";

/** The abortOnFail threshold that fails at `elapsedMs` since T0, if any. */
export function shouldAbortRun(spec: RunSpec, totals: RunTotals, elapsedMs: number, set: ThresholdSet = parseRunThresholds(spec)): Threshold | undefined {
  if (!set.abortOnFail) return undefined;
  const { thresholds, outcomes } = thresholdOutcomes(spec, totals, Math.max(0.001, elapsedMs / 1000), set);
  return shouldAbort(thresholds, outcomes, elapsedMs);
}

/** A threshold's verdict as the summary and the live dashboard show it. */
export function thresholdView(o: ThresholdOutcome): ThresholdView {
  return {
    metric: o.key,
    threshold: o.source,
    observed: o.observed === null ? null : round3(o.observed),
    state: o.state,
    ok: o.state === "passed",
    abortOnFail: o.abortOnFail,
  };
}
