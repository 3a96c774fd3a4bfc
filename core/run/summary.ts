/**
 * The end-of-run summary: k6's `--summary-export` layout for the metrics k6 has, so k6
 * tooling reads it, plus an `edgeload` section with the plan, per-region, per-step,
 * per-colo and per-shard breakdowns, saturation and thresholds. This file holds the layout
 * and the `edgeload` section; k6's `metrics` are summary-k6-metrics.ts's, the figures of
 * each metric and group summary-figures.ts's, the threshold verdicts run-thresholds.ts's.
 *
 * Every percentile here comes from a merged histogram; nothing is averaged across groups.
 */
import { stepsOfScenario } from "../spec/named-scenarios.ts";
import type { Plan } from "../plan/plan.ts";
import { exitCodeOf, type RunStatus, type ScriptTimeout, type ShardTelemetry } from "./protocol.ts";
import { customMetricKinds } from "../spec/metrics-schema.ts";
import type { RunSpec } from "../spec/types.ts";
import { clockView, pathView } from "../metrics/measured-path.ts";
import { saturation } from "./saturation.ts";
import type { RunTotals } from "./run-totals.ts";
import { MetricStats } from "../metrics/metric-stats.ts";
import { VuSchedule, type VuProfile } from "../schedule/vu-schedule.ts";
import type { ThresholdOutcome, ThresholdSet } from "../metrics/thresholds.ts";
import { customMetricsSummary, DEFAULT_TREND_STATS, groupSummary } from "./summary-figures.ts";
import { k6Metrics } from "./summary-k6-metrics.ts";
import { parseRunThresholds, thresholdOutcomes, thresholdView, type ThresholdView } from "./run-thresholds.ts";
import { scriptErrorsSummary } from "./script-report.ts";
import { isTimingMetric, runVerdict } from "./run-verdict.ts";
import { failed, inconclusive, type Verdict } from "./verdict.ts";
import { round3, round6 } from "../metrics/rounding.ts";
import { notSentOf, scheduledIterations, type NotSent } from "./not-sent.ts";
import { groupTree } from "../metrics/check-results.ts";
import { isScriptRun } from "../spec/script-schema.ts";
import { runCostSummary } from "../plan/actual-cost.ts";

export interface ShardReport {
  readonly index: number;
  readonly region: string;
  readonly colo: string;
  readonly segment: string;
  readonly telemetry: ShardTelemetry | null;
}

export interface SummaryInput {
  readonly runId: string;
  readonly status: RunStatus;
  readonly spec: RunSpec;
  readonly plan: Plan;
  readonly t0Ms: number;
  /** Time measurement stopped (epoch ms); the run's elapsed time is endMs − t0Ms. */
  readonly endMs: number;
  readonly totals: RunTotals;
  readonly shards: readonly ShardReport[];
  readonly abortReason?: string | null;
  /** The k6 script ended the run (protocol.ts exitCodeOf): exec.test.abort(), or an exception in setup(). */
  readonly endedByScript?: boolean;
  /** Its setup() or teardown() ran past its timeout (exitCodeOf: 100, 101). */
  readonly scriptTimeout?: ScriptTimeout;
  /** Outcomes of the run's setup and teardown steps, when it has any. */
  readonly phases?: { readonly setup?: PhaseOutcome; readonly teardown?: PhaseOutcome };
  /** The run's thresholds as parsed when it was created (parseRunThresholds); parsed from the spec when absent. */
  readonly thresholds?: ThresholdSet;
  /** Shards (or aggregators) that never reported done: their measurements are missing. */
  readonly silentReporters?: number;
}

export interface PhaseOutcome {
  readonly ok: boolean;
  readonly steps: ReadonlyArray<{
    readonly name: string;
    readonly status: number;
    readonly durationMs: number;
    readonly ok: boolean;
    readonly problem: string | null;
  }>;
}

/** Error samples a summary lists: the most frequent (step, message) pairs. */
export const ERROR_SAMPLES_SHOWN = 10;

