/**
 * The run spec: one schema, validated once at the edge, with k6's option names.
 *
 * Decoding goes in two steps, as k6 decodes scenarios: the common fields first, then the
 * executor's own fields chosen by `executor` (a discriminated union). Every problem of
 * both steps is reported at once, each with the path of the offending field. Defaults and
 * normalisation (durations to ms, rates to per-second) live here, so the rest of the
 * system only sees a `RunSpec`.
 *
 * A run sends either its own `steps` or a built-in `scenario` (scenarios/catalog.ts), whose
 * steps, seed set and custom metrics come from its definition. Own steps are picked one per
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
import type { RateStage } from "./arrival-schedule.ts";
import { parseDurationMs } from "./duration.ts";
import { SCENARIOS, SCENARIO_NAMES } from "../scenarios/catalog.ts";
import { captureError, type CaptureSpec } from "../scenarios/capture.ts";
import type { ScenarioOptions } from "../scenarios/scenario.ts";
import type { VuProfile } from "./vu-schedule.ts";
import { expandPreset } from "./presets.ts";
import type { Problem } from "./problem.ts";
import { SEED_NAME } from "./seed-set.ts";
import { DATA_SELECTIONS, type DataSpec } from "./seed-records.ts";
import { templateErrors, usesSecrets, type TemplateScope } from "./template.ts";
import { parseNamedScenarios } from "./named-scenarios.ts";
import { parseSeriesSelector } from "./prometheus.ts";
import { METRIC_KINDS, parseThresholds, type MetricKind, type ThresholdInput } from "./thresholds.ts";

/** Cloudflare's Durable Object location hints. */
export const LOCATION_HINTS = ["wnam", "enam", "sam", "weur", "eeur", "apac", "apac-ne", "apac-se", "oc", "afr", "me"] as const;
export type LocationHint = (typeof LOCATION_HINTS)[number];

export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;

export type { Problem } from "./problem.ts";

export type SpecResult = { ok: true; spec: RunSpec } | { ok: false; problems: Problem[] };

const duration = (what: string) =>
  z.union([z.string(), z.number()]).transform((v, ctx) => {
    const ms = parseDurationMs(v);
    if (ms === undefined) {
      ctx.addIssue({ code: "custom", message: `${JSON.stringify(v)} is not a ${what} like "30s", "1m30s" or "500ms"` });
      return z.NEVER;
    }
    return ms;
  });

const positiveInt = z.number().int().positive();
const nonNegative = z.number().nonnegative();

const check = z
  .object({
    name: z.string().min(1).optional(),
    status: z.union([z.number().int().min(100).max(599), z.array(z.number().int().min(100).max(599)).min(1)]).optional(),
    bodyIncludes: z.string().min(1).optional(),
  })
  .strict()
  .refine((c) => c.status !== undefined || c.bodyIncludes !== undefined, { message: "a check needs `status` or `bodyIncludes`" });

const CAPTURE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const METRIC_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** What a step records into a declared custom metric: its request duration (trend), its success (rate), a count (counter). */
export const RECORD_KINDS = ["duration", "success", "count"] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];
const RECORD_METRIC_KIND: Readonly<Record<RecordKind, MetricKind>> = { duration: "trend", success: "rate", count: "counter" };

/**
 * Metrics of runs with SSE steps (milliseconds for trends): time to the response headers,
 * to the first event, how long streams stayed open, events received (comments such as
 * heartbeats not counted), and streams that ended before their hold time was over.
 */
export const SSE_METRICS: Readonly<Record<string, MetricKind>> = {
  sse_time_to_open: "trend",
  sse_time_to_first_message: "trend",
  sse_stream_duration: "trend",
  sse_messages: "counter",
  sse_streams_ended_early: "counter",
};

const captureSource = z.union([
  z.object({ json: z.string().min(1) }).strict(),
  z.object({ header: z.string().min(1) }).strict(),
  z.object({ regex: z.string().min(1) }).strict(),
], { message: "a capture is one of {json: \"$.path\"}, {header: \"name\"} or {regex: \"pattern\"}" });

