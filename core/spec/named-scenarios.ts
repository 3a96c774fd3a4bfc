/**
 * Several named scenarios in one run, as k6's `scenarios` option: each has its own
 * executor, steps, `startTime` and thresholds, and runs in parallel with the others.
 *
 * Each scenario is decoded as a spec of its own (run-spec.ts) from the run's shared fields
 * (target, vars, secrets, tags, regions, connection slots, timeout, expected latency) plus
 * its own; the run's `setup` and `teardown` are shared by all. The run's spec then lists
 * every scenario's steps under qualified names (`streams.open`), so windows, queries and
 * reports tell them apart, and its thresholds are the run's own plus each scenario's,
 * rewritten to k6's tag filter: `http_req_duration` inside scenario `admin` becomes
 * `http_req_duration{scenario:admin}`.
 *
 * Each scenario gets its own shards (core/plan/plan.ts), sized for its own load, so one shard
 * runs one executor as in a run of one scenario.
 *
 * @example
 * parseRunSpec({ target: "http://127.0.0.1:9090", scenarios: {
 *   streams: { executor: "constant-vus", vus: 200, duration: "1m", steps: [{ path: "/app/config/stream", sse: {} }] },
 *   admin: { executor: "constant-arrival-rate", rate: 1, duration: "50s", startTime: "5s", steps: [...] } } })
 */
import { parseDurationMs } from "./duration.ts";
import { interruptAtMs } from "../schedule/graceful-stop.ts";
import { maxCostSchema } from "./budget-schema.ts";
import { dedupe, maxNotSentShareSchema, toProblems } from "./fields.ts";
import { customMetricKinds, thresholdInput, unitlessTrends } from "./metrics-schema.ts";
import { runPhases } from "./step-schema.ts";
import type { NamedScenario, Problem, RunSpec, SpecResult } from "./types.ts";
import { parseThresholds, type MetricKind, type ThresholdInput } from "../metrics/thresholds.ts";
import { z } from "zod";

/** Scenario names become step-name prefixes and tag values: no dots. */
const SCENARIO_NAME = /^[A-Za-z0-9_-]{1,32}$/;
const MAX_SCENARIOS = 10;

/** Fields of the run itself when it has `scenarios`. */
const RUN_FIELDS = new Set([
  "name",
  "target",
  "metrics",
  "vars",
  "secrets",
  "tags",
  "regions",
  "connectionSlots",
  "timeout",
  "expectedLatency",
  "thresholds",
  "setup",
  "teardown",
  "scenarios",
  "maxCost",
  "summaryTrendStats",
  "maxNotSentShare",
]);
/** Run fields every scenario takes unless it sets its own. */
const INHERITED = ["target", "vars", "secrets", "tags", "regions", "connectionSlots", "timeout", "expectedLatency", "summaryTrendStats"] as const;
/** Run fields a scenario cannot set. */
const RUN_ONLY = ["name", "target", "vars", "secrets", "setup", "teardown", "scenarios", "maxCost", "maxNotSentShare"] as const;

const startTime = z.union([z.string(), z.number()]).optional();

type ParseOne = (input: unknown, setupNames: ReadonlySet<string>) => SpecResult;

/**
 * Decodes a run with `scenarios`, each scenario by `parseOne` (run-spec.ts's decoding of a
 * spec of one scenario), reporting every problem at once.
 */
export function parseNamedScenarios(raw: Record<string, unknown>, parseOne: ParseOne): SpecResult {
  const problems: Problem[] = [];
  for (const key of Object.keys(raw)) {
    if (!RUN_FIELDS.has(key)) problems.push({ field: key, detail: "with `scenarios`, this goes inside each scenario" });
  }
  const entries = typeof raw.scenarios === "object" && raw.scenarios !== null && !Array.isArray(raw.scenarios) ? Object.entries(raw.scenarios) : null;
  if (!entries || entries.length === 0 || entries.length > MAX_SCENARIOS) {
    problems.push({ field: "scenarios", detail: `an object of 1–${MAX_SCENARIOS} named scenarios, e.g. {"browse": {"executor": …, "steps": […]}}` });
    return { ok: false, problems };
  }
  const shared = { vars: stringMap(raw.vars), secrets: stringMap(raw.secrets) };
  const budget = maxCostSchema.safeParse(raw.maxCost);
  if (!budget.success) problems.push(...toProblems(budget.error, ["maxCost"]));
  const notSentBound = maxNotSentShareSchema.safeParse(raw.maxNotSentShare);
  if (!notSentBound.success) problems.push(...toProblems(notSentBound.error, ["maxNotSentShare"]));
  const phases = runPhases(raw, shared, problems);

  const scenarios: NamedScenario[] = [];
  let stepOffset = 0;
  for (const [name, value] of entries) {
    const decoded = decodeScenario(raw, name, value, (input) => parseOne(input, phases.setupNames), problems);
    if (!decoded) continue;
    scenarios.push({ name: decoded.name, startMs: decoded.startMs, stepOffset, spec: decoded.spec });
    stepOffset += decoded.spec.steps.length;
  }

  // k6 runs an externally-controlled scenario alone: the user's level is the whole test's.
  const controlled = scenarios.find((s) => s.spec.executor === "externally-controlled");
  if (controlled && entries.length > 1) {
    problems.push({
      field: `scenarios.${controlled.name}.executor`,
      detail: "externally-controlled runs alone: it cannot be combined with other scenarios (as in k6)",
    });
  }
  const metrics = mergedMetricKinds(scenarios, problems);
  const thresholds = runThresholds(thresholdInput(raw), scenarios);
  const names = entries.map(([name]) => name);
  checkThresholds(thresholds, metrics, names, problems);
  if (problems.length || scenarios.length === 0) {
    return { ok: false, problems: dedupe(problems.length ? problems : [{ field: "scenarios", detail: "no valid scenario" }]) };
  }
  const maxCostUsd = budget.success ? (budget.data ?? null) : null;
  const maxNotSentShare = notSentBound.success ? notSentBound.data : undefined;
  return { ok: true, spec: runSpecOf(raw, scenarios, { metrics, thresholds, maxCostUsd, maxNotSentShare, phases }) };
}

