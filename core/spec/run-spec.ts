/**
 * The run spec: one schema, validated once at the edge, with k6's option names.
 *
 * Decoding goes in two steps, as k6 decodes scenarios: the common fields first, then the
 * executor's own fields chosen by `executor` (a discriminated union). Every problem of
 * both steps is reported at once, each with the path of the offending field. Defaults and
 * normalisation (durations to ms, rates to per-second) live here, so the rest of the
 * system only sees a `RunSpec`.
 *
 * A run sends either its own `steps` or a built-in `scenario` (core/spec/builtin-scenarios.ts),
 * whose steps, seed set and custom metrics come from its outline. Own steps are picked one per
 * iteration by weight, or with `flow: "sequence"` all run in order, each step optionally
 * capturing values from its response for later steps, thinking after it, and recording
 * its duration or success into custom metrics declared under `metrics`.
 *
 * Executors: the open-model `constant-arrival-rate` and `ramping-arrival-rate` (rate
 * stages, see ArrivalSchedule) and the closed-model `constant-vus` and `ramping-vus` (VU
 * stages, see VuSchedule), with k6's option names and defaults. A `preset` (presets.ts)
 * stands for a scenario's executor options and thresholds; thresholds given alongside it
 * replace the preset's for the same metric.
 *
 * @example
 * parseRunSpec({ target: "http://127.0.0.1:9090", steps: [{ path: "/delay?ms=20" }],
 *                executor: "constant-arrival-rate", rate: 200, duration: "30s" })
 * parseRunSpec({ target: "https://auth.example", preset: "rps300",
 *                scenario: { name: "introspect", seed: "tokens-3k", clientId: "…", clientSecret: "…" } })
 */
import { z } from "zod";
import { SCENARIO_NAMES, type ScenarioOutline } from "./builtin-scenarios.ts";
import { parseNamedScenarios } from "./named-scenarios.ts";
import type { Problem } from "./input-problem.ts";
import { METRIC_KINDS, parseThresholds } from "../metrics/thresholds.ts";
import { dataSchema } from "./data-schema.ts";
import { maxCostSchema } from "./budget-schema.ts";
import { outputsSchema } from "./outputs-schema.ts";
import { decodeExecutor, defaultInFlight, rateStages, vuProfile, type ExecutorOptions } from "./executor-schema.ts";
import { dedupe, duration, maxNotSentShareSchema, positiveInt, toProblems } from "./fields.ts";
import { metricsInput, metricsSchema, thresholdInput, thresholdsSchema, unitlessTrends } from "./metrics-schema.ts";
import { SCRIPT_REQUEST_TIMEOUT_MS, scriptSchema } from "./script-schema.ts";
import { scenarioDefinition, scenarioOf, scenarioSchema, scenarioSteps, withCorrectness, withPreset } from "./scenario-schema.ts";
import { hasSseStep, runPhases, SSE_METRICS, step, stepSpecs } from "./step-schema.ts";
import { LOCATION_HINTS, type RunSpec, type SpecResult, type StepSpec } from "./types.ts";
import type { RateStage } from "../schedule/arrival-schedule.ts";
import type { VuProfile } from "../schedule/vu-schedule.ts";

// The spec's sections live in core/spec/, one schema each; this module assembles them.
export * from "./types.ts";
export { customMetricKinds, thresholdInput } from "./metrics-schema.ts";
export { dedupe, toProblems } from "./fields.ts";
export { runPhases, SSE_METRICS } from "./step-schema.ts";

/** k6's summaryTrendStats: avg, min, med, max, count, or p(N) with N from 0 to 100. */
const summaryTrendStatsSchema = z
  .array(z.string().regex(/^(avg|min|med|max|count|p\((100|\d{1,2})(\.\d+)?\))$/, "avg, min, med, max, count or p(N), N from 0 to 100"))
  .min(1)
  .optional();

/** A request's timeout when the spec gives none and runs its own steps (a script's: SCRIPT_REQUEST_TIMEOUT_MS). */
const STEP_REQUEST_TIMEOUT_MS = 10_000;

