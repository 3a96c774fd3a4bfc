/**
 * The flags of `edgeload run` that set a spec's own fields rather than its load
 * (load-overrides.ts): target, name, placement, timeout, in-flight cap, tags and
 * thresholds. The command line wins over the spec, as in k6; in a spec of named scenarios
 * a flag that each scenario could set for itself replaces theirs too, and one that only
 * they can set (shards, maxVUs) sets the one scenario's, or is refused among several,
 * naming the flag.
 */
import { LOCATION_HINTS } from "../core/spec/types.ts";
import { expandPreset, type Checked } from "./load-overrides.ts";

export interface RunFlags {
  readonly target?: string | undefined;
  readonly name?: string | undefined;
  readonly shards?: string | undefined;
  readonly regions?: string | undefined;
  readonly timeout?: string | undefined;
  readonly maxVUs?: string | undefined;
  /** `NAME=VALUE` pairs. */
  readonly tags?: readonly string[] | undefined;
  /** `metric=expression` pairs. */
  readonly thresholds?: readonly string[] | undefined;
  readonly noThresholds?: boolean | undefined;
}

/** `--threshold "metric=expression"` flags as a k6 thresholds map, or the malformed ones named. */
export function thresholdFlags(flags: readonly string[]): Checked<Record<string, string[]>> {
  const thresholds: Record<string, string[]> = {};
  const problems: string[] = [];
  for (const t of flags) {
    const i = t.indexOf("=");
    if (i <= 0) problems.push(`--threshold: "${t}" must look like "http_req_duration=p(95)<300"`);
    else (thresholds[t.slice(0, i)] ??= []).push(t.slice(i + 1));
  }
  return problems.length ? { ok: false, problems } : { ok: true, value: thresholds };
}

/** `--regions wnam,enam` as location hints, or why not. */
/** k6's --tag NAME=VALUE, added to (or replacing in) the run's own `tags`; a malformed one is a problem. */
export function withTagFlags(own: unknown, flags: readonly string[], problems: string[]): Record<string, unknown> {
  const tags: Record<string, unknown> = { ...(typeof own === "object" && own !== null ? own : {}) };
  for (const t of flags) {
    const i = t.indexOf("=");
    if (i <= 0) problems.push(`--tag: "${t}" is not NAME=VALUE`);
    else tags[t.slice(0, i)] = t.slice(i + 1);
  }
  return tags;
}

export function regionsFlag(raw: string): Checked<string[]> {
  const regions = raw
    .split(",")
    .map((r) => r.trim())
    .filter(Boolean);
  const unknown = regions.filter((r) => !(LOCATION_HINTS as readonly string[]).includes(r));
  if (!regions.length || unknown.length) return { ok: false, problems: [`--regions: "${raw}" must be location hints from ${LOCATION_HINTS.join(", ")}`] };
  return { ok: true, value: regions };
}

/**
 * The spec with the flags applied, or every flag it cannot take, named.
 *
 * @example applyRunFlags({ target: "http://a", thresholds: { http_req_failed: ["rate<0.01"] } }, { thresholds: ["http_req_duration=p(95)<300"] })
 *   // → ok, thresholds: { http_req_failed: ["rate<0.01"], http_req_duration: ["p(95)<300"] }
 */