/**
 * One scenario's entry: its name and start checked, its spec decoded from the run's shared
 * fields and its own; null, its problems pushed, when it cannot be decoded.
 */
function decodeScenario(
  raw: Record<string, unknown>,
  name: string,
  value: unknown,
  parseOne: (input: unknown) => SpecResult,
  problems: Problem[],
): Omit<NamedScenario, "stepOffset"> | null {
  const field = `scenarios.${name}`;
  if (!SCENARIO_NAME.test(name)) problems.push({ field, detail: "a scenario name is 1–32 letters, digits, _ or -" });
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    problems.push({ field, detail: "a scenario is an object with its executor and steps" });
    return null;
  }
  const { startTime: start, ...own } = value as Record<string, unknown>;
  for (const key of RUN_ONLY) if (key in own) problems.push({ field: `${field}.${key}`, detail: "set at the run level, shared by every scenario" });
  const startParsed = startTime.safeParse(start);
  const startMs = startParsed.success ? parseDurationMs(startParsed.data ?? 0) : undefined;
  if (startMs === undefined || startMs % 1000 !== 0) {
    problems.push({ field: `${field}.startTime`, detail: 'a whole number of seconds from the run\'s start, like "30s" or "2m"' });
  }
  const inherited = Object.fromEntries(INHERITED.filter((k) => raw[k] !== undefined).map((k) => [k, raw[k]]));
  const runMetrics = typeof raw.metrics === "object" && raw.metrics !== null ? raw.metrics : {};
  const ownMetrics = typeof own.metrics === "object" && own.metrics !== null ? own.metrics : {};
  const result = parseOne({
    ...inherited,
    ...own,
    name: `${typeof raw.name === "string" ? raw.name : "run"}/${name}`,
    metrics: { ...runMetrics, ...ownMetrics },
  });
  if (!result.ok) {
    problems.push(...result.problems.map((p) => ({ field: `${field}.${p.field}`, detail: p.detail })));
    return null;
  }
  return { name, startMs: startMs ?? 0, spec: result.spec };
}

/** The run's custom metrics: every scenario's, a metric declared as two kinds a problem. */
function mergedMetricKinds(scenarios: readonly NamedScenario[], problems: Problem[]): Record<string, MetricKind> {
  const metrics: Record<string, MetricKind> = {};
  for (const s of scenarios) {
    for (const [metric, kind] of Object.entries(customMetricKinds(s.spec))) {
      if (metrics[metric] !== undefined && metrics[metric] !== kind)
        problems.push({ field: `scenarios.${s.name}.metrics.${metric}`, detail: `another scenario has ${metric} as a ${metrics[metric]}` });
      metrics[metric] = kind;
    }
  }
  return metrics;
}

/** The run's thresholds parse, and each one's `scenario` tag names one of the run's `scenarioNames`. */
function checkThresholds(
  thresholds: Record<string, ThresholdInput[]>,
  metrics: Record<string, MetricKind>,
  scenarioNames: readonly string[],
  problems: Problem[],
): void {
  const parsed = parseThresholds(thresholds, metrics);
  if (!parsed.ok) {
    for (const message of parsed.errors) {
      const [path, ...rest] = message.split(": ");
      problems.push({ field: path!, detail: rest.join(": ") });
    }
  }
  for (const t of parsed.ok ? parsed.value : []) {
    const scenario = t.tags.scenario;
    if (scenario !== undefined && !scenarioNames.includes(scenario)) {
      problems.push({ field: `thresholds.${t.key}`, detail: `no scenario named ${scenario} (the run has ${scenarioNames.join(", ")})` });
    }
  }
}