/** The first decoding step: every field but the executor's own options. */
const common = z
  .object({
    name: z.string().max(120).default("run"),
    target: z.string().refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), "must be an absolute http or https URL"),
    steps: z.array(step).min(1, "at least one step is required").max(50).optional(),
    flow: z.enum(["pick", "sequence"]).default("pick"),
    metrics: metricsSchema,
    scenario: scenarioSchema.optional(),
    script: scriptSchema.optional(),
    data: dataSchema.optional(),
    preset: z.string().optional(),
    durationScale: z.number().positive().max(10).optional(),
    executor: z.string().optional(),
    // Absent: edgeload's 10 s for a spec's own steps, k6's 60 s for a script's requests.
    timeout: duration("timeout").optional(),
    shards: z.union([positiveInt, z.literal("auto")]).default("auto"),
    regions: z.array(z.enum(LOCATION_HINTS)).min(1).default(["wnam", "enam", "weur", "apac"]),
    connectionSlots: positiveInt.max(1000).default(6),
    expectedLatency: duration("latency").default(50),
    preAllocatedVUs: positiveInt.optional(),
    maxVUs: positiveInt.optional(),
    thresholds: thresholdsSchema,
    /** false: a built-in scenario's correctness thresholds are not applied (spec/scenario-schema.ts). */
    correctnessThresholds: z.boolean().default(true),
    vars: z.record(z.string(), z.string()).default({}),
    secrets: z.record(z.string(), z.string()).default({}),
    tags: z.record(z.string(), z.string()).default({}),
    summaryTrendStats: summaryTrendStatsSchema,
    maxNotSentShare: maxNotSentShareSchema,
    maxCost: maxCostSchema,
    outputs: outputsSchema,
    // Decoded by their own parts: once-per-run steps (run-phases) and named scenarios.
    setup: z.unknown().optional(),
    teardown: z.unknown().optional(),
    // Executor-specific fields, decoded in the second step (spec/executor-schema.ts).
    rate: z.unknown().optional(),
    timeUnit: z.unknown().optional(),
    duration: z.unknown().optional(),
    startRate: z.unknown().optional(),
    stages: z.unknown().optional(),
    vus: z.unknown().optional(),
    startVUs: z.unknown().optional(),
    gracefulRampDown: z.unknown().optional(),
    gracefulStop: z.unknown().optional(),
    iterations: z.unknown().optional(),
    maxDuration: z.unknown().optional(),
  })
  .strict();

/**
 * Validates and normalises a run spec, reporting every problem at once. A spec with
 * `scenarios` is several named ones in one run (core/spec/named-scenarios.ts), each decoded
 * like a spec of its own.
 */
export function parseRunSpec(raw: unknown): SpecResult {
  if (typeof raw === "object" && raw !== null && "scenarios" in raw) {
    return parseNamedScenarios(raw as Record<string, unknown>, (input, setupNames) => parseOneScenario(input, setupNames));
  }
  return parseOneScenario(raw, null);
}

/** One scenario's spec; `setupNames` when the run's setup was decoded by the caller. */
function parseOneScenario(raw: unknown, setupNames: ReadonlySet<string> | null): SpecResult {
  const problems: Problem[] = [];
  const input = withCorrectness(withPreset(raw, problems));
  const base = common.safeParse(input);
  if (!base.success) problems.push(...toProblems(base.error));
  const definition = scenarioDefinition(input);
  const exec = decodeExecutor(input, problems);
  problems.push(...thresholdProblems(input, definition));
  if (!base.success || !exec) return { ok: false, problems: dedupe(problems) };

  const b = base.data;
  const load = loadOf(exec);
  problems.push(...executorFitProblems(b, exec, input, load), ...metricNameProblems(b.metrics, definition));
  if (b.maxVUs !== undefined && b.preAllocatedVUs !== undefined && b.maxVUs < b.preAllocatedVUs) {
    problems.push({ field: "maxVUs", detail: `must be at least preAllocatedVUs (${b.preAllocatedVUs})` });
  }
  problems.push(...sourceProblems(b));
  const scenarioSpec = b.scenario && definition ? scenarioOf(b.scenario, definition, problems) : null;
  const phases = setupNames ? { setup: [], teardown: [], setupNames } : runPhases(input, { vars: b.vars, secrets: b.secrets }, problems);
  const stepScope = { vars: b.vars, secrets: b.secrets, metrics: b.metrics, setup: phases.setupNames, data: b.data !== undefined };
  problems.push(...dataProblems(b, input));
  const steps: StepSpec[] = scenarioSpec ? scenarioSteps(definition!) : stepSpecs(b.steps ?? [], "steps", stepScope, problems);
  if (problems.length) return { ok: false, problems: dedupe(problems) };
  return { ok: true, spec: specOf(b, exec, load, { steps, scenario: scenarioSpec, setup: phases.setup, teardown: phases.teardown }) };
}

