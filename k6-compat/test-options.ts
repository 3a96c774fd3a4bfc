/**
 * `exec.test.options` as k6 gives it: the test's consolidated options (the script's, with
 * the command line's flags merged: cli/k6-option-overrides.ts), in the JSON shape of k6's
 * lib.Options (k6 v1.8.1 internal/js/modules/k6/execution optionsAsObject). Every option
 * k6 knows is there, null when unset; k6's shortcuts (`vus`, `duration`, `iterations`,
 * `stages`) are gone, turned into `scenarios.default` as k6 derives it
 * (lib/executor/execution_config_shortcuts.go); durations are Go's (`"1m30s"`); the two
 * lists k6 defaults (summaryTrendStats, systemTags) have k6's defaults. jslib's
 * `tagWithCurrentStageIndex` reads `scenarios[exec.scenario.name].stages` from it.
 *
 * Pure: made once by the CLI and carried with the bundle to every VU (init-context.ts
 * scriptModule; runtime/vu-modules/execution.ts freezes it per VU, as k6 does).
 *
 * @example
 * k6TestOptions({ vus: 2, duration: "90s" }).scenarios
 * // → { default: { executor: "constant-vus", startTime: null, gracefulStop: null, env: null,
 * //      exec: null, tags: null, vus: 2, duration: "1m30s" } }
 */
import { parseDurationMs } from "../core/spec/duration.ts";

type Options = Readonly<Record<string, unknown>>;

/** k6's summaryTrendStats when the options set none. */
const DEFAULT_TREND_STATS = ["avg", "min", "med", "max", "p(90)", "p(95)"];
/** k6's systemTags when the options set none. */
const DEFAULT_SYSTEM_TAGS = [
  "check",
  "error",
  "error_code",
  "expected_response",
  "group",
  "method",
  "name",
  "proto",
  "scenario",
  "service",
  "status",
  "subproto",
  "tls_version",
  "url",
];

/** Each executor's own fields, in the order k6's config structs marshal them; the values that are durations. */
const EXECUTOR_FIELDS: Readonly<Record<string, readonly string[]>> = {
  "shared-iterations": ["vus", "iterations", "maxDuration"],
  "per-vu-iterations": ["vus", "iterations", "maxDuration"],
  "constant-vus": ["vus", "duration"],
  "ramping-vus": ["startVUs", "stages", "gracefulRampDown"],
  "constant-arrival-rate": ["rate", "timeUnit", "duration", "preAllocatedVUs", "maxVUs"],
  "ramping-arrival-rate": ["startRate", "timeUnit", "stages", "preAllocatedVUs", "maxVUs"],
  "externally-controlled": ["vus", "maxVUs", "duration"],
};
const DURATIONS = new Set([
  "startTime",
  "gracefulStop",
  "maxDuration",
  "duration",
  "gracefulRampDown",
  "timeUnit",
  "setupTimeout",
  "teardownTimeout",
  "minIterationDuration",
]);

/** lib.Options' fields up to `cloud`, in the order k6 marshals them. */
const BEFORE_CLOUD = [
  "paused",
  "scenarios",
  "executionSegment",
  "executionSegmentSequence",
  "noSetup",
  "setupTimeout",
  "noTeardown",
  "teardownTimeout",
  "rps",
  "dns",
  "maxRedirects",
  "userAgent",
  "batch",
  "batchPerHost",
  "httpDebug",
  "insecureSkipTLSVerify",
  "tlsCipherSuites",
  "tlsVersion",
  "tlsAuth",
  "throw",
  "thresholds",
  "blacklistIPs",
  "blockHostnames",
  "hosts",
  "noConnectionReuse",
  "noVUConnectionReuse",
  "minIterationDuration",
] as const;
/** After `cloud`, which k6 shows only when set. */
const AFTER_CLOUD = [
  "ext",
  "summaryTrendStats",
  "summaryTimeUnit",
  "systemTags",
  "tags",
  "metricSamplesBufferSize",
  "noCookiesReset",
  "discardResponseBodies",
  "consoleOutput",
  "localIPs",
] as const;

/** The options as `exec.test.options` shows them (see the file's header). */
export function k6TestOptions(options: Options): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of BEFORE_CLOUD) out[key] = fieldOf(key, options);
  if (options.cloud !== undefined && options.cloud !== null) out.cloud = options.cloud;
  for (const key of AFTER_CLOUD) out[key] = fieldOf(key, options);
  return out;
}