/** What the run's spec takes besides its scenarios, decoded at the run's level. */
interface RunLevel {
  readonly metrics: Record<string, MetricKind>;
  readonly thresholds: Record<string, ThresholdInput[]>;
  readonly maxCostUsd: number | null;
  /** The run's bound on what edgeload may fail to send (one for the whole run); absent: the default. */
  readonly maxNotSentShare: number | undefined;
  readonly phases: Pick<RunSpec, "setup" | "teardown">;
}

/**
 * The run's spec over its decoded scenarios: their steps under qualified names, the sums
 * and spans of their loads, and the shared fields as the first scenario decoded them.
 */
function runSpecOf(raw: Record<string, unknown>, scenarios: readonly NamedScenario[], run: RunLevel): RunSpec {
  const first = scenarios[0]!.spec;
  return {
    name: typeof raw.name === "string" ? raw.name : "run",
    target: first.target,
    steps: scenarios.flatMap((s) => s.spec.steps.map((step) => ({ ...step, name: `${s.name}.${step.name}` }))),
    flow: "pick",
    metrics: run.metrics,
    scenario: null,
    preset: null,
    executor: "scenarios",
    stages: [],
    vus: null,
    durationMs: Math.max(...scenarios.map((s) => s.startMs + s.spec.durationMs)),
    peakRatePerS: scenarios.reduce((a, s) => a + s.spec.peakRatePerS, 0),
    timeoutMs: Math.max(...scenarios.map((s) => s.spec.timeoutMs)),
    gracefulStopMs: Math.max(...scenarios.map((s) => s.startMs + interruptAtMs(s.spec))) - Math.max(...scenarios.map((s) => s.startMs + s.spec.durationMs)),
    shards: "auto",
    regions: [...new Set(scenarios.flatMap((s) => s.spec.regions))],
    connectionSlots: first.connectionSlots,
    expectedLatencyMs: first.expectedLatencyMs,
    maxInFlight: scenarios.reduce((a, s) => a + s.spec.maxInFlight, 0),
    thresholds: run.thresholds,
    vars: first.vars,
    secrets: first.secrets,
    tags: first.tags,
    // The run's own summaryTrendStats: every scenario's spec was parsed with it (INHERITED).
    ...(first.summaryTrendStats ? { summaryTrendStats: first.summaryTrendStats } : {}),
    // A k6 script's trends without isTime are declared once, at the run's level.
    ...(unitlessTrends(raw.metrics).length ? { unitlessTrends: unitlessTrends(raw.metrics) } : {}),
    ...(run.maxNotSentShare !== undefined ? { maxNotSentShare: run.maxNotSentShare } : {}),
    maxCostUsd: run.maxCostUsd,
    options: {
      scenarios: Object.fromEntries(scenarios.map((s) => [s.name, { executor: s.spec.executor, startTime: `${s.startMs / 1000}s`, ...s.spec.options }])),
    },
    setup: run.phases.setup,
    teardown: run.phases.teardown,
    setupData: {},
    scenarios,
  };
}

/** The run's thresholds plus each scenario's, filtered to that scenario. */
function runThresholds(own: Record<string, ThresholdInput[]>, scenarios: readonly NamedScenario[]): Record<string, ThresholdInput[]> {
  const out: Record<string, ThresholdInput[]> = { ...own };
  for (const s of scenarios) {
    for (const [key, entries] of Object.entries(s.spec.thresholds)) {
      const m = /^([^{]+)(?:\{(.*)\})?$/.exec(key)!;
      const tags = m[2]?.trim() ? `scenario:${s.name},${m[2]}` : `scenario:${s.name}`;
      const scoped = `${m[1]}{${tags}}`;
      out[scoped] = [...(out[scoped] ?? []), ...entries];
    }
  }
  return out;
}

function stringMap(value: unknown): Record<string, string> {
  if (typeof value !== "object" || value === null) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === "string"));
}

/** The scenario a step of the run belongs to (by its index), or null in a run of one. */
export function scenarioOfStep(spec: Pick<RunSpec, "scenarios">, stepIndex: number): NamedScenario | null {
  const scenarios = spec.scenarios ?? [];
  for (let i = scenarios.length - 1; i >= 0; i--) if (stepIndex >= scenarios[i]!.stepOffset) return scenarios[i]!;
  return null;
}

/** Indices of the run's steps that belong to a scenario. */
export function stepsOfScenario(scenario: NamedScenario): number[] {
  return scenario.spec.steps.map((_, i) => scenario.stepOffset + i);
}