/** The common fields as decoded (the first step). */
type Common = z.output<typeof common>;

/** The thresholds' problems, parsed against every metric the spec may record: built-in, the scenario's, its own, SSE's. */
function thresholdProblems(input: unknown, definition: ScenarioOutline | undefined): Problem[] {
  const thresholds = parseThresholds(thresholdInput(input), { ...definition?.metrics, ...metricsInput(input), ...(hasSseStep(input) ? SSE_METRICS : {}) });
  if (thresholds.ok) return [];
  return thresholds.errors.map((message) => {
    const [field, ...rest] = message.split(": ");
    return { field: field!, detail: rest.join(": ") };
  });
}

/** The load an executor's options make: a VU profile (closed model) or rate stages (open), its length and peak rate. */
interface Load {
  readonly vus: VuProfile | null;
  readonly stages: RateStage[];
  readonly durationMs: number;
  readonly peakRatePerS: number;
}

function loadOf(e: ExecutorOptions): Load {
  const vus = vuProfile(e);
  const stages = rateStages(e);
  return {
    vus,
    stages,
    durationMs: vus ? vus.stages.reduce((a, s) => a + s.durationMs, 0) : stages.reduce((a, s) => a + s.durationMs, 0),
    peakRatePerS: Math.max(0, ...stages.map((s) => Math.max(s.fromPerS, s.toPerS))),
  };
}

/** A load that lasts no time, and fields given that belong to the other model's executors. */
function executorFitProblems(b: Common, e: ExecutorOptions, input: unknown, load: Load): Problem[] {
  const problems: Problem[] = [];
  const byDuration = e.executor.startsWith("constant-") || e.executor === "externally-controlled";
  // k6's externally-controlled takes 0 for "no end"; a run here has one (its shards' deadlines, its cost).
  const noEnd = e.executor === "externally-controlled" ? " (k6's 0, no end, is not supported: give how long it runs)" : "";
  if (load.durationMs <= 0) problems.push({ field: byDuration ? "duration" : "stages", detail: `the run must last longer than 0s${noEnd}` });
  if (load.vus) {
    for (const field of ["preAllocatedVUs", "maxVUs"] as const) {
      // externally-controlled's maxVUs is its own option (executor-schema.ts).
      if (field === "maxVUs" && e.executor === "externally-controlled") continue;
      if (b[field] !== undefined)
        problems.push({
          field,
          detail: `applies to arrival-rate executors; ${e.executor} runs its VUs (${e.executor === "constant-vus" ? "vus" : "startVUs, stages"})`,
        });
    }
  } else {
    for (const field of ["vus", "startVUs", "gracefulRampDown", "iterations", "maxDuration"] as const) {
      if ((input as Record<string, unknown>)[field] !== undefined)
        problems.push({ field, detail: `applies to the VU executors only (constant-vus, ramping-vus, per-vu-iterations, shared-iterations)` });
    }
  }
  return problems;
}

/** Custom metrics named as a built-in one (k6's, SSE's, or the built-in scenario's). */
function metricNameProblems(metrics: Common["metrics"], definition: ScenarioOutline | undefined): Problem[] {
  return Object.keys(metrics)
    .filter((name) => Object.hasOwn(METRIC_KINDS, name) || Object.hasOwn(SSE_METRICS, name) || (definition && Object.hasOwn(definition.metrics, name)))
    .map((name) => ({ field: `metrics.${name}`, detail: "a built-in metric has this name" }));
}