export interface ErrorSample {
  readonly step: string;
  /** "HTTP 503 Service Unavailable", "timeout after 10000 ms", "connection error: …". */
  readonly error: string;
  readonly count: number;
}

/** The run's distinct failures per step (MetricStats.errors), most frequent first. */
function errorSamples(totals: RunTotals, spec: RunSpec): ErrorSample[] {
  const samples = totals
    .steps()
    .flatMap((i) => Object.entries(totals.select({ step: i }).errors).map(([error, count]) => ({ step: spec.steps[i]?.name ?? `step${i}`, error, count })));
  return samples.sort((a, b) => b.count - a.count || a.step.localeCompare(b.step) || a.error.localeCompare(b.error)).slice(0, ERROR_SAMPLES_SHOWN);
}

/** The summary of a run that has not ended, with the status it is given: no verdict yet. */
export function buildSummary(input: SummaryInput) {
  const elapsedS = summaryElapsedS(input);
  return assembleSummary(input, elapsedS, thresholdOutcomes(input.spec, input.totals, elapsedS, input.thresholds).outcomes, null);
}

/** A status the coordinator ends a run with whatever its thresholds say. */
export type ForcedStatus = "aborted" | "failed" | "error";

/**
 * The end-of-run summary and its verdict in one pass: the thresholds are evaluated once,
 * the verdict is the run's (run-verdict.ts) unless the end was `forced` — failed by an
 * abortOnFail threshold, or aborted or in error, whose figures are incomplete and so never
 * a pass — and the summary is built once with it. The status is the verdict's kind, or
 * the forced one.
 */
export function buildFinalSummary(input: Omit<SummaryInput, "status">, forced: ForcedStatus | null): Summary {
  const elapsedS = summaryElapsedS(input);
  const set = input.thresholds ?? parseRunThresholds(input.spec);
  const { outcomes } = thresholdOutcomes(input.spec, input.totals, elapsedS, set);
  const reason = input.abortReason ?? "no reason given";
  const verdict: Verdict =
    forced === "failed"
      ? failed(reason)
      : forced === "aborted"
        ? inconclusive(`the run was aborted: ${reason}`)
        : forced === "error"
          ? inconclusive(`the run ended in error: ${reason}`)
          : runVerdict({
              outcomes,
              isTiming: (key) => isTimingMetric(key, (name) => customMetricKinds(input.spec)[name]),
              thresholdProblems: set.problems ?? [],
              generatorSaturated: generatorSaturated(input),
              silentReporters: input.silentReporters ?? 0,
              // The run's real shards, a tree's included: silentReporters counts them through it.
              reporters: input.plan.shards.length,
              notSent: runNotSent(input),
            });
  return assembleSummary({ ...input, status: forced ?? verdict.kind }, elapsedS, outcomes, verdict);
}

/** Whether edgeload itself (not the target) limited the run, as the summary's saturation says. */
function generatorSaturated(input: Omit<SummaryInput, "status">): boolean {
  const clock = clockView(input.shards.map((s) => s.telemetry));
  const sat = saturation(input.totals.select(), clock.resolutionMs);
  return sat.saturated && sat.causes.includes("generator");
}

/** What edgeload itself did not send of the run's schedule, against the run's bound (not-sent.ts). */
function runNotSent(input: Pick<SummaryInput, "spec" | "plan" | "totals">): NotSent {
  return notSentOf(input.totals.select().counters, scheduledIterations(input.spec, input.plan, input.totals), input.spec.maxNotSentShare);
}

function summaryElapsedS(input: Pick<SummaryInput, "t0Ms" | "endMs">): number {
  return Math.max(0.001, (input.endMs - input.t0Ms) / 1000);
}