const step = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "use 1–64 letters, digits, _ . -").optional(),
    method: z.enum(HTTP_METHODS).default("GET"),
    path: z.string().startsWith("/", "must start with /").default("/"),
    headers: z.record(z.string(), z.string()).default({}),
    body: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional(),
    expect: z
      .object({ status: z.union([z.number().int().min(100).max(599), z.array(z.number().int().min(100).max(599)).min(1)]) })
      .strict()
      .optional(),
    weight: positiveInt.max(1000).default(1),
    checks: z.array(check).default([]),
    capture: z.record(z.string().regex(CAPTURE_NAME, "use 1–64 letters, digits and _"), captureSource).default({}),
    think: z.union([duration("think time"), z.object({ min: duration("think time"), max: duration("think time") }).strict()]).optional(),
    record: z.record(z.string(), z.enum(RECORD_KINDS)).default({}),
    sse: z.object({ holdFor: duration("hold time").optional() }).strict().optional(),
    scrape: z.object({ series: z.array(z.string().min(1)).min(1, "name at least one series").max(50) }).strict().optional(),
  })
  .strict();

const thresholdEntry = z.union([
  z.string(),
  z
    .object({ threshold: z.string(), abortOnFail: z.boolean().optional(), delayAbortEval: z.union([z.string(), z.number()]).optional() })
    .strict(),
]);

const scenario = z
  .object({
    name: z.enum(SCENARIO_NAMES as [string, ...string[]], { message: `must be one of ${SCENARIO_NAMES.join(", ")}` }),
    seed: z.string().regex(SEED_NAME, "a seed set name (see GET /v1/seeds)").optional(),
    clientId: z.string().min(1).optional(),
    clientSecret: z.string().min(1).optional(),
    adminSecret: z.string().min(1).optional(),
    redirectUri: z.string().refine((u) => URL.canParse(u), "must be an absolute URL").optional(),
    scope: z.string().min(1).default("openid profile"),
    audience: z.string().min(1).optional(),
  })
  .strict();

const common = z
  .object({
    name: z.string().max(120).default("run"),
    target: z.string().refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), "must be an absolute http or https URL"),
    steps: z.array(step).min(1, "at least one step is required").max(50).optional(),
    flow: z.enum(["pick", "sequence"]).default("pick"),
    metrics: z.record(z.string().regex(METRIC_NAME, "use 1–64 letters, digits and _"), z.object({ type: z.enum(["counter", "rate", "trend"]) }).strict()).default({}),
    scenario: scenario.optional(),
    data: z.object({
      seed: z.string().regex(SEED_NAME, "a seed set name (see GET /v1/seeds)"),
      select: z.enum(DATA_SELECTIONS).default("per-vu"),
      exponent: z.number().min(0).max(10).default(1),
    }).strict().optional(),
    preset: z.string().optional(),
    durationScale: z.number().positive().max(10).optional(),
    executor: z.string().optional(),
    timeout: duration("timeout").default(10_000),
    shards: z.union([positiveInt, z.literal("auto")]).default("auto"),
    regions: z.array(z.enum(LOCATION_HINTS)).min(1).default(["wnam", "enam", "weur", "apac"]),
    connectionSlots: positiveInt.max(1000).default(6),
    expectedLatency: duration("latency").default(50),
    preAllocatedVUs: positiveInt.optional(),
    maxVUs: positiveInt.optional(),
    thresholds: z.record(z.string(), z.array(thresholdEntry)).default({}),
    vars: z.record(z.string(), z.string()).default({}),
    secrets: z.record(z.string(), z.string()).default({}),
    tags: z.record(z.string(), z.string()).default({}),
    // Decoded by their own parts: once-per-run steps (run-phases) and named scenarios.
    setup: z.unknown().optional(),
    teardown: z.unknown().optional(),
    // Executor-specific fields, decoded in the second step.
    rate: z.unknown().optional(),
    timeUnit: z.unknown().optional(),
    duration: z.unknown().optional(),
    startRate: z.unknown().optional(),
    stages: z.unknown().optional(),
    vus: z.unknown().optional(),
    startVUs: z.unknown().optional(),
    gracefulRampDown: z.unknown().optional(),
  })
  .strict();

/** The fields decoded by the executor's own schema. */
const EXECUTOR_FIELDS = ["executor", "rate", "timeUnit", "duration", "startRate", "stages", "vus", "startVUs", "gracefulRampDown"] as const;

const constantArrivalRate = z.object({
  executor: z.literal("constant-arrival-rate"),
  rate: nonNegative,
  timeUnit: duration("time unit").default(1000),
  duration: duration("duration"),
});

const rampingArrivalRate = z.object({
  executor: z.literal("ramping-arrival-rate"),
  startRate: nonNegative.default(0),
  timeUnit: duration("time unit").default(1000),
  stages: z.array(z.object({ target: nonNegative, duration: duration("duration") }).strict()).min(1, "at least one stage is required"),
});