export function applyRunFlags(input: Record<string, unknown>, f: RunFlags): Checked<Record<string, unknown>> {
  const problems: string[] = [];
  const named = typeof input.scenarios === "object" && input.scenarios !== null;
  let spec = { ...input };
  const number = (flag: string, raw: string) => {
    const n = Number(raw);
    if (Number.isInteger(n) && n >= 1) return n;
    problems.push(`--${flag}: "${raw}" is not a whole number of at least 1`);
    return undefined;
  };
  if (f.target !== undefined) {
    if (URL.canParse(f.target) && /^https?:$/.test(new URL(f.target).protocol)) spec.target = f.target;
    else problems.push(`--target: "${f.target}" is not an absolute http or https URL`);
  }
  if (f.name !== undefined) spec.name = f.name;
  // Shards and the in-flight cap are a scenario's own: the flags set them on the run, or on
  // its one named scenario (a k6 script's `scenarios: {one: …}`); with several, each sets its own.
  const sole = named ? soleScenario(spec.scenarios) : null;
  const own = (field: "shards" | "maxVUs", value: number | undefined) => {
    if (value === undefined) return;
    if (sole) spec.scenarios = mapScenarios(spec.scenarios, (scenario) => ({ ...scenario, [field]: value }));
    else spec[field] = value;
  };
  if (f.shards !== undefined) {
    if (named && !sole) problems.push("--shards: this spec has named scenarios, each given its own shards: set `shards` in them");
    else own("shards", number("shards", f.shards));
  }
  if (f.maxVUs !== undefined) {
    const executor = (sole?.scenario ?? spec).executor;
    if (named && !sole) problems.push("--max-vus: this spec has named scenarios, each with its own in-flight cap: set `maxVUs` in them");
    else if (typeof executor === "string" && !executor.endsWith("arrival-rate") && (sole?.scenario ?? spec).preset === undefined) {
      problems.push(`--max-vus: caps iterations in flight in an arrival-rate run; a ${executor} run has its VUs (--vus)`);
    } else own("maxVUs", number("max-vus", f.maxVUs));
  }
  // Fields each named scenario inherits unless it sets its own: the flag replaces theirs too.
  const inherited: Array<[string, unknown]> = [];
  if (f.regions !== undefined) {
    const regions = regionsFlag(f.regions);
    if (regions.ok) inherited.push(["regions", regions.value]);
    else problems.push(...regions.problems);
  }
  if (f.timeout !== undefined) inherited.push(["timeout", f.timeout]);
  for (const [field, value] of inherited) {
    spec[field] = value;
    if (named) spec.scenarios = mapScenarios(spec.scenarios, (s) => withoutKey(s, field));
  }
  if (f.tags?.length) spec.tags = withTagFlags(spec.tags, f.tags, problems);
  if (f.noThresholds && f.thresholds?.length) problems.push("--no-thresholds and --threshold: give one");
  else if (f.noThresholds) {
    const dropped = withoutThresholds(spec);
    if (dropped.ok) spec = dropped.value;
    else problems.push(...dropped.problems);
  } else if (f.thresholds?.length) {
    const parsed = thresholdFlags(f.thresholds);
    // Per metric, the command line's replace the spec's (and a preset's: run-spec.ts lets a spec's own win).
    if (parsed.ok) spec.thresholds = { ...(typeof spec.thresholds === "object" && spec.thresholds !== null ? spec.thresholds : {}), ...parsed.value };
    else problems.push(...parsed.problems);
  }
  return problems.length ? { ok: false, problems } : { ok: true, value: spec };
}

/** k6's --no-thresholds: none of the run's, its scenarios', its presets' or a built-in scenario's correctness defaults. */
function withoutThresholds(spec: Record<string, unknown>): Checked<Record<string, unknown>> {
  const one = (s: Record<string, unknown>) => {
    const expanded = expandPreset(s);
    // A built-in scenario's correctness thresholds apply unless the spec says otherwise.
    return expanded.ok
      ? { ok: true as const, value: { ...withoutKey(expanded.value, "thresholds"), ...(expanded.value.scenario ? { correctnessThresholds: false } : {}) } }
      : expanded;
  };
  const top = one(spec);
  if (!top.ok || typeof spec.scenarios !== "object" || spec.scenarios === null) return top;
  const problems: string[] = [];
  const scenarios = mapScenarios(spec.scenarios, (s) => {
    const r = one(s);
    if (!r.ok) problems.push(...r.problems);
    return r.ok ? r.value : s;
  });
  return problems.length ? { ok: false, problems } : { ok: true, value: { ...top.value, scenarios } };
}

/** The one scenario of a spec's `scenarios`, with its name; null when there are several. */
function soleScenario(scenarios: unknown): { name: string; scenario: Record<string, unknown> } | null {
  const entries = Object.entries(scenarios as Record<string, unknown>);
  const [name, scenario] = entries[0] ?? [];
  return entries.length === 1 && name !== undefined && typeof scenario === "object" && scenario !== null
    ? { name, scenario: scenario as Record<string, unknown> }
    : null;
}

function mapScenarios(scenarios: unknown, f: (s: Record<string, unknown>) => Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(scenarios as Record<string, unknown>).map(([name, s]) => [name, typeof s === "object" && s !== null ? f(s as Record<string, unknown>) : s]),
  );
}

function withoutKey(s: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _dropped, ...rest } = s;
  return rest;
}
