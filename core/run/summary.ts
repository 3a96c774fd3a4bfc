/**
 * The end-of-run summary: k6's `--summary-export` layout for the metrics k6 has, so k6
 * tooling reads it, plus an `edgeload` section with the plan, per-region, per-step,
 * per-colo and per-shard breakdowns, saturation and thresholds.
 *
 * Every percentile here comes from a merged histogram; nothing is averaged across groups.
 */
import { countOf, customAggregate, metricAggregate, rateOf, TREND_OF } from "../metrics/aggregate.ts";
import { stepsOfScenario } from "../spec/named-scenarios.ts";
import type { Plan } from "../plan/plan.ts";
import type { RunStatus, ShardTelemetry } from "./protocol.ts";
import { customMetricKinds } from "../spec/metrics-schema.ts";
import type { RunSpec } from "../spec/types.ts";
import { clockView, pathView } from "../metrics/measured-path.ts";
import { saturation } from "./saturation.ts";
import type { RunTotals } from "./run-totals.ts";
import type { Histogram } from "../metrics/histogram.ts";
import { MetricStats, type TrendName } from "../metrics/metric-stats.ts";
import { VuSchedule, type VuProfile } from "../schedule/vu-schedule.ts";
import {
  evaluateThresholds,
  METRIC_KINDS,
  parseMetricKey,
  parseThresholds,
  shouldAbort,
  thresholdSet,
  type MetricKind,
  type MetricName,
  type Threshold,
  type ThresholdOutcome,
  type ThresholdSet,
} from "../metrics/thresholds.ts";

/** k6's summary-export trend keys. p(99) is added because every Authrim preset uses it. */
const TREND_KEYS = [
  ["avg", "avg"],
  ["min", "min"],
  ["med", "med"],
  ["max", "max"],
  ["p(90)", "p90"],
  ["p(95)", "p95"],
  ["p(99)", "p99"],
] as const;

export interface TrendSummary {
  readonly avg: number;
  readonly min: number;
  readonly med: number;
  readonly max: number;
  readonly "p(90)": number;
  readonly "p(95)": number;
  readonly "p(99)": number;
  // A run's summaryTrendStats may add more keys (`count`, `p(50)`, `p(99.9)`, …): read them
  // by name (trendStat in summary-text.ts), as k6's own summary data holds them.
}

/** The trend keys every summary has, in k6's order. */
export const DEFAULT_TREND_STATS: readonly string[] = TREND_KEYS.map(([k]) => k);

/** Trend figures in milliseconds (k6 units), or null without samples; `extra` adds summaryTrendStats' others. */
export function trendSummary(stats: MetricStats, trend: TrendName, extra: readonly string[] = []): TrendSummary | null {
  return histogramSummary(stats.trends[trend], extra);
}

function histogramSummary(h: Histogram, extra: readonly string[] = []): TrendSummary | null {
  if (h.count === 0) return null;
  const ms = (us: number) => round3(us / 1000);
  const out: TrendSummary & Record<string, number> = {
    avg: ms(h.mean),
    min: ms(h.min),
    med: ms(h.quantile(0.5)),
    max: ms(h.max),
    "p(90)": ms(h.quantile(0.9)),
    "p(95)": ms(h.quantile(0.95)),
    "p(99)": ms(h.quantile(0.99)),
  };
  // k6's summaryTrendStats: any percentile, and the count (core/spec: validated when parsed).
  for (const stat of extra) {
    if (stat in out) continue;
    if (stat === "count") out.count = h.count;
    const p = /^p\((\d+(?:\.\d+)?)\)$/.exec(stat);
    if (p) out[stat] = ms(h.quantile(Math.min(100, Number(p[1])) / 100));
  }
  return out;
}

/** The compact per-group figures used in breakdowns (region, step, colo, shard). */
export interface GroupSummary {
  readonly requests: number;
  readonly ratePerS: number;
  readonly failed: number;
  readonly failedRate: number;
  readonly dropped: number;
  readonly statuses: Readonly<Record<string, number>>;
  readonly http_req_duration: TrendSummary | null;
  readonly http_req_waiting: TrendSummary | null;
  readonly corrected: TrendSummary | null;
  readonly schedule_lag: TrendSummary | null;
  readonly slot_wait: TrendSummary | null;
  readonly client_delay: TrendSummary | null;
}