const constantVus = z.object({
  executor: z.literal("constant-vus"),
  vus: positiveInt,
  duration: duration("duration"),
}).strict();

const rampingVus = z.object({
  executor: z.literal("ramping-vus"),
  // k6's default: one VU at the start.
  startVUs: z.number().int().nonnegative().default(1),
  stages: z.array(z.object({ target: z.number().int().nonnegative(), duration: duration("duration") }).strict()).min(1, "at least one stage is required"),
  gracefulRampDown: duration("graceful ramp-down").default(30_000),
}).strict();

const EXECUTORS = {
  "constant-arrival-rate": constantArrivalRate,
  "ramping-arrival-rate": rampingArrivalRate,
  "constant-vus": constantVus,
  "ramping-vus": rampingVus,
} as const;

/** Closed-model executors: VUs run their flow back to back instead of arriving at a rate. */
export const isClosedModel = (executor: ExecutorName) => executor === "constant-vus" || executor === "ramping-vus";
export type ExecutorName = keyof typeof EXECUTORS;

export interface StepSpec {
  readonly name: string;
  readonly method: (typeof HTTP_METHODS)[number];
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Serialised request body (objects become JSON with a content-type header). */
  readonly body: string | null;
  /** Statuses that count as success for http_req_failed (k6 default: 200–399). */
  readonly expectedStatuses: readonly number[] | null;
  readonly weight: number;
  readonly checks: readonly { name: string; status?: readonly number[]; bodyIncludes?: string }[];
  /** Values taken from the response for later steps' `{{captured.NAME}}`. */
  readonly capture: Readonly<Record<string, CaptureSpec>>;
  /** Think time after the step (a uniform draw in [minMs, maxMs]), or null. */
  readonly think: { readonly minMs: number; readonly maxMs: number } | null;
  /** Declared custom metrics this step records into, and what it records. */
  readonly record: Readonly<Record<string, RecordKind>>;
  /**
   * A Server-Sent Events stream: opened like a request (its connection slot is given back
   * at the headers), then read for `holdMs` (null: until the scenario ends).
   */
  readonly sse?: { readonly holdMs: number | null } | null;
  /** A Prometheus scrape: the response is parsed and these series stored with the run. */
  readonly scrape?: { readonly series: readonly string[] } | null;
}

/** A built-in scenario as a run uses it. */
export interface ScenarioSpec {
  readonly name: string;
  /** Seed set in R2 that shards load once, or null for scenarios that read none. */
  readonly seed: string | null;
  /** Client credentials and URIs; the secrets in here are redacted like `secrets`. */
  readonly options: ScenarioOptions;
}

export interface RunSpec {
  readonly name: string;
  /** Base URL without a trailing slash; step paths are appended to it. */
  readonly target: string;
  readonly steps: readonly StepSpec[];
  /** "pick": one step per iteration by weight; "sequence": every step, in order. */
  readonly flow: "pick" | "sequence";
  /** Custom metrics declared by the spec (besides a built-in scenario's). */
  readonly metrics: Readonly<Record<string, MetricKind>>;
  readonly scenario: ScenarioSpec | null;
  /** The seed set the spec's own steps read records from (`{{data.FIELD}}`), or null. */
  readonly data?: DataSpec | null;
  /** The preset the profile came from, e.g. "rps300" (null when given explicitly). */
  readonly preset: string | null;
  /** "scenarios" for a run of several named scenarios, each with its own executor. */
  readonly executor: ExecutorName | "scenarios";
  /** The load profile as per-second rate stages (see ArrivalSchedule); empty for VU executors. */
  readonly stages: readonly RateStage[];
  /** The closed-model profile (see VuSchedule), or null for arrival-rate executors. */
  readonly vus: VuProfile | null;
  readonly durationMs: number;
  /** Peak arrival rate; 0 for VU executors, whose rate follows from the target's latency. */
  readonly peakRatePerS: number;
  readonly timeoutMs: number;
  readonly shards: number | "auto";
  readonly regions: readonly LocationHint[];
  readonly connectionSlots: number;
  readonly expectedLatencyMs: number;
  /** Maximum iterations in flight across the run (k6's maxVUs; the peak VUs for VU executors); beyond it, iterations drop. */
  readonly maxInFlight: number;
  readonly thresholds: Readonly<Record<string, readonly ThresholdInput[]>>;
  readonly vars: Readonly<Record<string, string>>;
  readonly secrets: Readonly<Record<string, string>>;
  readonly tags: Readonly<Record<string, string>>;
  /** The executor options as given (normalised), echoed in summaries. */
  readonly options: Readonly<Record<string, unknown>>;
  /** Steps run once, in order, before any shard starts (by the coordinator, not per shard). */
  readonly setup?: readonly StepSpec[];
  /** Steps run once after the load has ended. */
  readonly teardown?: readonly StepSpec[];
  /** What the setup steps captured, filled in before shards start: `{{setup.NAME}}`. */
  readonly setupData?: Readonly<Record<string, string>>;
  /**
   * Named scenarios (k6's `scenarios`), each run by its own shards from its `startMs`; empty
   * for a run of one. This spec's `steps` are then all of theirs, named `scenario.step`.
   */
  readonly scenarios?: readonly NamedScenario[];
}

