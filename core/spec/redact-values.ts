/**
 * Redaction by value: the secrets a run carries (redact.ts found them by place) searched
 * for in any other text about the run, and replaced. A token pasted into a path, a body, a
 * run's name, an error message or a script's console line is then hidden as well as the
 * field it came from. Any URL's credentials (redact-url.ts) and any JWT are hidden on the
 * way, whatever the run declared.
 */
import { REDACTED, redactUrlsIn } from "./redact-url.ts";
import { JWT } from "./redact-fields.ts";
import type { RunSpec } from "./types.ts";

/** Shorter values are not searched for: "admin" or "true" would blank ordinary words. */
export const MIN_SECRET_LENGTH = 6;

/**
 * Longer values are not searched for either: a value that size is data (setup()'s seed set,
 * a whole token file as JSON), hidden where it sits, and one such value made the search's
 * pattern too large to compile. The secrets pasted elsewhere are tokens, keys and passwords.
 */
export const MAX_SEARCHED_LENGTH = 4_096;

/** At most this many values are searched (the longest first): one pattern stays small enough to compile and run. */
export const MAX_SEARCHED_VALUES = 2_000;

export interface ValueHider {
  /** The values searched for, longest first (so a value is hidden whole before any part of it). */
  readonly values: readonly string[];
  /** `text` with every occurrence of a value, every JWT and every URL's credentials replaced by "[redacted]". */
  readonly hide: (text: string) => string;
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The hider of these values. Values the run's shown target holds are left out: the target
 * is shown anyway (it names the run), so an `-e BASE_URL` equal to it, hidden in `__ENV`,
 * would otherwise blank the target itself.
 */
export function valueHider(candidates: readonly string[], shownTarget = ""): ValueHider {
  const values = [...new Set(candidates)]
    .filter((v) => v.length >= MIN_SECRET_LENGTH && v.length <= MAX_SEARCHED_LENGTH && v !== REDACTED && !shownTarget.includes(v))
    .sort((a, b) => b.length - a.length || a.localeCompare(b))
    .slice(0, MAX_SEARCHED_VALUES);
  const pattern = values.length ? new RegExp(values.map(escaped).join("|"), "g") : null;
  const hide = (text: string) => {
    const byValue = pattern ? text.replace(pattern, REDACTED) : text;
    return redactUrlsIn(byValue.replace(JWT, REDACTED));
  };
  return { values, hide };
}

/**
 * Spec fields the value pass leaves alone: closed sets and identifiers the results are keyed
 * on (a step's name is a column of `windows`; thresholds name metrics), and the executor's
 * options, which hold numbers and durations. Anything else — new fields included — is searched.
 */
const SPEC_IDENTIFIERS: ReadonlySet<string> = new Set([
  "flow",
  "metrics",
  "preset",
  "executor",
  "stages",
  "vus",
  "regions",
  "maxInFlightFrom",
  "thresholds",
  "summaryTrendStats",
  "unitlessTrends",
  "options",
  "data",
]);
/** Keys inside a spec's sections (steps, script, scenario, outputs) whose values are identifiers. */
const SECTION_IDENTIFIERS: ReadonlySet<string> = new Set(["name", "method", "record", "scrape", "bundle", "exec", "seed", "type", "publicEnv"]);

/** The spec with `hider` applied to every string but its identifiers, named scenarios' specs included. */
export function hideValues(spec: RunSpec, hider: ValueHider): RunSpec {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(spec)) {
    if (SPEC_IDENTIFIERS.has(key)) out[key] = value;
    else if (key === "scenarios" && Array.isArray(value)) out[key] = value.map((s: { spec: RunSpec }) => ({ ...s, spec: hideValues(s.spec, hider) }));
    else out[key] = hideIn(value, hider, SECTION_IDENTIFIERS);
  }
  return out as unknown as RunSpec;
}

/**
 * Any JSON-like value with `hider` applied to its strings (not its keys, which are names:
 * metric, step, tag), except under the keys in `identifiers`. For a summary, an error
 * message or a result stored with the run.
 */
export function hideIn<T>(value: T, hider: ValueHider, identifiers: ReadonlySet<string> = new Set()): T {
  if (typeof value === "string") return hider.hide(value) as T;
  if (Array.isArray(value)) return value.map((v) => hideIn(v, hider, identifiers)) as T;
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, identifiers.has(k) ? v : hideIn(v, hider, identifiers)])) as T;
}

/**
 * Summary fields the value pass leaves alone: k6's own sections (`metrics`, `root_group`,
 * `options`), which are keyed and named by metrics, groups and checks, and the identifiers
 * readers match on (a threshold's metric and expression, a step, region or shard). Free
 * text — the run's name and target, error samples, a script's errors and console lines,
 * reasons — is searched.
 */
const SUMMARY_IDENTIFIERS: ReadonlySet<string> = new Set([
  "metrics",
  "root_group",
  "options",
  "metric",
  "threshold",
  "step",
  "steps",
  "executor",
  "region",
  "regions",
  "colo",
  "segment",
  "state",
  "status",
  "runId",
]);

/** A run's summary (core/run/summary.ts) with `hider` applied to its free text. */
export function hideInSummary<T>(summary: T, hider: ValueHider): T {
  return hideIn(summary, hider, SUMMARY_IDENTIFIERS);
}
