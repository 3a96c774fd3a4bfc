/**
 * A k6 script's `options` as an edgeload run spec: the same executors under the same names,
 * k6's shortcuts expanded as k6 expands them, thresholds passed through (edgeload parses
 * k6's grammar, abortOnFail included), the script's metrics declared so thresholds and
 * summaries know them.
 *
 * k6's shortcuts (k6 docs, "Scenarios" / "Options"): `stages` is a ramping-vus scenario
 * starting at `vus` (default 1); `duration` with `vus` is constant-vus; `iterations` is
 * shared-iterations (with `duration` as its maxDuration), and no options at all is one VU
 * running one iteration.
 *
 * @example
 * specFromOptions({ vus: 10, duration: "30s", thresholds: { http_req_duration: ["p(95)<300"] } },
 *   { name: "smoke.js", target: "http://127.0.0.1:9090", bundle: "ab…", env: {}, metrics: {} })
 */
import { EXECUTOR_NAMES } from "../core/spec/types.ts";
import { EXECUTOR_FIELDS } from "../core/spec/executor-schema.ts";
import { parseMetricKey } from "../core/metrics/metric-key.ts";
import { OTHER_TAGS_STEP } from "../core/spec/script-schema.ts";
import type { MetricType } from "./runtime/vu-modules.ts";
import { GROUP_DURATION } from "./runtime/wire.ts";
import { ITERATION_DURATION } from "../core/metrics/aggregate.ts";
import { redirectCount } from "./runtime/redirect-limit.ts";
import { userAgentOption } from "./runtime/vu-options.ts";
import { rpsOption } from "./runtime/rps-limit.ts";
import { BEHAVIOUR_OPTIONS, behaviourProblems, scriptBehaviour } from "./behaviour-options.ts";
import { vuThresholdProblems } from "./vu-thresholds.ts";
import { scenarioOptionsProblems } from "./browser-options.ts";

export interface ScriptContext {
  readonly name: string;
  readonly target: string;
  /** SHA-256 of the uploaded bundle. */
  readonly bundle: string;
  readonly env: Readonly<Record<string, string>>;
  /** Custom metrics the script created in its init context. */
  readonly metrics: Readonly<Record<string, MetricType>>;
  /** Its trends created with isTime (values in ms); the others hold plain numbers. Absent: all timed. */
  readonly timeTrends?: readonly string[];
  readonly exports: readonly string[];
  /** The options' thresholds, for the steps they filter on. */
  readonly thresholds?: unknown;
}

export type OptionsResult = { ok: true; spec: Record<string, unknown>; ignored: string[] } | { ok: false; problems: string[] };

/**
 * What a k6 scenario may set for its executor: the run spec's own executor fields (the
 * `executor` key is read apart), plus the VU pool sizes a run spec takes at its top level.
 */
const SCENARIO_EXECUTOR_FIELDS: readonly string[] = [...EXECUTOR_FIELDS.filter((f) => f !== "executor"), "preAllocatedVUs", "maxVUs"];
const SUPPORTED_EXECUTORS = new Set(EXECUTOR_NAMES);
/** Options that change nothing in how edgeload runs or measures: accepted, listed as ignored. */
const NO_EFFECT_HERE = [
  "summaryTimeUnit",
  "ext",
  "cloud",
  "noUsageReport",
  "linger",
  "httpDebug",
  "systemTags",
  "noConnectionReuse",
  "noVUConnectionReuse",
  "dns",
  "tlsVersion",
  "tlsCipherSuites",
  "batch",
  "batchPerHost",
];
const IGNORED = new Set(NO_EFFECT_HERE);
/** Per-scenario options edgeload accepts without acting on (gracefulStop is acted on: core/schedule/graceful-stop.ts). */
const IGNORED_IN_SCENARIO = new Set<string>();