/** One scenario of a run with several: its own single-scenario spec and where it sits. */
export interface NamedScenario {
  readonly name: string;
  /** Offset from the run's T0 (whole seconds, so its windows line up with the run's). */
  readonly startMs: number;
  /** Index of its first step in the run's `steps`. */
  readonly stepOffset: number;
  readonly spec: RunSpec;
}

export function toProblems(error: z.ZodError, prefix: (string | number)[] = []): Problem[] {
  return error.issues.map((issue) => ({
    field: [...prefix, ...issue.path].map(String).join(".") || "(root)",
    detail: issue.message,
  }));
}

/**
 * Validates and normalises a run spec, reporting every problem at once. A spec with
 * `scenarios` is several named ones in one run (core/named-scenarios.ts), each decoded
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
  const input = withPreset(raw, problems);
  const base = common.safeParse(input);
  if (!base.success) problems.push(...toProblems(base.error));
  const scenarioName = (input as { scenario?: { name?: unknown } } | null)?.scenario?.name;
  const definition = typeof scenarioName === "string" ? SCENARIOS[scenarioName] : undefined;

  const executorName = (input as { executor?: unknown } | null)?.executor;
  const executorSchema = typeof executorName === "string" ? EXECUTORS[executorName as ExecutorName] : undefined;
  if (!executorSchema) {
    problems.push({ field: "executor", detail: `must be one of ${Object.keys(EXECUTORS).join(", ")}` });
  }
  const executorInput = typeof input === "object" && input !== null
    ? Object.fromEntries(Object.entries(input).filter(([k, v]) => (EXECUTOR_FIELDS as readonly string[]).includes(k) && v !== undefined))
    : {};
  const exec = executorSchema?.safeParse(executorInput);
  if (exec && !exec.success) {
    for (const issue of exec.error.issues) {
      // An option of another executor (e.g. `rate` with constant-vus): name each field.
      if (issue.code === "unrecognized_keys") {
        for (const key of issue.keys) problems.push({ field: key, detail: `not an option of the ${String(executorName)} executor` });
      } else {
        problems.push(...toProblems(new z.ZodError([issue])));
      }
    }
  }
  const thresholds = parseThresholds(thresholdInput(input), { ...definition?.metrics, ...metricsInput(input), ...(hasSseStep(input) ? SSE_METRICS : {}) });
  if (!thresholds.ok) {
    for (const message of thresholds.errors) {
      const [field, ...rest] = message.split(": ");
      problems.push({ field: field!, detail: rest.join(": ") });
    }
  }
  if (!base.success || !exec?.success) return { ok: false, problems: dedupe(problems) };

  const b = base.data;
  const e = exec.data;
  const vus = vuProfile(e);
  const stages = vus ? [] : rateStages(e as ArrivalOptions);
  const durationMs = vus ? vus.stages.reduce((a, s) => a + s.durationMs, 0) : stages.reduce((a, s) => a + s.durationMs, 0);
  const peakRatePerS = Math.max(0, ...stages.map((s) => Math.max(s.fromPerS, s.toPerS)));

  if (durationMs <= 0) problems.push({ field: e.executor.startsWith("constant-") ? "duration" : "stages", detail: "the run must last longer than 0s" });
  if (vus) {
    for (const field of ["preAllocatedVUs", "maxVUs"] as const) {
      if (b[field] !== undefined) problems.push({ field, detail: `applies to arrival-rate executors; ${e.executor} runs its VUs (${e.executor === "constant-vus" ? "vus" : "startVUs, stages"})` });
    }
  } else {
    for (const field of ["vus", "startVUs", "gracefulRampDown"] as const) {
      if ((input as Record<string, unknown>)[field] !== undefined) problems.push({ field, detail: `applies to the constant-vus and ramping-vus executors only` });
    }
  }
  for (const name of Object.keys(b.metrics)) {
    if (Object.hasOwn(METRIC_KINDS, name) || Object.hasOwn(SSE_METRICS, name) || (definition && Object.hasOwn(definition.metrics, name))) {
      problems.push({ field: `metrics.${name}`, detail: "a built-in metric has this name" });
    }
  }
  if (b.maxVUs !== undefined && b.preAllocatedVUs !== undefined && b.maxVUs < b.preAllocatedVUs) {
    problems.push({ field: "maxVUs", detail: `must be at least preAllocatedVUs (${b.preAllocatedVUs})` });
  }
  if (b.steps && b.scenario) problems.push({ field: "scenario", detail: "give either steps or a built-in scenario, not both" });
  if (!b.steps && !b.scenario) problems.push({ field: "steps", detail: `at least one step is required, or a built-in scenario (${SCENARIO_NAMES.join(", ")})` });
  const scenarioSpec = b.scenario && definition ? scenarioOf(b.scenario, definition, problems) : null;
  const phases = setupNames ? { setup: [], teardown: [], setupNames } : runPhases(input, { vars: b.vars, secrets: b.secrets }, problems);
  const stepScope = { vars: b.vars, secrets: b.secrets, metrics: b.metrics, setup: phases.setupNames, data: b.data !== undefined };
  if (b.data && b.scenario) problems.push({ field: "data", detail: "a built-in scenario reads its own seed set (scenario.seed)" });
  if (b.data && b.data.select !== "zipf" && (input as { data?: { exponent?: unknown } }).data?.exponent !== undefined) {
    problems.push({ field: "data.exponent", detail: "applies to select \"zipf\" only" });
  }
  const steps: StepSpec[] = scenarioSpec ? definition!.steps.map((s) => ({
    name: s.name, method: s.method as StepSpec["method"], path: s.path, headers: {}, body: null, expectedStatuses: null, weight: 1, checks: [],
    capture: {}, think: null, record: {}, sse: null, scrape: null,
  })) : stepSpecs(b.steps ?? [], "steps", stepScope, problems);
  if (problems.length) return { ok: false, problems: dedupe(problems) };

  const { executor: _executor, ...options } = e;
  return {
    ok: true,
    spec: {
      name: b.name,
      target: b.target.replace(/\/+$/, ""),
      steps,
      flow: b.flow,
      metrics: { ...Object.fromEntries(Object.entries(b.metrics).map(([k, m]) => [k, m.type])), ...(steps.some((st) => st.sse) ? SSE_METRICS : {}) },
      scenario: scenarioSpec,
      data: b.data ?? null,
      preset: b.preset ?? null,
      executor: e.executor,
      stages,
      vus,
      durationMs,
      peakRatePerS,
      timeoutMs: b.timeout,
      shards: b.shards,
      regions: b.regions,
      connectionSlots: b.connectionSlots,
      expectedLatencyMs: b.expectedLatency,
      maxInFlight: vus ? Math.max(1, Math.max(vus.startVUs, ...vus.stages.map((s) => s.target))) : b.maxVUs ?? b.preAllocatedVUs ?? defaultInFlight(peakRatePerS),
      thresholds: b.thresholds,
      vars: b.vars,
      secrets: b.secrets,
      tags: b.tags,
      options,
      setup: phases.setup,
      teardown: phases.teardown,
      setupData: {},
      scenarios: [],
    },
  };
}

const phaseSteps = z.array(step).min(1, "give at least one step, or leave it out").max(20);

/**
 * The run's setup and teardown steps, run once each (k6's setup() and teardown()): always a
 * sequence; what setup captures is `{{setup.NAME}}` in every later step.
 */