function fieldOf(key: string, options: Options): unknown {
  const value = options[key];
  switch (key) {
    case "scenarios":
      return scenariosOf(options);
    case "dns": {
      const dns = isObject(value) ? value : {};
      return { ttl: dns.ttl ?? null, select: dns.select ?? null, policy: dns.policy ?? null };
    }
    case "thresholds":
      return isObject(value) ? Object.fromEntries(Object.entries(value).map(([k, list]) => [k, thresholdsOf(list)])) : null;
    case "summaryTrendStats":
      return value ?? DEFAULT_TREND_STATS;
    case "systemTags":
      return value ?? DEFAULT_SYSTEM_TAGS;
    default:
      return DURATIONS.has(key) ? durationOf(value) : (value ?? null);
  }
}

/** `scenarios`, derived from the shortcuts as k6 derives them when the options use one. */
function scenariosOf(options: Options): Record<string, unknown> {
  const has = (key: string) => options[key] !== undefined && options[key] !== null;
  const stages = Array.isArray(options.stages) ? options.stages : [];
  const vus = options.vus ?? null;
  if (has("iterations")) return { default: scenario({ executor: "shared-iterations", vus, iterations: options.iterations, maxDuration: options.duration }) };
  if (has("duration")) return { default: scenario({ executor: "constant-vus", vus, duration: options.duration }) };
  // Only the stages with a duration (k6 drops the others).
  if (stages.length)
    return { default: scenario({ executor: "ramping-vus", startVUs: vus, stages: stages.filter((s) => isObject(s) && s.duration !== undefined) }) };
  if (isObject(options.scenarios) && Object.keys(options.scenarios).length)
    return Object.fromEntries(Object.entries(options.scenarios).map(([name, s]) => [name, scenario(isObject(s) ? s : {})]));
  // No load options at all: one VU, one iteration.
  return { default: scenario({ executor: "per-vu-iterations" }) };
}

/** One scenario's config: the fields every executor has, then its own; unset ones null. */
function scenario(s: Options): Record<string, unknown> {
  const executor = String(s.executor);
  const own = EXECUTOR_FIELDS[executor] ?? [];
  const out: Record<string, unknown> = { executor };
  for (const key of ["startTime", "gracefulStop", "env", "exec", "tags", ...own]) {
    const value = s[key];
    if (key === "stages") out[key] = Array.isArray(value) ? value.map(stageOf) : null;
    else out[key] = DURATIONS.has(key) ? durationOf(value) : (value ?? null);
  }
  return out;
}

function stageOf(stage: unknown): Record<string, unknown> {
  const s = isObject(stage) ? stage : {};
  return { duration: durationOf(s.duration), target: s.target ?? null };
}

/** A threshold as k6 marshals it: its expression alone unless it aborts on failure. */
function thresholdsOf(list: unknown): unknown {
  if (!Array.isArray(list)) return list;
  return list.map((t) =>
    isObject(t) && t.abortOnFail === true
      ? { threshold: t.threshold, abortOnFail: true, delayAbortEval: durationOf(t.delayAbortEval) }
      : isObject(t)
        ? t.threshold
        : t,
  );
}

/** A k6 duration in Go's form ("1m30s", "1.5s", "100ms"); null unset; as given when it is not one. */
function durationOf(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  const ms = parseDurationMs(value);
  return ms === undefined ? value : goDuration(ms);
}

const NS_PER = { us: 1e3, ms: 1e6, s: 1e9, m: 6e10, h: 3.6e12 } as const;

/**
 * Go's time.Duration.String(): under a second in the largest unit below it ("1.5ms"),
 * else hours, minutes and seconds, each shown once a larger one is ("1h0m0s", "2m30s").
 */
export function goDuration(ms: number): string {
  let ns = Math.round(ms * 1e6);
  if (ns === 0) return "0s";
  if (ns < NS_PER.us) return `${ns}ns`;
  if (ns < NS_PER.ms) return `${decimal(ns, NS_PER.us)}µs`;
  if (ns < NS_PER.s) return `${decimal(ns, NS_PER.ms)}ms`;
  const hours = Math.floor(ns / NS_PER.h);
  ns -= hours * NS_PER.h;
  const minutes = Math.floor(ns / NS_PER.m);
  ns -= minutes * NS_PER.m;
  const seconds = `${decimal(ns, NS_PER.s)}s`;
  if (hours) return `${hours}h${minutes}m${seconds}`;
  return minutes ? `${minutes}m${seconds}` : seconds;
}

/** `ns` in `unit`s, its fraction without trailing zeros. */
function decimal(ns: number, unit: number): string {
  const whole = Math.floor(ns / unit);
  const rest = ns - whole * unit;
  if (rest === 0) return String(whole);
  const digits = String(unit).length - 1;
  return `${whole}.${String(rest).padStart(digits, "0").replace(/0+$/, "")}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