export function groupSummary(stats: MetricStats, elapsedS: number): GroupSummary {
  const c = stats.counters;
  return {
    requests: c.completed,
    ratePerS: elapsedS > 0 ? round3(c.completed / elapsedS) : 0,
    failed: c.failed,
    failedRate: round6(rateOf(stats, "http_req_failed") ?? 0),
    dropped: c.dropped,
    statuses: stats.statuses,
    http_req_duration: trendSummary(stats, "duration"),
    http_req_waiting: trendSummary(stats, "ttfb"),
    corrected: trendSummary(stats, "corrected"),
    schedule_lag: trendSummary(stats, "lag"),
    slot_wait: trendSummary(stats, "slotWait"),
    client_delay: trendSummary(stats, "clientDelay"),
  };
}

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
  /** Outcomes of the run's setup and teardown steps, when it has any. */
  readonly phases?: { readonly setup?: PhaseOutcome; readonly teardown?: PhaseOutcome };
  /** The run's thresholds as parsed when it was created (parseRunThresholds); parsed from the spec when absent. */
  readonly thresholds?: ThresholdSet;
}

/** A threshold as the summary shows it. */
export interface ThresholdView {
  readonly metric: string;
  readonly threshold: string;
  readonly observed: number | null;
  readonly ok: boolean;
  readonly abortOnFail: boolean;
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

/**
 * A run's thresholds parsed once, with the custom metrics its spec declares; a spec whose
 * thresholds do not parse (refused by the API before any run) has none.
 */
export function parseRunThresholds(spec: RunSpec): ThresholdSet {
  const parsed = parseThresholds(spec.thresholds, customMetricKinds(spec));
  return thresholdSet(parsed.ok ? parsed.value : []);
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
    const stats = selectTagged(spec, totals, t.tags);
    return t.custom ? customAggregate(stats, t, elapsedS) : metricAggregate(stats, t.metric as MetricName, t.aggregation, elapsedS);
  });
  return { thresholds, outcomes };
}

/** The merged stats a k6 sub-metric's tag filters select (region, step, scenario). */
function selectTagged(spec: RunSpec, totals: RunTotals, tags: Threshold["tags"]): MetricStats {
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
  const steps = acrossScenarios ?? (tags.scenario === undefined ? undefined : new Set(scenario ? stepsOfScenario(scenario) : []));
  return totals.select({ ...(tags.region ? { region: tags.region } : {}), ...(step !== undefined ? { step } : {}), ...(steps ? { steps } : {}) });
}

/**
 * A built-in metric's values in k6's summary-export shape, over `stats`: a sub-metric named
 * by a threshold key shows its figures, as k6 shows `http_req_duration{step:login}`.
 */
function builtInValues(stats: MetricStats, metric: MetricName, elapsedS: number, extra: readonly string[] = []): Record<string, number> | undefined {
  const trend = TREND_OF[metric];
  if (trend) return (trendSummary(stats, trend, extra) ?? undefined) as Record<string, number> | undefined;
  const c = stats.counters;
  if (metric === "http_req_failed") return { passes: c.failed, fails: c.completed - c.failed, value: round6(c.completed ? c.failed / c.completed : 0) };
  if (metric === "checks") {
    const all = c.checksPassed + c.checksFailed;
    return all ? { passes: c.checksPassed, fails: c.checksFailed, value: round6(c.checksPassed / all) } : undefined;
  }
  const count = countOf(stats, metric as "http_reqs" | "iterations" | "dropped_iterations");
  return { count, rate: round6(count / elapsedS) };
}

/** The abortOnFail threshold that fails at `elapsedMs` since T0, if any. */
export function shouldAbortRun(spec: RunSpec, totals: RunTotals, elapsedMs: number, set: ThresholdSet = parseRunThresholds(spec)): Threshold | undefined {
  if (!set.abortOnFail) return undefined;
  const { thresholds, outcomes } = thresholdOutcomes(spec, totals, Math.max(0.001, elapsedMs / 1000), set);
  return shouldAbort(thresholds, outcomes, elapsedMs);
}

/** A threshold's verdict as the summary and the live dashboard show it. */
export function thresholdView(o: ThresholdOutcome): ThresholdView {
  return { metric: o.key, threshold: o.source, observed: o.observed === null ? null : round3(o.observed), ok: o.ok, abortOnFail: o.abortOnFail };
}