export function runPhases(input: unknown, scope: Omit<StepScope, "setup" | "metrics">, problems: Problem[]) {
  const raw = (typeof input === "object" && input !== null ? input : {}) as { setup?: unknown; teardown?: unknown };
  const decode = (list: "setup" | "teardown", setupNames: ReadonlySet<string>): StepSpec[] => {
    if (raw[list] === undefined) return [];
    const parsed = phaseSteps.safeParse(raw[list]);
    if (!parsed.success) {
      problems.push(...toProblems(parsed.error, [list]));
      return [];
    }
    parsed.data.forEach((s, i) => {
      for (const key of ["record", "sse", "scrape", "think"] as const) {
        const value = s[key];
        // `record` defaults to {}: only a non-empty one is a problem.
        if (value !== undefined && !(key === "record" && Object.keys(value).length === 0)) {
          problems.push({ field: `${list}.${i}.${key}`, detail: `${list} steps run once outside the load; ${key} applies to the load's steps` });
        }
      }
    });
    return stepSpecs(parsed.data, list, { ...scope, metrics: {}, setup: setupNames }, problems);
  };
  const setup = decode("setup", new Set());
  const setupNames = new Set(setup.flatMap((s) => Object.keys(s.capture)));
  return { setup, teardown: decode("teardown", setupNames), setupNames };
}