function assembleSummary(input: SummaryInput, elapsedS: number, outcomes: readonly ThresholdOutcome[], verdict: Verdict | null) {
  const { spec, plan, totals } = input;
  const all = totals.select();
  const kinds = customMetricKinds(spec);
  const scenarioMetrics = Object.keys(kinds).length ? customMetricsSummary(all, kinds, elapsedS, spec.summaryTrendStats ?? []) : {};
  const declared = spec.metrics ?? {};
  const specMetrics = Object.fromEntries(Object.entries(scenarioMetrics).filter(([key]) => Object.hasOwn(declared, key.replace(/\{.*$/, ""))));
  const clock = clockView(input.shards.map((s) => s.telemetry));
  const sat = saturation(all, clock.resolutionMs);
  const thresholds = outcomes.map(thresholdView);

  return {
    // k6's root_group: each check's passes and fails in its group (ids are md5s of paths, which
    // k6-compat/handle-summary.ts adds where node:crypto is).
    root_group: { ...groupTree(all.hasCheckResults ? all.checkResults.results() : []), id: "d41d8cd98f00b204e9800998ecf8427e" },
    options: { summaryTrendStats: spec.summaryTrendStats ?? DEFAULT_TREND_STATS, summaryTimeUnit: "ms", noColor: false },
    state: { isStdOutTTY: false, isStdErrTTY: false, testRunDurationMs: round3(elapsedS * 1000) },
    metrics: k6Metrics(spec, totals, all, elapsedS, outcomes, scenarioMetrics),
    edgeload: {
      runId: input.runId,
      name: spec.name,
      status: input.status,
      /** Passed, failed or inconclusive with its reasons; null while the run goes on. */
      verdict,
      /** The exit code the CLI gives this run (k6's where k6 has one); null while it goes on. */
      exitCode: exitCodeOf(input.status, input.endedByScript, input.scriptTimeout),
      abortReason: input.abortReason ?? null,
      ...(input.endedByScript ? { endedByScript: true } : {}),
      ...(input.scriptTimeout ? { scriptTimeout: input.scriptTimeout } : {}),
      // A k6 script's uncaught iteration errors (core/run/script-report.ts); null for other runs.
      scriptErrors: isScriptRun(spec) ? scriptErrorsSummary(all) : null,
      target: spec.target,
      startedAt: new Date(input.t0Ms).toISOString(),
      endedAt: new Date(input.endMs).toISOString(),
      durationS: round3(elapsedS),
      executor: spec.executor,
      options: spec.options,
      scenario: spec.scenario ? { name: spec.scenario.name, seed: spec.scenario.seed, preset: spec.preset, metrics: scenarioMetrics } : null,
      // A closed-model run has no target rate: its VUs are the load (see `vus`); a run of
      // named scenarios has one per scenario (see `scenarios`).
      targetRatePerS: spec.vus || spec.scenarios?.length ? null : round3(plan.totalIterations / (spec.durationMs / 1000)),
      vus: spec.vus ? vusSummary(spec.vus) : null,
      customMetrics: specMetrics,
      // Trends of plain numbers (a k6 Trend without isTime): printed without a unit, as k6 prints them.
      unitlessTrends: spec.unitlessTrends ?? [],
      achievedRatePerS: round3(all.counters.iterations / elapsedS),
      plan: planSummary(spec, plan),
      // The plan's estimate beside what the run ran up, and the latency assumed beside the one measured (actual-cost.ts).
      cost: runCostSummary({ spec, plan, elapsedS, sentRequests: all.counters.sent, ttfb: all.trends.ttfb }),
      ...groupsSummary(input, all, elapsedS),
      saturated: sat.saturated,
      saturation: sat.reasons,
      saturationCauses: sat.causes,
      errors: errorSamples(totals, spec),
      thresholds,
      // Every threshold held (none failed, none without data) and, once the run ended, it
      // passed: an aborted or errored run's thresholds held over part of a run.
      thresholdsPassed: outcomes.every((o) => o.state === "passed") && (verdict === null || verdict.kind === "passed"),
      scenarios: scenariosSummary(spec, plan, totals, thresholds, elapsedS),
      setup: input.phases?.setup ?? null,
      teardown: input.phases?.teardown ?? null,
      clock,
      path: pathView(input.shards.map((s) => s.telemetry)),
    },
  };
}

/** The plan the run was given: its shards, regions and capacity, and the planner's notes. */
function planSummary(spec: RunSpec, plan: Plan) {
  return {
    shards: plan.shards.length,
    regions: spec.regions,
    connectionSlots: spec.connectionSlots,
    capacityPerShardPerS: plan.capacityPerShardPerS,
    peakPerShardPerS: plan.peakPerShardPerS,
    totalIterations: plan.totalIterations,
    ...(plan.closedModel ? { closedModel: plan.closedModel } : {}),
    notes: plan.notes,
  };
}

/**
 * The run's figures as a whole (with its failure counts) and per region, step, colo and
 * shard; each group's percentiles from its own merged histogram. `all` is the whole run's.
 */
function groupsSummary(input: SummaryInput, all: MetricStats, elapsedS: number) {
  const { spec, totals } = input;
  const c = all.counters;
  const notSent = runNotSent(input);
  const colos = new Map<string, MetricStats>();
  for (const s of input.shards) {
    let stats = colos.get(s.colo);
    if (!stats) colos.set(s.colo, (stats = new MetricStats()));
    stats.merge(totals.shard(s.index));
  }
  return {
    totals: {
      ...groupSummary(all, elapsedS),
      sent: c.sent,
      interrupted: c.interrupted,
      // Iterations edgeload itself did not send, by cause, and the share of the schedule above which the run cannot pass.
      notSent: { ...notSent, share: round6(notSent.share) },
      timeouts: c.timeouts,
      connectionErrors: c.connectionErrors,
      status4xx: c.status4xx,
      status5xx: c.status5xx,
    },
    regions: Object.fromEntries(totals.regions().map((r) => [r, groupSummary(totals.select({ region: r }), elapsedS)])),
    steps: Object.fromEntries(totals.steps().map((i) => [spec.steps[i]?.name ?? `step${i}`, groupSummary(totals.select({ step: i }), elapsedS)])),
    colos: Object.fromEntries([...colos.entries()].map(([colo, s]) => [colo, groupSummary(s, elapsedS)])),
    shards: input.shards.map((s) => ({ ...s, ...groupSummary(totals.shard(s.index), elapsedS) })),
  };
}

/**
 * Each named scenario of the run on its own: executor, start, its shards, totals over its
 * steps, and the thresholds filtered to it. Empty for a run of one scenario.
 */
function scenariosSummary(spec: RunSpec, plan: Plan, totals: RunTotals, thresholds: readonly ThresholdView[], elapsedS: number) {
  return Object.fromEntries(
    (spec.scenarios ?? []).map((s) => {
      const planned = plan.scenarios?.find((p) => p.name === s.name);
      const tag = new RegExp(`[{,]\\s*scenario:\\s*${s.name}\\s*[,}]`);
      const own = thresholds.filter((t) => tag.test(t.metric));
      return [
        s.name,
        {
          executor: s.spec.executor,
          startS: s.startMs / 1000,
          durationS: s.spec.durationMs / 1000,
          options: s.spec.options,
          vus: s.spec.vus ? vusSummary(s.spec.vus) : null,
          shards: planned?.shardCount ?? 0,
          steps: s.spec.steps.map((step) => `${s.name}.${step.name}`),
          totals: groupSummary(totals.select({ steps: new Set(stepsOfScenario(s)) }), elapsedS),
          thresholds: own,
          thresholdsPassed: own.every((t) => t.ok),
        },
      ];
    }),
  );
}

export type Summary = ReturnType<typeof buildSummary>;

/** The VU profile of a closed-model run as the summary shows it. */
export function vusSummary(vus: VuProfile) {
  return {
    peak: new VuSchedule(vus).peak,
    startVUs: vus.startVUs,
    stages: vus.stages.map((s) => ({ target: s.target, durationS: s.durationMs / 1000 })),
    gracefulRampDownS: vus.gracefulRampDownMs / 1000,
    ...(vus.iterations ? { iterations: vus.iterations } : {}),
    // The level was the user's: the plan's peak is the most it could be scaled to (maxVUs).
    ...(vus.externallyControlled ? { externallyControlled: { startVUs: vus.externallyControlled.startVUs, maxVUs: vus.startVUs } } : {}),
  };
}
