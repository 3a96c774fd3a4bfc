/**
 * The load profile and options of every edgeload k6 script, read from the same presets file
 * as edge runs (presets/authrim.json) and expanded exactly as core/spec/presets.ts expands it:
 * ramp 0 → N, hold N, ramp N → 0 (15 s / 180 s / 15 s; the short shape for rps100), each
 * stage scaled by DURATION_SCALE and kept at least one second. The e2e tests hold the two
 * expansions against each other through `k6 inspect`.
 *
 * Where the load comes from, first match wins:
 *   PRESET=rps500 [DURATION_SCALE=0.1]        a rung of the scenario's ladder (ramping-arrival-rate)
 *   RATE=200 DURATION=30s                     constant-arrival-rate, per second
 *   STAGES='[{"target":100,"duration":"10s"}]' [START_RATE=0]   ramping-arrival-rate, per second
 *   (nothing)                                 a scenario script runs its ladder's first rung
 *
 * Thresholds are always the scenario's preset thresholds (edgeload's metric names, so the
 * same expressions hold on both sides). K6_CLOUD_DISTRIBUTION turns the same script into a
 * k6 Cloud run: "amazon:us:ashburn:50,amazon:ie:dublin:50" → options.cloud.distribution.
 */
import { parseDurationMs } from "../../core/spec/duration.ts";

/** @typedef {{ rates: number[], cloudRates: number[], thresholds: Record<string, string[]> }} ScenarioPresets */
/** @typedef {{ rampUp: string, steady: string, rampDown: string }} Shape */
/** @typedef {{ shape: Shape, shortShape: Shape, shortShapeRates: number[], scenarios: Record<string, ScenarioPresets> }} PresetsFile */
/** @typedef {{ target: number, duration: string }} Stage */
/**
 * @typedef {{ executor: "ramping-arrival-rate", startRate: number, timeUnit: "1s", stages: Stage[], peakPerS: number }
 *   | { executor: "constant-arrival-rate", rate: number, timeUnit: "1s", duration: string, peakPerS: number }} LoadProfile
 */

/** @type {PresetsFile} */
export const PRESETS = JSON.parse(open("../../presets/authrim.json"));

/** Latency trend statistics in every summary: k6's defaults plus p(99), which every preset uses. */
export const TREND_STATS = ["avg", "min", "med", "max", "p(90)", "p(95)", "p(99)"];

/**
 * k6-style durations in milliseconds, read by the parser edge runs use (core/spec/duration.ts).
 * @param {string} text
 * @returns {number}
 */
export function durationMs(text) {
  const ms = parseDurationMs(text);
  if (ms === undefined) throw new Error(`"${text}" is not a duration like "30s", "1m30s" or "500ms"`);
  return ms;
}

/**
 * The preset names of a scenario, e.g. ["rps100", "rps300", …] (core/spec/presets.ts presetNames).
 * @param {string} scenario
 */
export function presetNames(scenario) {
  const p = PRESETS.scenarios[scenario];
  return p ? [...p.rates, ...p.cloudRates].map((r) => `rps${r}`) : [];
}

/**
 * A preset as ramping-arrival-rate stages (core/spec/presets.ts expandPreset).
 * @param {string} scenario
 * @param {string} preset
 * @param {number} durationScale
 * @returns {Stage[]}
 */
export function presetStages(scenario, preset, durationScale) {
  if (!PRESETS.scenarios[scenario]) throw new Error(`no presets for scenario "${scenario}"; presets exist for ${Object.keys(PRESETS.scenarios).join(", ")}`);
  const rate = /^rps(\d+)$/.exec(preset)?.[1];
  if (!rate || !presetNames(scenario).includes(preset))
    throw new Error(`unknown PRESET "${preset}" for ${scenario}; use one of ${presetNames(scenario).join(", ")}`);
  if (!(durationScale > 0 && durationScale <= 10)) throw new Error(`DURATION_SCALE ${durationScale} must be in (0, 10]`);
  const n = Number(rate);
  const shape = PRESETS.shortShapeRates.includes(n) ? PRESETS.shortShape : PRESETS.shape;
  /** @param {string} d */
  const scaled = (d) => `${Math.max(1000, Math.round(durationMs(d) * durationScale))}ms`;
  return [
    { target: n, duration: scaled(shape.rampUp) },
    { target: n, duration: scaled(shape.steady) },
    { target: 0, duration: scaled(shape.rampDown) },
  ];
}

/**
 * A positive number from the environment, or undefined when unset. `0` is a value.
 * @param {string} name
 * @returns {number | undefined}
 */
