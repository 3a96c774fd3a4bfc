/**
 * The built-in scenario section of a spec (`scenario: {name, seed, clientId, …}`, see
 * core/spec/builtin-scenarios.ts) and the presets that stand for its load profile and thresholds
 * (presets/authrim.json via core/spec/presets.ts).
 */
import { z } from "zod";
import { SCENARIO_BY_NAME, SCENARIO_NAMES, type ScenarioOutline } from "./builtin-scenarios.ts";
import { correctnessThresholds, expandPreset } from "./presets.ts";
import type { Problem } from "./input-problem.ts";
import { SEED_NAME } from "../data/seed-set.ts";
import { EXECUTOR_FIELDS } from "./executor-schema.ts";
import type { ScenarioSpec, StepSpec } from "./types.ts";

export const scenarioSchema = z
  .object({
    name: z.enum(SCENARIO_NAMES as [string, ...string[]], { message: `must be one of ${SCENARIO_NAMES.join(", ")}` }),
    seed: z.string().regex(SEED_NAME, "a seed set name (see GET /v1/seeds)").optional(),
    clientId: z.string().min(1).optional(),
    clientSecret: z.string().min(1).optional(),
    adminSecret: z.string().min(1).optional(),
    redirectUri: z
      .string()
      .refine((u) => URL.canParse(u), "must be an absolute URL")
      .optional(),
    scope: z.string().min(1).default("openid profile"),
    audience: z.string().min(1).optional(),
  })
  .strict();

/** The definition of the built-in scenario raw input names, if it names one. */
export function scenarioDefinition(input: unknown): ScenarioOutline | undefined {
  const name = (input as { scenario?: { name?: unknown } } | null)?.scenario?.name;
  return typeof name === "string" ? SCENARIO_BY_NAME[name] : undefined;
}

/** The scenario part of a spec, checking the seed and options its definition needs. */
export function scenarioOf(s: z.output<typeof scenarioSchema>, definition: ScenarioOutline, problems: Problem[]): ScenarioSpec {
  if (definition.seedKind && !s.seed)
    problems.push({ field: "scenario.seed", detail: `the ${definition.name} scenario reads a ${definition.seedKind} seed set; name one (see GET /v1/seeds)` });
  if (!definition.seedKind && s.seed) problems.push({ field: "scenario.seed", detail: `the ${definition.name} scenario reads no seed set` });
  for (const need of definition.needs) {
    if (!s[need]) problems.push({ field: `scenario.${need}`, detail: `the ${definition.name} scenario needs ${need}` });
  }
  const { name, seed, ...options } = s;
  return { name, seed: seed ?? null, options };
}

/** A built-in scenario's steps as the spec lists them (its flow sends the requests). */
export function scenarioSteps(definition: ScenarioOutline): StepSpec[] {
  return definition.steps.map((s) => ({
    name: s.name,
    method: s.method as StepSpec["method"],
    path: s.path,
    headers: {},
    body: null,
    expectedStatuses: null,
    weight: 1,
    checks: [],
    capture: {},
    think: null,
    record: {},
    sse: null,
    scrape: null,
  }));
}

/**
 * Replaces `preset` (and `durationScale`) by the executor options and thresholds it
 * stands for; the spec's own thresholds win for the metrics they name.
 */
export function withPreset(input: unknown, problems: Problem[]): unknown {
  if (typeof input !== "object" || input === null) return input;
  const spec = input as Record<string, unknown>;
  if (spec.preset === undefined) {
    if (spec.durationScale !== undefined) problems.push({ field: "durationScale", detail: "applies to a preset only" });
    return input;
  }
  const scenarioName = (spec.scenario as { name?: unknown } | undefined)?.name;
  if (typeof spec.preset !== "string" || typeof scenarioName !== "string") {
    problems.push({ field: "preset", detail: 'a preset name like "rps300" for the spec\'s built-in scenario' });
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

/**
 * A built-in scenario's correctness thresholds apply by default in every path — flags,
 * spec, preset, whatever the load profile: a run whose provider answered wrongly (a false
 * positive, an accepted revoked token) fails instead of passing because nobody asked.
 * Thresholds the spec sets on the same metric win; `correctnessThresholds: false` (what
 * `--no-thresholds` sets) leaves them out.
 */
export function withCorrectness(input: unknown): unknown {
  if (typeof input !== "object" || input === null) return input;
  const spec = input as Record<string, unknown>;
  const definition = scenarioDefinition(input);
  if (!definition || spec.correctnessThresholds === false) return input;
  const defaults = correctnessThresholds(definition.name, definition.metrics);
  if (Object.keys(defaults).length === 0) return input;
  const own = typeof spec.thresholds === "object" && spec.thresholds !== null ? spec.thresholds : {};
  return { ...spec, thresholds: { ...defaults, ...own } };
}
