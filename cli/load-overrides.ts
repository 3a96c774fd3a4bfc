/**
 * k6's load flags (`--vus`, `-d`, `-i`, `--stage`, `--rps`) and edgeload's `--rate`, applied
 * to a run spec (JSON, before core/spec/run-spec.ts decodes it). A k6 script takes them through
 * its options instead (k6-option-overrides.ts), exactly as k6 does.
 *
 * k6's rule (lib/options.go, Options.Apply): a duration, iterations or stages given on the
 * command line replaces the load settings of every lower layer. A spec keeps its model
 * while its profile is replaced, because turning an arrival-rate spec into VUs would change
 * what it measures:
 *
 * | flags         | VU spec (constant-vus, ramping-vus, …)     | arrival-rate spec or preset                 |
 * | ------------- | ------------------------------------------ | ------------------------------------------- |
 * | -d D          | constant-vus, V VUs for D                   | constant-arrival-rate, R/s for D            |
 * | --stage D:T…  | ramping-vus from its start, T VUs           | ramping-arrival-rate from 0, T iterations/s |
 * | -i N          | shared-iterations, N over V VUs (-d: max)   | refused: no iteration count                 |
 * | --vus V alone | constant-vus and iteration runs: vus = V    | refused: its load is a rate                 |
 * | --rate R alone| refused: its rate follows from its VUs      | constant-arrival-rate: rate = R             |
 * | --rps N       | refused: edgeload does not throttle VUs     | every stage's rate capped at N/s            |
 *
 * V is k6's: --vus, else the spec's own VUs (`vus`, or the `startVUs` a ramp starts from,
 * which is where k6's stages shortcut puts `vus`), else 1. R is --rate, else the spec's own
 * rate, else its ramp's peak: k6 has no arrival-rate shortcut to follow, and a preset or
 * ramp is named by the rate it climbs to (rps300), which is what holding it for D keeps.
 * So `edgeload run examples/crud-hot-keys.json -d 10s` is k6's smoke run of it, 1 VU for
 * 10 s (its ramp starts from 0 VUs), and `--vus 50 -d 10s` holds 50.
 *
 * A spec of named scenarios takes -d only: each scenario is held at its level for D from its
 * own startTime (k6 would merge them into one, but their steps differ). Everything refused
 * names its flag; nothing is dropped.
 */
import { parseDurationMs } from "../core/spec/duration.ts";
import { EXECUTOR_FIELDS } from "../core/spec/executor-schema.ts";
import { withPreset } from "../core/spec/scenario-schema.ts";
import type { Problem } from "../core/spec/input-problem.ts";

export interface LoadFlags {
  readonly vus?: number;
  /** As given ("30s"), checked to be a duration above 0. */
  readonly duration?: string;
  readonly iterations?: number;
  readonly stages?: ReadonlyArray<{ readonly duration: string; readonly target: number }>;
  /** Arrivals per second. */
  readonly rate?: number;
  /** A cap on arrivals per second. */
  readonly rps?: number;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; problems: string[] };

const CLOSED = new Set(["constant-vus", "ramping-vus", "per-vu-iterations", "shared-iterations"]);

/**
 * The load flags from their text, every bad one named.
 *
 * @example parseLoadFlags({ vus: "10", duration: "30s", stage: ["10s:5,20s:0"] })
 *   // → { ok: true, value: { vus: 10, duration: "30s", stages: [{ duration: "10s", target: 5 }, { duration: "20s", target: 0 }] } }
 */
export function parseLoadFlags(v: {
  vus?: string;
  duration?: string;
  iterations?: string;
  stage?: readonly string[];
  rate?: string;
  rps?: string;
}): Checked<LoadFlags> {
  const problems: string[] = [];
  const whole = (flag: string, raw: string | undefined) => {
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (Number.isInteger(n) && n >= 1) return n;
    problems.push(`--${flag}: "${raw}" is not a whole number of at least 1`);
    return undefined;
  };
  const rate = (flag: string, raw: string | undefined, min: number) => {
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (raw.trim() !== "" && Number.isFinite(n) && n >= min) return n;
    problems.push(`--${flag}: "${raw}" is not a number of ${min === 0 ? "0 or more" : "more than 0"} per second`);
    return undefined;
  };
  if (v.duration !== undefined && !(parseDurationMs(v.duration)! > 0))
    problems.push(`--duration: "${v.duration}" is not a duration above 0 like "30s" or "1m30s"`);
  const stages = (v.stage ?? [])
    .flatMap((s) => s.split(","))
    .map((s) => {
      const colon = s.lastIndexOf(":");
      const duration = s.slice(0, colon).trim();
      const target = Number(s.slice(colon + 1));
      if (colon <= 0 || parseDurationMs(duration) === undefined || s.slice(colon + 1).trim() === "" || !Number.isFinite(target) || target < 0) {
        problems.push(`--stage: "${s}" is not DURATION:TARGET like "30s:100"`);
      }
      return { duration, target };
    });
  const values = {
    vus: whole("vus", v.vus),
    duration: v.duration,
    iterations: whole("iterations", v.iterations),
    stages: stages.length ? stages : undefined,
    rate: rate("rate", v.rate, 0),
    rps: rate("rps", v.rps, Number.MIN_VALUE),
  };
  const value = Object.fromEntries(Object.entries(values).filter(([, x]) => x !== undefined)) as LoadFlags;
  return problems.length ? { ok: false, problems } : { ok: true, value };
}