type RawStep = z.output<typeof step>;

interface StepScope {
  readonly vars: Readonly<Record<string, string>>;
  readonly secrets: Readonly<Record<string, string>>;
  readonly metrics: Readonly<Record<string, { type: MetricKind }>>;
  /** Names the run's setup steps capture, for `{{setup.NAME}}`. */
  readonly setup: ReadonlySet<string>;
  /** Whether the spec reads seed records (`{{data.FIELD}}`). */
  readonly data?: boolean;
}

/**
 * Decoded steps of one list (`steps`, `setup` or `teardown`): templates checked against
 * what earlier steps capture, records against declared metrics, names made unique.
 */
function stepSpecs(raw: readonly RawStep[], list: string, scope: StepScope, problems: Problem[]): StepSpec[] {
  const b = scope;
  const names = new Set<string>();
  const capturedBefore = new Set<string>();
  const setup = Object.fromEntries([...scope.setup].map((n) => [n, ""]));
  return raw.map((s, i, all) => {
    // `{{captured.X}}` must name a value an earlier step captures (in list order).
    const templateScope: TemplateScope = { vars: b.vars, secrets: b.secrets, captured: new Set(capturedBefore), setup, data: scope.data ?? false };
    for (const [name, source] of Object.entries(s.capture)) {
      const error = captureError(source as CaptureSpec);
      if (error) problems.push({ field: `${list}.${i}.capture.${name}`, detail: error });
      capturedBefore.add(name);
    }
    for (const [metric, what] of Object.entries(s.record)) {
      const declared = b.metrics[metric]?.type;
      if (!declared) problems.push({ field: `${list}.${i}.record.${metric}`, detail: `declare it under metrics first, e.g. "metrics": {"${metric}": {"type": "${RECORD_METRIC_KIND[what]}"}}` });
      else if (declared !== RECORD_METRIC_KIND[what]) problems.push({ field: `${list}.${i}.record.${metric}`, detail: `"${what}" goes into a ${RECORD_METRIC_KIND[what]}, but ${metric} is a ${declared}` });
    }
    const think = s.think === undefined ? null : typeof s.think === "number" ? { minMs: s.think, maxMs: s.think } : { minMs: s.think.min, maxMs: s.think.max };
    if (think && think.maxMs < think.minMs) problems.push({ field: `${list}.${i}.think.max`, detail: "must be at least min" });
    const name = s.name ?? (all.length === 1 ? "default" : `step${i + 1}`);
    if (names.has(name)) problems.push({ field: `${list}.${i}.name`, detail: `duplicate step name "${name}"` });
    names.add(name);
    const body = s.body === undefined ? null : typeof s.body === "string" ? s.body : JSON.stringify(s.body);
    const headers = { ...s.headers };
    if (s.body !== undefined && typeof s.body !== "string" && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
      headers["content-type"] = "application/json";
    }
    const templated: [string, string][] = [["path", s.path], ...Object.entries(headers).map(([k, v]) => [`headers.${k}`, v] as [string, string])];
    if (body !== null) templated.push(["body", body]);
    for (const [field, text] of templated) {
      for (const detail of templateErrors(text, templateScope)) problems.push({ field: `${list}.${i}.${field}`, detail });
    }
    if (s.method === "GET" || s.method === "HEAD") {
      if (body !== null) problems.push({ field: `${list}.${i}.body`, detail: `a ${s.method} request cannot have a body` });
    }
    if (s.sse && s.scrape) problems.push({ field: `${list}.${i}.scrape`, detail: "a step is either an SSE stream or a scrape" });
    if ((s.sse || s.scrape) && s.method !== "GET") problems.push({ field: `${list}.${i}.method`, detail: `${s.sse ? "an SSE stream" : "a scrape"} is a GET` });
    for (const [j, selector] of (s.scrape?.series ?? []).entries()) {
      const parsed = parseSeriesSelector(selector);
      if (!parsed.ok) problems.push({ field: `${list}.${i}.scrape.series.${j}`, detail: parsed.error.detail });
    }
    if (s.sse && !Object.keys(headers).some((h) => h.toLowerCase() === "accept")) headers.accept = "text/event-stream";
    const asList = (v: number | number[] | undefined) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]);
    return {
      name,
      method: s.method,
      path: s.path,
      headers,
      body,
      expectedStatuses: asList(s.expect?.status) ?? null,
      weight: s.weight,
      checks: s.checks.map((c, j) => ({
        name: c.name ?? (c.status !== undefined ? `status is ${asList(c.status)!.join(" or ")}` : `body includes ${JSON.stringify(c.bodyIncludes)}`) + (s.checks.length > 1 && !c.name ? ` #${j + 1}` : ""),
        ...(c.status !== undefined ? { status: asList(c.status)! } : {}),
        ...(c.bodyIncludes !== undefined ? { bodyIncludes: c.bodyIncludes } : {}),
      })),
      capture: s.capture as Record<string, CaptureSpec>,
      think,
      record: s.record,
      sse: s.sse ? { holdMs: s.sse.holdFor ?? null } : null,
      scrape: s.scrape ? { series: s.scrape.series } : null,
    };
  });
}