export function envNumber(name) {
  const raw = __ENV[name];
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name}="${raw}" is not a number`);
  return n;
}

/**
 * The load profile from PRESET / RATE+DURATION / STAGES (see the header).
 * @param {string | null} scenario the edgeload scenario, or null for the generic http.js
 * @returns {LoadProfile}
 */
export function loadProfile(scenario) {
  const preset = __ENV.PRESET;
  const rate = envNumber("RATE");
  const explicit = rate !== undefined || !!__ENV.STAGES;
  // As edge specs: a preset is a whole load profile, and only a preset can be scaled.
  if (preset && explicit) throw new Error("PRESET sets the load profile: unset RATE/DURATION or STAGES (DURATION_SCALE shortens a preset)");
  if (explicit && envNumber("DURATION_SCALE") !== undefined) throw new Error("DURATION_SCALE applies to a preset only");
  if (preset) {
    if (!scenario) throw new Error("PRESET applies to a scenario script; http.js takes RATE and DURATION (or STAGES)");
    return presetProfile(scenario, preset);
  }
  if (rate !== undefined) {
    const duration = __ENV.DURATION;
    if (!duration) throw new Error("RATE needs DURATION (e.g. DURATION=30s)");
    durationMs(duration);
    return { executor: "constant-arrival-rate", rate, timeUnit: "1s", duration, peakPerS: rate };
  }
  if (__ENV.STAGES) {
    /** @type {Stage[]} */
    const stages = JSON.parse(__ENV.STAGES);
    if (!Array.isArray(stages) || stages.length === 0) throw new Error('STAGES must be a JSON array like [{"target":100,"duration":"10s"}]');
    for (const s of stages) durationMs(s.duration);
    const startRate = envNumber("START_RATE") ?? 0;
    return { executor: "ramping-arrival-rate", startRate, timeUnit: "1s", stages, peakPerS: Math.max(startRate, ...stages.map((s) => s.target)) };
  }
  if (!scenario) throw new Error("set RATE and DURATION (or STAGES) for http.js");
  return presetProfile(scenario, `rps${PRESETS.scenarios[scenario]?.rates[0]}`);
}

/**
 * @param {string} scenario
 * @param {string} preset
 * @returns {LoadProfile}
 */
function presetProfile(scenario, preset) {
  const stages = presetStages(scenario, preset, envNumber("DURATION_SCALE") ?? 1);
  return { executor: "ramping-arrival-rate", startRate: 0, timeUnit: "1s", stages, peakPerS: Math.max(...stages.map((s) => s.target)) };
}

/**
 * Iterations in flight at most (k6's maxVUs), as edgeload defaults it: one second of peak
 * arrivals, at least 50. MAX_VUS overrides it; all of them are allocated up front.
 * @param {number} peakPerS
 */
export function maxVUs(peakPerS) {
  return envNumber("MAX_VUS") ?? Math.max(50, Math.ceil(peakPerS));
}

/**
 * options.cloud from K6_CLOUD_DISTRIBUTION ("zone:percent,…"), K6_CLOUD_NAME and
 * K6_CLOUD_PROJECT_ID, or undefined for a local run.
 * @param {string} name
 */
export function cloudOptions(name) {
  const spec = __ENV.K6_CLOUD_DISTRIBUTION;
  if (!spec) return undefined;
  /** @type {Record<string, { loadZone: string, percent: number }>} */
  const distribution = {};
  let total = 0;
  for (const entry of spec
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)) {
    const i = entry.lastIndexOf(":");
    const zone = entry.slice(0, i);
    const percent = Number(entry.slice(i + 1));
    if (i <= 0 || !Number.isInteger(percent) || percent <= 0) throw new Error(`K6_CLOUD_DISTRIBUTION: "${entry}" must look like "amazon:us:ashburn:50"`);
    distribution[zone] = { loadZone: zone, percent };
    total += percent;
  }
  if (total !== 100) throw new Error(`K6_CLOUD_DISTRIBUTION: the percentages add up to ${total}, not 100`);
  const projectID = envNumber("K6_CLOUD_PROJECT_ID");
  return { name: __ENV.K6_CLOUD_NAME || `edgeload ${name}`, distribution, ...(projectID === undefined ? {} : { projectID }) };
}

/**
 * Sub-metrics that make k6 report a figure per step (`http_req_duration{step:verify}`) and
 * the load's own requests apart from setup()'s seed download (`{scenario:NAME}`): a
 * threshold with no expressions is how k6 is asked to keep a sub-metric.
 * @param {string} name the k6 scenario name
 * @param {readonly string[]} steps
 * @returns {Record<string, string[]>}
 */
function submetrics(name, steps) {
  /** @type {Record<string, string[]>} */
  const out = {};
  for (const metric of ["http_reqs", "http_req_duration", "http_req_failed"]) {
    out[`${metric}{scenario:${name}}`] = [];
    for (const step of steps) out[`${metric}{step:${step}}`] = [];
  }
  return out;
}

/**
 * The options of a script: one arrival-rate scenario named after the edgeload scenario (or
 * "http"), the preset's thresholds plus `extraThresholds`, per-step sub-metrics, the
 * counters to show at zero and, with K6_CLOUD_DISTRIBUTION, options.cloud.
 * @param {{ scenario: string | null, steps: readonly string[], extraThresholds?: Record<string, string[]>, shownAtZero?: readonly string[], discardResponseBodies?: boolean }} o
 * @returns {import("k6/options").Options}
 */
export function scriptOptions(o) {
  const name = o.scenario ?? "http";
  const profile = loadProfile(o.scenario);
  const vus = maxVUs(profile.peakPerS);
  const executor =
    profile.executor === "constant-arrival-rate"
      ? { executor: profile.executor, rate: profile.rate, timeUnit: profile.timeUnit, duration: profile.duration }
      : { executor: profile.executor, startRate: profile.startRate, timeUnit: profile.timeUnit, stages: profile.stages };
  const cloud = cloudOptions(name);
  const zero = Object.fromEntries((o.shownAtZero ?? []).map((counter) => [counter, /** @type {string[]} */ ([])]));
  return {
    scenarios: { [name]: { ...executor, preAllocatedVUs: vus, maxVUs: vus } },
    // A preset's expressions win over the expression-less entries that only make a metric show.
    thresholds: { ...zero, ...o.extraThresholds, ...submetrics(name, o.steps), ...(o.scenario ? PRESETS.scenarios[o.scenario]?.thresholds : {}) },
    summaryTrendStats: TREND_STATS,
    discardResponseBodies: o.discardResponseBodies ?? false,
    ...(cloud ? { cloud } : {}),
  };
}

/** The per-request timeout, as edgeload's `timeout` (default 10 s rather than k6's 60 s). */
export const TIMEOUT = __ENV.TIMEOUT || "10s";