/** Whether any load flag was given. */
export const hasLoadFlags = (load: LoadFlags) => Object.values(load).some((v) => v !== undefined);

/** k6's shortcuts at V VUs: -i → shared-iterations, --stage → ramping-vus, -d → constant-vus (null: none given). */
export function closedProfile(load: LoadFlags, vus: number, startVUs: number): Record<string, unknown> | null {
  if (load.iterations !== undefined) {
    return { executor: "shared-iterations", vus, iterations: load.iterations, ...(load.duration !== undefined ? { maxDuration: load.duration } : {}) };
  }
  if (load.stages) return { executor: "ramping-vus", startVUs, stages: load.stages.map((s) => ({ ...s })) };
  if (load.duration !== undefined) return { executor: "constant-vus", vus, duration: load.duration };
  return null;
}

/**
 * The spec with the load flags applied, or every flag it cannot take, named. A spec
 * without them is returned as it is.
 */
export function applyLoadFlags(spec: Record<string, unknown>, load: LoadFlags): Checked<Record<string, unknown>> {
  if (!hasLoadFlags(load)) return { ok: true, value: spec };
  if (typeof spec.scenarios === "object" && spec.scenarios !== null) return applyToScenarios(spec, load);
  return applyToOne(spec, load);
}

function applyToScenarios(spec: Record<string, unknown>, load: LoadFlags): Checked<Record<string, unknown>> {
  const { duration, ...others } = load;
  const refused = Object.entries(others)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => `${flagOf(k)}: this spec has named scenarios, each with its own load; only -d applies to all of them (change the others in the spec)`);
  if (refused.length) return { ok: false, problems: refused };
  const scenarios: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, scenario] of Object.entries(spec.scenarios as Record<string, unknown>)) {
    const one =
      typeof scenario === "object" && scenario !== null
        ? applyToOne(scenario as Record<string, unknown>, { duration: duration! })
        : { ok: true as const, value: scenario };
    if (one.ok) scenarios[name] = one.value;
    else problems.push(...one.problems.map((p) => `scenarios.${name}: ${p}`));
  }
  return problems.length ? { ok: false, problems } : { ok: true, value: { ...spec, scenarios } };
}

function applyToOne(input: Record<string, unknown>, load: LoadFlags): Checked<Record<string, unknown>> {
  const expanded = expandPreset(input);
  if (!expanded.ok) return expanded;
  const spec = expanded.value;
  const executor = typeof spec.executor === "string" ? spec.executor : "";
  // No executor (an invalid spec): left to the spec's own validation to say so.
  if (!executor) return { ok: true, value: spec };
  const problems: string[] = [];
  if (load.duration !== undefined && load.stages) problems.push("-d and --stage: give one (k6 refuses the pair too): --stage's durations add up to the run's");
  if (load.iterations !== undefined && load.stages) problems.push("-i and --stage: give one (k6 refuses the pair too)");
  const result = CLOSED.has(executor) ? closedSpec(spec, executor, load, problems) : openSpec(spec, executor, load, problems);
  return problems.length ? { ok: false, problems } : { ok: true, value: result };
}

/** A VU spec: k6's shortcuts at --vus, else the spec's own VUs, else 1. */
function closedSpec(spec: Record<string, unknown>, executor: string, load: LoadFlags, problems: string[]): Record<string, unknown> {
  if (load.rate !== undefined)
    problems.push(`--rate: a ${executor} run's rate follows from its VUs and the target's latency: set --vus, or use an arrival-rate spec`);
  if (load.rps !== undefined) problems.push(`--rps: edgeload does not throttle a ${executor} run's VUs: set --vus, or use an arrival-rate spec`);
  const own = typeof spec.vus === "number" ? spec.vus : undefined;
  // A ramp's start (run-spec.ts's default: 1), or the spec's VUs, or k6's default of 1.
  const start = typeof spec.startVUs === "number" ? spec.startVUs : (own ?? 1);
  const profile = closedProfile(load, load.vus ?? own ?? Math.max(1, start), load.vus ?? start);
  if (profile) return { ...withoutProfile(spec), ...profile };
  if (load.vus === undefined) return spec;
  if (executor === "ramping-vus") {
    problems.push("--vus: a ramping-vus spec has no single VU count: give -d too for a constant one, or --stage for a new ramp");
    return spec;
  }
  return { ...spec, vus: load.vus };
}