/**
 * Replaces `preset` (and `durationScale`) by the executor options and thresholds it
 * stands for; the spec's own thresholds win for the metrics they name.
 */
function withPreset(input: unknown, problems: Problem[]): unknown {
  if (typeof input !== "object" || input === null) return input;
  const spec = input as Record<string, unknown>;
  if (spec.preset === undefined) {
    if (spec.durationScale !== undefined) problems.push({ field: "durationScale", detail: "applies to a preset only" });
    return input;
  }
  const scenarioName = (spec.scenario as { name?: unknown } | undefined)?.name;
  if (typeof spec.preset !== "string" || typeof scenarioName !== "string") {
    problems.push({ field: "preset", detail: "a preset name like \"rps300\" for the spec's built-in scenario" });
    return input;
  }
  const clashing = EXECUTOR_FIELDS.filter((k) => spec[k] !== undefined);
  if (clashing.length) problems.push({ field: "preset", detail: `a preset sets the load profile; remove ${clashing.join(", ")}` });
  const scale = spec.durationScale ?? 1;
  const expanded = expandPreset(scenarioName, spec.preset, typeof scale === "number" ? scale : NaN);
  if (!expanded.ok) {
    problems.push({ field: "preset", detail: expanded.error });
    return input;
  }
  const { ratePerS: _rate, thresholds, ...profile } = expanded.value;
  const own = typeof spec.thresholds === "object" && spec.thresholds !== null ? spec.thresholds : {};
  return { ...spec, ...profile, thresholds: { ...thresholds, ...own } };
}

/** The scenario part of a spec, checking the seed and options its definition needs. */
function scenarioOf(s: z.output<typeof scenario>, definition: (typeof SCENARIOS)[string], problems: Problem[]): ScenarioSpec {
  if (definition.seedKind && !s.seed) problems.push({ field: "scenario.seed", detail: `the ${definition.name} scenario reads a ${definition.seedKind} seed set; name one (see GET /v1/seeds)` });
  if (!definition.seedKind && s.seed) problems.push({ field: "scenario.seed", detail: `the ${definition.name} scenario reads no seed set` });
  for (const need of definition.needs) {
    if (!s[need]) problems.push({ field: `scenario.${need}`, detail: `the ${definition.name} scenario needs ${need}` });
  }
  const { name, seed, ...options } = s;
  return { name, seed: seed ?? null, options };
}

/** Custom metrics of the spec's scenario and its own `metrics`, by kind (for thresholds). */
export function customMetricKinds(spec: Pick<RunSpec, "scenario"> & Partial<Pick<RunSpec, "metrics">>): Readonly<Record<string, MetricKind>> {
  // Specs stored before `metrics` existed have none.
  return { ...(spec.scenario ? SCENARIOS[spec.scenario.name]?.metrics ?? {} : {}), ...spec.metrics };
}