/** The summary of a run with the status it is given (a live one, or one ended `error`). */
export function buildSummary(input: SummaryInput) {
  const elapsedS = summaryElapsedS(input);
  return assembleSummary(input, elapsedS, thresholdOutcomes(input.spec, input.totals, elapsedS, input.thresholds).outcomes);
}

/**
 * The end-of-run summary and its verdict in one pass: the thresholds are evaluated once,
 * the status is `forced` (aborted, failed by abortOnFail, error) or theirs — passed when
 * every one holds — and the summary is built once with it.
 */
export function buildFinalSummary(input: Omit<SummaryInput, "status">, forced: RunStatus | null): Summary {
  const elapsedS = summaryElapsedS(input);
  const { outcomes } = thresholdOutcomes(input.spec, input.totals, elapsedS, input.thresholds);
  const status: RunStatus = forced ?? (outcomes.every((o) => o.ok) ? "passed" : "failed");
  return assembleSummary({ ...input, status }, elapsedS, outcomes);
}

function summaryElapsedS(input: Pick<SummaryInput, "t0Ms" | "endMs">): number {
  return Math.max(0.001, (input.endMs - input.t0Ms) / 1000);
}

function assembleSummary(input: SummaryInput, elapsedS: number, outcomes: readonly ThresholdOutcome[]) {
  const { spec, plan, totals } = input;
  const all = totals.select();
  const c = all.counters;
  // k6's summaryTrendStats: the trend figures the run asked for beside the usual ones.
  const extra = spec.summaryTrendStats ?? [];

  const failedByMetric = (metricKey: string) => {
    const entries = outcomes.filter((o) => o.key === metricKey);
    return entries.length ? { thresholds: Object.fromEntries(entries.map((o) => [o.source, !o.ok])) } : {};
  };
  // Each built-in metric with its thresholds' verdicts; one without samples is left out.
  const metric = (name: MetricName) => {
    const values = builtInValues(all, name, elapsedS, extra);
    return values ? { ...values, ...failedByMetric(name) } : undefined;
  };

  const metrics: Record<string, unknown> = {
    http_reqs: metric("http_reqs"),
    iterations: metric("iterations"),
    dropped_iterations: metric("dropped_iterations"),
    http_req_duration: metric("http_req_duration"),
    http_req_waiting: metric("http_req_waiting"),
    http_req_failed: metric("http_req_failed"),
    data_received: { count: c.bytesReceived, rate: round3(c.bytesReceived / elapsedS) },
    checks: metric("checks"),
  };
  for (const [k, v] of Object.entries(metrics)) if (v === undefined) delete metrics[k];
  // Tag-filtered threshold keys are k6 sub-metrics, e.g. "http_req_duration{step:login}",
  // with their own figures; a key with no expression still shows them, as in k6.
  for (const key of Object.keys(spec.thresholds)) {
    const parsed = key.includes("{") && !(key in metrics) ? parseMetricKey(key) : null;
    if (!parsed || !Object.hasOwn(METRIC_KINDS, parsed.metric)) continue;
    metrics[key] = { ...builtInValues(selectTagged(spec, totals, parsed.tags), parsed.metric as MetricName, elapsedS, extra), ...failedByMetric(key) };
  }
  for (const o of outcomes) {
    if (o.key.includes("{") && !(o.key in metrics)) metrics[o.key] = failedByMetric(o.key);
  }

  const kinds = customMetricKinds(spec);
  const scenarioMetrics = Object.keys(kinds).length ? customMetricsSummary(all, kinds, elapsedS, extra) : {};
  for (const [key, value] of Object.entries(scenarioMetrics)) metrics[key] = { ...value, ...failedByMetric(key) };
  const declared = spec.metrics ?? {};
  const specMetrics = Object.fromEntries(Object.entries(scenarioMetrics).filter(([key]) => Object.hasOwn(declared, key.replace(/\{.*$/, ""))));

  const byShard = input.shards.map((s) => ({ ...s, ...groupSummary(totals.shard(s.index), elapsedS) }));
  const colos = new Map<string, MetricStats>();
  for (const s of input.shards) {
    let stats = colos.get(s.colo);
    if (!stats) colos.set(s.colo, (stats = new MetricStats()));
    stats.merge(totals.shard(s.index));
  }
  const clock = clockView(input.shards.map((s) => s.telemetry));
  const sat = saturation(all, clock.resolutionMs);
  const failedThresholds = outcomes.filter((o) => !o.ok);
  const thresholds = outcomes.map(thresholdView);

  return {
    root_group: { name: "", path: "", id: "d41d8cd98f00b204e9800998ecf8427e", groups: {}, checks: {} },
    options: { summaryTrendStats: spec.summaryTrendStats ?? DEFAULT_TREND_STATS, summaryTimeUnit: "ms", noColor: false },
    state: { isStdOutTTY: false, isStdErrTTY: false, testRunDurationMs: round3(elapsedS * 1000) },
    metrics,
    edgeload: {
      runId: input.runId,
      name: spec.name,
      status: input.status,
      abortReason: input.abortReason ?? null,
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
      achievedRatePerS: round3(c.iterations / elapsedS),
      plan: {
        shards: plan.shards.length,
        regions: spec.regions,
        connectionSlots: spec.connectionSlots,
        capacityPerShardPerS: plan.capacityPerShardPerS,
        peakPerShardPerS: plan.peakPerShardPerS,
        totalIterations: plan.totalIterations,
        ...(plan.closedModel ? { closedModel: plan.closedModel } : {}),
        notes: plan.notes,
      },
      totals: {
        ...groupSummary(all, elapsedS),
        sent: c.sent,
        interrupted: c.interrupted,
        timeouts: c.timeouts,
        connectionErrors: c.connectionErrors,
        status4xx: c.status4xx,
        status5xx: c.status5xx,
      },
      regions: Object.fromEntries(totals.regions().map((r) => [r, groupSummary(totals.select({ region: r }), elapsedS)])),
      steps: Object.fromEntries(totals.steps().map((i) => [spec.steps[i]?.name ?? `step${i}`, groupSummary(totals.select({ step: i }), elapsedS)])),
      colos: Object.fromEntries([...colos.entries()].map(([colo, s]) => [colo, groupSummary(s, elapsedS)])),
      shards: byShard,
      saturated: sat.saturated,
      saturation: sat.reasons,
      saturationCauses: sat.causes,
      errors: errorSamples(totals, spec),
      thresholds,
      thresholdsPassed: failedThresholds.length === 0,
      scenarios: scenariosSummary(spec, plan, totals, thresholds, elapsedS),
      setup: input.phases?.setup ?? null,
      teardown: input.phases?.teardown ?? null,
      clock,
      path: pathView(input.shards.map((s) => s.telemetry)),
    },
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
  };
}

export type CustomMetricSummary =
  | { readonly type: "counter"; readonly count: number; readonly rate: number }
  | { readonly type: "rate"; readonly passes: number; readonly fails: number; readonly value: number }
  | ({ readonly type: "trend" } & TrendSummary);

/**
 * A scenario's custom metrics in k6's summary shapes: every declared one (a counter never
 * incremented shows 0 — "zero false positives" is a result), plus each tagged variant that
 * was recorded, e.g. `false_positives{type:revoked}`. A rate or trend without samples is
 * left out.
 */
export function customMetricsSummary(
  stats: MetricStats,
  declared: Readonly<Record<string, MetricKind>>,
  elapsedS: number,
  extra: readonly string[] = [],
): Record<string, CustomMetricSummary> {
  const custom = stats.hasCustom ? stats.custom : null;
  const names = new Set([...Object.keys(declared), ...(custom ? [...custom.counters.keys(), ...custom.rates.keys(), ...custom.trends.keys()] : [])]);
  const out: Record<string, CustomMetricSummary> = {};
  for (const key of [...names].sort()) {
    const kind = declared[key.replace(/\{.*$/, "")];
    if (kind === "counter") {
      const count = custom?.counters.get(key) ?? 0;
      out[key] = { type: "counter", count, rate: round6(count / elapsedS) };
    } else if (kind === "rate") {
      const r = custom?.rates.get(key);
      if (r && r[1] > 0) out[key] = { type: "rate", passes: r[0], fails: r[1] - r[0], value: round6(r[0] / r[1]) };
    } else if (kind === "trend") {
      const h = custom?.trends.get(key);
      const t = h ? histogramSummary(h, extra) : null;
      if (t) out[key] = { type: "trend", ...t };
    }
  }
  return out;
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