export function specFromOptions(raw: Record<string, unknown>, ctx: ScriptContext): OptionsResult {
  const problems: string[] = [];
  const ignored: string[] = [];
  // maxRedirects is the VUs' own (k6-compat/runtime/redirect-limit.ts): only checked here.
  const known = new Set([
    "scenarios",
    "stages",
    "vus",
    "duration",
    "iterations",
    "thresholds",
    "tags",
    "summaryTrendStats",
    "maxRedirects",
    "setupTimeout",
    "teardownTimeout",
    // The VUs send it (k6-compat/runtime/k6-request.ts): checked here, before any load.
    "userAgent",
    // The VUs wait on it before each request, each shard on its part (k6-compat/runtime/rps-limit.ts): checked here.
    "rps",
    ...BEHAVIOUR_OPTIONS,
  ]);
  problems.push(...behaviourProblems(raw));
  for (const check of [() => redirectCount(raw.maxRedirects, "options.maxRedirects"), () => userAgentOption(raw.userAgent), () => rpsOption(raw.rps)]) {
    try {
      check();
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  for (const key of Object.keys(raw)) {
    if (known.has(key)) continue;
    if (IGNORED.has(key)) ignored.push(key);
    else problems.push(`options.${key}: not supported by edgeload (it would change how the load is made, so the run is refused rather than run differently)`);
  }
  const withThresholds = { ...ctx, thresholds: raw.thresholds };
  const scenarios =
    raw.scenarios !== undefined ? fromScenarios(raw.scenarios, withThresholds, problems, ignored) : fromShortcuts(raw, withThresholds, problems);
  if (problems.length) return { ok: false, problems };
  // setup() and teardown() are the script's, whichever scenario names it (core/spec/script-schema.ts);
  // minIterationDuration is k6's global option, so every scenario's iterations have it.
  const phaseTimeouts = Object.fromEntries((["setupTimeout", "teardownTimeout"] as const).filter((k) => raw[k] !== undefined).map((k) => [k, raw[k]]));
  for (const s of scenarios) Object.assign(s.fields.script as Record<string, unknown>, phaseTimeouts, scriptBehaviour(raw));

  // A trend or gauge without isTime holds plain numbers, which k6 shows without a unit.
  const timed = (name: string) => ctx.timeTrends === undefined || ctx.timeTrends.includes(name);
  const metrics: Record<string, { type: string; time?: false }> = Object.fromEntries(
    Object.entries(ctx.metrics).map(([name, type]) =>
      type === "trend" || type === "gauge" ? [name, { type, ...(timed(name) ? {} : { time: false }) }] : [name, { type }],
    ),
  );
  // k6's group_duration (every group() records it) and iteration_duration (the shards time every
  // iteration of a script): declared when a threshold names one, so thresholds and the summary know it.
  const thresholdKeys = Object.keys(typeof raw.thresholds === "object" && raw.thresholds !== null ? raw.thresholds : {});
  for (const timed of [GROUP_DURATION, ITERATION_DURATION])
    if (thresholdKeys.some((key) => key === timed || key.startsWith(`${timed}{`))) metrics[timed] = { type: "trend" };
  const common = {
    name: ctx.name,
    target: ctx.target,
    ...(raw.thresholds !== undefined ? { thresholds: raw.thresholds } : {}),
    ...(raw.tags !== undefined ? { tags: raw.tags } : {}),
    // The trend figures the end-of-test summary and handleSummary's data show, as in k6.
    ...(raw.summaryTrendStats !== undefined ? { summaryTrendStats: raw.summaryTrendStats } : {}),
    ...(Object.keys(metrics).length ? { metrics } : {}),
  };
  const spec =
    scenarios.length === 1 && raw.scenarios === undefined
      ? { ...common, ...scenarios[0]!.fields }
      : { ...common, scenarios: Object.fromEntries(scenarios.map((s) => [s.name, s.fields])) };
  // Thresholds on vus and vus_max are judged on the plan's figures: refused where it leaves them open.
  const vuProblems = vuThresholdProblems(spec);
  return vuProblems.length ? { ok: false, problems: vuProblems } : { ok: true, spec, ignored };
}

interface Scenario {
  readonly name: string;
  readonly fields: Record<string, unknown>;
}

/**
 * Steps a script's requests are recorded under: its function's name (untagged requests),
 * then every `step` a threshold filters on (`http_req_duration{step:login}`), which
 * requests tagged `{ step: "login" }` (or `name`) then fill, as under k6, and last
 * OTHER_TAGS_STEP for requests tagged with any other step or name.
 */
function stepsOf(exec: string, thresholds: unknown): Array<{ name: string; path: string }> {
  const names = new Set([exec]);
  for (const key of Object.keys(typeof thresholds === "object" && thresholds !== null ? thresholds : {})) {
    const parsed = parseMetricKey(key);
    const step = parsed.ok ? parsed.value.tags.find(([tag]) => tag === "step")?.[1] : undefined;
    if (step !== undefined) names.add(step);
  }
  names.add(OTHER_TAGS_STEP);
  return [...names].map((name) => ({ name, path: "/" }));
}

function scriptField(ctx: ScriptContext, exec: string, env: Record<string, string>, problems: string[], where: string) {
  if (!ctx.exports.includes(exec)) problems.push(`${where}: the script exports no function named ${exec}`);
  return {
    script: { bundle: ctx.bundle, exec, env: { ...ctx.env, ...env }, setup: ctx.exports.includes("setup"), teardown: ctx.exports.includes("teardown") },
    steps: stepsOf(exec, ctx.thresholds),
  };
}

function fromShortcuts(raw: Record<string, unknown>, ctx: ScriptContext, problems: string[]): Scenario[] {
  const vus = raw.vus ?? 1;
  let executor: Record<string, unknown>;
  if (raw.stages !== undefined) {
    executor = { executor: "ramping-vus", startVUs: vus, stages: raw.stages };
    if (raw.iterations !== undefined) problems.push("options.iterations: not with stages (k6 refuses the pair too)");
  } else if (raw.iterations !== undefined) {
    executor = { executor: "shared-iterations", vus, iterations: raw.iterations, ...(raw.duration !== undefined ? { maxDuration: raw.duration } : {}) };
  } else if (raw.duration !== undefined) {
    executor = { executor: "constant-vus", vus, duration: raw.duration };
  } else {
    // No load options at all: k6 runs one iteration of one VU.
    executor = { executor: "shared-iterations", vus, iterations: 1 };
  }
  return [{ name: "default", fields: { ...executor, ...scriptField(ctx, "default", {}, problems, "options") } }];
}

function fromScenarios(input: unknown, ctx: ScriptContext, problems: string[], ignored: string[]): Scenario[] {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    problems.push("options.scenarios: an object of named scenarios");
    return [];
  }
  const out: Scenario[] = [];
  for (const [name, value] of Object.entries(input)) {
    const where = `options.scenarios.${name}`;
    const s = value as Record<string, unknown>;
    const executor = String(s.executor);
    if (!SUPPORTED_EXECUTORS.has(executor as (typeof EXECUTOR_NAMES)[number])) {
      problems.push(`${where}.executor: ${executor} is not an executor edgeload runs (${[...SUPPORTED_EXECUTORS].join(", ")})`);
      continue;
    }
    const fields: Record<string, unknown> = { executor };
    for (const [key, v] of Object.entries(s)) {
      if (key === "executor" || key === "exec" || key === "env" || key === "tags") continue;
      if (SCENARIO_EXECUTOR_FIELDS.includes(key) || key === "startTime") fields[key] = v;
      else if (IGNORED_IN_SCENARIO.has(key)) ignored.push(`${where}.${key}`);
      // k6's browser option (browser-options.ts): its VUs drive the shard's browser.
      else if (key === "options") problems.push(...scenarioOptionsProblems(`${where}.options`, v));
      // k6 refuses it too (its scenarios decode strictly): the option is the test's, not a scenario's.
      else if (key === "minIterationDuration")
        problems.push(`${where}.minIterationDuration: k6 takes it only at the options' top level; set options.minIterationDuration`);
      else problems.push(`${where}.${key}: not supported by edgeload`);
    }
    if (s.tags !== undefined) fields.tags = s.tags;
    const env = (s.env ?? {}) as Record<string, string>;
    Object.assign(fields, scriptField(ctx, typeof s.exec === "string" ? s.exec : "default", env, problems, where));
    // Its VUs drive a browser: the planner and the API price its sessions from this (core/plan/browser-sessions.ts, browser-plan.ts).
    if ((s.options as { browser?: { type?: unknown } } | undefined)?.browser?.type === "chromium") (fields.script as Record<string, unknown>).browser = true;
    out.push({ name, fields });
  }
  return out;
}