/** The spec's declared metrics from raw input, when well-formed (else the schema reports it). */
function metricsInput(input: unknown): Record<string, MetricKind> {
  const raw = (input as { metrics?: unknown } | null)?.metrics;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return {};
  const out: Record<string, MetricKind> = {};
  for (const [name, m] of Object.entries(raw)) {
    const type = (m as { type?: unknown } | null)?.type;
    if (type === "counter" || type === "rate" || type === "trend") out[name] = type;
  }
  return out;
}

function hasSseStep(input: unknown): boolean {
  const steps = (input as { steps?: unknown } | null)?.steps;
  return Array.isArray(steps) && steps.some((st) => typeof st === "object" && st !== null && "sse" in st);
}

/** The thresholds map from raw input, when it has the right shape (else the schema reports it). */
export function thresholdInput(input: unknown): Record<string, ThresholdInput[]> {
  const raw = (input as { thresholds?: unknown } | null)?.thresholds;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return {};
  return Object.fromEntries(Object.entries(raw).filter(([, v]) => Array.isArray(v))) as Record<string, ThresholdInput[]>;
}

/**
 * Without preAllocatedVUs/maxVUs, allow one second's worth of peak arrivals in flight
 * (at least 50): enough for responses up to ~1 s before iterations start to drop.
 */
function defaultInFlight(peakRatePerS: number): number {
  return Math.max(50, Math.ceil(peakRatePerS));
}

type ArrivalOptions = z.output<typeof constantArrivalRate> | z.output<typeof rampingArrivalRate>;
type ExecutorOptions = ArrivalOptions | z.output<typeof constantVus> | z.output<typeof rampingVus>;

/** The VU profile of a closed-model executor, or null for arrival-rate ones. */
function vuProfile(e: ExecutorOptions): VuProfile | null {
  if (e.executor === "constant-vus") return { startVUs: e.vus, stages: [{ target: e.vus, durationMs: e.duration }], gracefulRampDownMs: 30_000 };
  if (e.executor === "ramping-vus") {
    return { startVUs: e.startVUs, stages: e.stages.map((s) => ({ target: s.target, durationMs: s.duration })), gracefulRampDownMs: e.gracefulRampDown };
  }
  return null;
}

function rateStages(e: ArrivalOptions): RateStage[] {
  const perS = (rate: number) => (rate * 1000) / e.timeUnit;
  if (e.executor === "constant-arrival-rate") {
    return [{ durationMs: e.duration, fromPerS: perS(e.rate), toPerS: perS(e.rate) }];
  }
  let from = perS(e.startRate);
  return e.stages.map((s) => {
    const stage = { durationMs: s.duration, fromPerS: from, toPerS: perS(s.target) };
    from = stage.toPerS;
    return stage;
  });
}

export function dedupe(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.field}\u0000${p.detail}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const SECRET_HEADERS = /^(authorization|cookie|proxy-authorization|x-api-key|x-auth-token)$/i;
export const REDACTED = "[redacted]";

/**
 * The spec as it may be stored or shown: secrets removed, and header values or bodies that
 * carry credentials (auth headers, `{{secrets.…}}` templates) replaced by "[redacted]";
 * likewise the values setup captured (often a token) and every named scenario's spec.
 */
export function redactSpec(spec: RunSpec): RunSpec {
  const options = spec.scenario?.options;
  const redactSteps = (steps: readonly StepSpec[]) => steps.map((s) => ({
    ...s,
    headers: Object.fromEntries(
      Object.entries(s.headers).map(([k, v]) => [k, SECRET_HEADERS.test(k) || usesSecrets(v) ? REDACTED : v]),
    ),
    body: s.body !== null && usesSecrets(s.body) ? REDACTED : s.body,
  }));
  return {
    ...spec,
    secrets: Object.fromEntries(Object.keys(spec.secrets).map((k) => [k, REDACTED])),
    ...(spec.setupData ? { setupData: Object.fromEntries(Object.keys(spec.setupData).map((k) => [k, REDACTED])) } : {}),
    ...(spec.setup ? { setup: redactSteps(spec.setup) } : {}),
    ...(spec.teardown ? { teardown: redactSteps(spec.teardown) } : {}),
    ...(spec.scenarios ? { scenarios: spec.scenarios.map((s) => ({ ...s, spec: redactSpec(s.spec) })) } : {}),
    scenario: spec.scenario && options ? {
      ...spec.scenario,
      options: {
        ...options,
        ...(options.clientSecret ? { clientSecret: REDACTED } : {}),
        ...(options.adminSecret ? { adminSecret: REDACTED } : {}),
      },
    } : spec.scenario,
    steps: redactSteps(spec.steps),
  };
}
