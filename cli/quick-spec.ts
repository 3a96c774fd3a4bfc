/**
 * Run specs the CLI builds without a spec file: the vegeta-like quick form of
 * `edgeload run --target … --rate … --duration …`, the scenario form
 * (`--scenario … --preset …`), and the demo's runs.
 */

/** Flags both forms share: placement, limits, thresholds and the run's name. */
export interface CommonRunOptions {
  readonly shards?: number;
  /** Comma-separated location hints. */
  readonly regions?: string;
  readonly timeout?: string;
  readonly maxVUs?: number;
  /** `metric=expression` flags. */
  readonly thresholds?: readonly string[];
  readonly name?: string;
}

export interface QuickOptions extends CommonRunOptions {
  readonly target: string;
  /** A constant arrival rate per second for `duration`, unless `profile` is given. */
  readonly rate?: number;
  readonly duration?: string;
  /** The executor and its options (k6's VU shortcuts, run-forms.ts) instead of rate and duration. */
  readonly profile?: Readonly<Record<string, unknown>>;
  readonly method?: string;
  readonly headers?: readonly string[];
  readonly body?: string;
}

/** The spec fields of the common flags that were given. */
function commonFields(o: CommonRunOptions): Record<string, unknown> {
  return {
    ...(o.shards !== undefined ? { shards: o.shards } : {}),
    ...(o.regions ? { regions: o.regions.split(",").map((r) => r.trim()) } : {}),
    ...(o.timeout ? { timeout: o.timeout } : {}),
    ...(o.maxVUs !== undefined ? { maxVUs: o.maxVUs } : {}),
  };
}

/**
 * @example quickSpec({ target: "http://127.0.0.1:9090/delay?ms=20", rate: 1000, duration: "15s" })
 *   → constant-arrival-rate at 1000/s against path /delay?ms=20 of http://127.0.0.1:9090
 */
export function quickSpec(o: QuickOptions): Record<string, unknown> {
  let url: URL;
  try {
    url = new URL(o.target);
  } catch {
    throw new QuickSpecError(`--target: "${o.target}" is not an absolute URL`);
  }
  const headers: Record<string, string> = {};
  for (const h of o.headers ?? []) {
    const i = h.indexOf(":");
    if (i <= 0) throw new QuickSpecError(`--header: "${h}" must look like "Name: value"`);
    headers[h.slice(0, i).trim()] = h.slice(i + 1).trim();
  }
  const thresholds = thresholdFlags(o.thresholds ?? []);
  return {
    name: o.name ?? `${o.method ?? "GET"} ${url.host}${url.pathname}`,
    target: url.origin,
    steps: [{ method: o.method ?? "GET", path: url.pathname + url.search, headers, ...(o.body !== undefined ? { body: o.body } : {}) }],
    ...(o.profile ?? { executor: "constant-arrival-rate", rate: o.rate, duration: o.duration }),
    ...commonFields(o),
    thresholds,
  };
}

/** `--threshold "metric=expression"` flags as a k6 thresholds map. */
function thresholdFlags(flags: readonly string[]): Record<string, string[]> {
  const thresholds: Record<string, string[]> = {};
  for (const t of flags) {
    const i = t.indexOf("=");
    if (i <= 0) throw new QuickSpecError(`--threshold: "${t}" must look like "http_req_duration=p(95)<300"`);
    (thresholds[t.slice(0, i)] ??= []).push(t.slice(i + 1));
  }
  return thresholds;
}

export class QuickSpecError extends Error {}

export interface ScenarioRunOptions extends CommonRunOptions {
  readonly scenario: string;
  readonly target: string;
  readonly seed?: string;
  /** A preset like "rps300"; otherwise rate and duration give a constant arrival rate. */
  readonly preset?: string;
  readonly durationScale?: number;
  readonly rate?: number;
  readonly duration?: string;
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly adminSecret?: string;
  readonly redirectUri?: string;
  readonly scope?: string;
  readonly audience?: string;
}

/**
 * The spec of `edgeload run --scenario …`: a built-in scenario at a preset (or a constant
 * rate). Options the scenario does not need are left out, so no secret travels for nothing.
 *
 * @example scenarioRunSpec({ scenario: "introspect", preset: "rps300", seed: "tokens-3k", target: "https://auth.example", clientId, clientSecret })
 */
export function scenarioRunSpec(o: ScenarioRunOptions, needs: readonly string[]): Record<string, unknown> {
  if (!o.preset && (o.rate === undefined || !o.duration))
    throw new QuickSpecError("--preset (e.g. rps100), or --rate and --duration, are required with --scenario");
  if (o.preset && (o.rate !== undefined || o.duration))
    throw new QuickSpecError("--preset sets the load profile; drop --rate/--duration (use --duration-scale to shorten it)");
  const pick = (name: keyof ScenarioRunOptions) => (needs.includes(name) && o[name] !== undefined ? { [name]: o[name] } : {});
  return {
    name: o.name ?? `${o.scenario}${o.preset ? ` ${o.preset}` : ""}`,
    target: o.target.replace(/\/+$/, ""),
    scenario: {
      name: o.scenario,
      ...(o.seed ? { seed: o.seed } : {}),
      ...pick("clientId"),
      ...pick("clientSecret"),
      ...pick("adminSecret"),
      ...pick("redirectUri"),
      ...(o.scope ? { scope: o.scope } : {}),
      ...(o.audience ? { audience: o.audience } : {}),
    },
    ...(o.preset
      ? { preset: o.preset, ...(o.durationScale !== undefined ? { durationScale: o.durationScale } : {}) }
      : { executor: "constant-arrival-rate", rate: o.rate, duration: o.duration }),
    ...commonFields(o),
    ...(o.thresholds?.length ? { thresholds: thresholdFlags(o.thresholds) } : {}),
  };
}

/** The demo's scenarios, in the order it runs them, and their load: rps100 shortened to ~12 s. */
export const DEMO_SCENARIOS = ["userinfo", "introspect"] as const;
export const DEMO_PRESET = { preset: "rps100", durationScale: 0.15 } as const;

/** One demo run: a built-in scenario over the demo's token set, 4 shards in 4 regions. */
export function demoSpec(
  scenario: (typeof DEMO_SCENARIOS)[number],
  target: string,
  seed: string,
  client: { clientId: string; clientSecret: string },
): Record<string, unknown> {
  return scenarioRunSpec(
    {
      scenario,
      target,
      seed,
      ...DEMO_PRESET,
      ...client,
      shards: 4,
      regions: "wnam,enam,weur,apac",
      name: `demo: ${scenario} at ${DEMO_PRESET.preset} ×${DEMO_PRESET.durationScale}`,
    },
    ["clientId", "clientSecret"],
  );
}