/** What the run sends: its own steps, a built-in scenario or a k6 script, exactly one of them. */
function sourceProblems(b: Common): Problem[] {
  const problems: Problem[] = [];
  if (b.script && (b.scenario || b.data))
    problems.push({ field: "script", detail: "a k6 script makes its own requests: no built-in scenario or data with it" });
  if (b.steps && b.scenario) problems.push({ field: "scenario", detail: "give either steps or a built-in scenario, not both" });
  if (!b.steps && !b.scenario)
    problems.push({ field: "steps", detail: `at least one step is required, or a built-in scenario (${SCENARIO_NAMES.join(", ")})` });
  return problems;
}

/** A data set beside a built-in scenario (which reads its own), and a zipf option on another selection. */
function dataProblems(b: Common, input: unknown): Problem[] {
  const problems: Problem[] = [];
  if (b.data && b.scenario) problems.push({ field: "data", detail: "a built-in scenario reads its own seed set (scenario.seed)" });
  if (b.data && b.data.select !== "zipf" && (input as { data?: { exponent?: unknown } }).data?.exponent !== undefined) {
    problems.push({ field: "data.exponent", detail: 'applies to select "zipf" only' });
  }
  return problems;
}

/** The spec of a valid scenario: its decoded fields, normalised. */
function specOf(b: Common, e: ExecutorOptions, load: Load, flow: Pick<RunSpec, "steps" | "scenario" | "setup" | "teardown">): RunSpec {
  const { executor: _executor, ...options } = e;
  const { vus, stages, durationMs, peakRatePerS } = load;
  const steps = flow.steps;
  return {
    name: b.name,
    target: b.target.replace(/\/+$/, ""),
    steps,
    flow: b.flow,
    metrics: { ...Object.fromEntries(Object.entries(b.metrics).map(([k, m]) => [k, m.type])), ...(steps.some((st) => st.sse) ? SSE_METRICS : {}) },
    scenario: flow.scenario,
    script: b.script ?? null,
    data: b.data ?? null,
    preset: b.preset ?? null,
    executor: e.executor,
    stages,
    vus,
    durationMs,
    peakRatePerS,
    timeoutMs: b.timeout ?? (b.script ? SCRIPT_REQUEST_TIMEOUT_MS : STEP_REQUEST_TIMEOUT_MS),
    gracefulStopMs: e.gracefulStop,
    shards: b.shards,
    regions: b.regions,
    connectionSlots: b.connectionSlots,
    expectedLatencyMs: b.expectedLatency,
    ...inFlightOf(b, load),
    thresholds: b.thresholds,
    vars: b.vars,
    secrets: b.secrets,
    tags: b.tags,
    ...(b.summaryTrendStats ? { summaryTrendStats: b.summaryTrendStats } : {}),
    ...(unitlessTrends(b.metrics).length ? { unitlessTrends: unitlessTrends(b.metrics) } : {}),
    ...(b.maxNotSentShare !== undefined ? { maxNotSentShare: b.maxNotSentShare } : {}),
    maxCostUsd: b.maxCost ?? null,
    outputs: b.outputs,
    options,
    setup: flow.setup,
    teardown: flow.teardown,
    setupData: {},
    scenarios: [],
  };
}

/**
 * Iterations a run may have in flight: a VU executor's peak VUs; an arrival-rate one's
 * maxVUs or preAllocatedVUs (and which it was, as k6 Cloud bills it), else a default for
 * its peak rate.
 */
function inFlightOf(b: Common, { vus, peakRatePerS }: Load): Pick<RunSpec, "maxInFlight" | "maxInFlightFrom" | "preAllocatedVUs"> {
  if (vus) return { maxInFlight: Math.max(1, Math.max(vus.startVUs, ...vus.stages.map((s) => s.target))) };
  return {
    maxInFlight: b.maxVUs ?? b.preAllocatedVUs ?? defaultInFlight(peakRatePerS),
    ...(b.maxVUs !== undefined
      ? { maxInFlightFrom: "maxVUs" as const }
      : b.preAllocatedVUs !== undefined
        ? { maxInFlightFrom: "preAllocatedVUs" as const }
        : {}),
    ...(b.preAllocatedVUs !== undefined ? { preAllocatedVUs: b.preAllocatedVUs } : {}),
  };
}