/** An arrival-rate spec: constant or ramping arrivals at --rate, else its own rate, else its peak. */
function openSpec(spec: Record<string, unknown>, executor: string, load: LoadFlags, problems: string[]): Record<string, unknown> {
  if (load.vus !== undefined) problems.push(`--vus: a ${executor} run's load is its arrival rate: use --rate (and --max-vus to cap iterations in flight)`);
  if (load.iterations !== undefined) problems.push(`-i: a ${executor} run has no iteration count (k6's iteration executors are VU ones): use -d, or a VU spec`);
  if (load.rate !== undefined && load.stages) problems.push("--rate and --stage: give one: --stage's targets are the rates");
  const perS = ratesPerS(spec);
  let out = spec;
  if (load.stages) {
    out = { ...withoutProfile(spec), executor: "ramping-arrival-rate", startRate: 0, timeUnit: "1s", stages: load.stages.map((s) => ({ ...s })) };
  } else if (load.duration !== undefined) {
    out = { ...withoutProfile(spec), executor: "constant-arrival-rate", rate: load.rate ?? Math.max(...perS), timeUnit: "1s", duration: load.duration };
  } else if (load.rate !== undefined) {
    if (executor === "constant-arrival-rate") out = { ...spec, rate: load.rate, timeUnit: "1s" };
    else problems.push(`--rate: a ${executor} profile has no single rate: give -d too for a constant one, or --stage for a new ramp`);
  }
  return load.rps === undefined ? out : capRate(out, load.rps);
}

/** Every rate of an arrival-rate profile at most `rps` per second. */
function capRate(spec: Record<string, unknown>, rps: number): Record<string, unknown> {
  const unitMs = timeUnitMs(spec);
  const capped = (rate: unknown) => Math.min(typeof rate === "number" ? (rate * 1000) / unitMs : 0, rps);
  if (spec.executor === "constant-arrival-rate") return { ...spec, rate: capped(spec.rate), timeUnit: "1s" };
  const stages = Array.isArray(spec.stages) ? (spec.stages as Array<Record<string, unknown>>) : [];
  return { ...spec, timeUnit: "1s", startRate: capped(spec.startRate ?? 0), stages: stages.map((s) => ({ ...s, target: capped(s.target) })) };
}

/** The rates per second an arrival-rate profile passes through. */
function ratesPerS(spec: Record<string, unknown>): number[] {
  const unitMs = timeUnitMs(spec);
  const perS = (v: unknown) => (typeof v === "number" ? (v * 1000) / unitMs : 0);
  if (spec.executor === "constant-arrival-rate") return [perS(spec.rate)];
  const stages = Array.isArray(spec.stages) ? (spec.stages as Array<{ target?: unknown }>) : [];
  return [perS(spec.startRate ?? 0), ...stages.map((s) => perS(s.target))];
}

function timeUnitMs(spec: Record<string, unknown>): number {
  const ms = spec.timeUnit === undefined ? 1000 : parseDurationMs(spec.timeUnit);
  return ms !== undefined && ms > 0 ? ms : 1000;
}

/** The spec without its executor's options (the profile a load flag replaces). */
function withoutProfile(spec: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(spec).filter(([k]) => !(EXECUTOR_FIELDS as readonly string[]).includes(k)));
}

/**
 * A spec's preset written out as the profile and thresholds it stands for (the same
 * expansion run-spec.ts makes), so a flag can replace the one and drop the other.
 */
export function expandPreset(spec: Record<string, unknown>): Checked<Record<string, unknown>> {
  if (spec.preset === undefined) return { ok: true, value: spec };
  const problems: Problem[] = [];
  const expanded = withPreset(spec, problems) as Record<string, unknown>;
  if (problems.length) return { ok: false, problems: problems.map((p) => `${p.field}: ${p.detail}`) };
  const { preset: _preset, durationScale: _scale, ...rest } = expanded;
  return { ok: true, value: rest };
}

function flagOf(key: string): string {
  return { vus: "--vus", iterations: "-i", stages: "--stage", rate: "--rate", rps: "--rps", duration: "-d" }[key] ?? `--${key}`;
}
