/**
 * The two spec-less forms of `edgeload run`, as the run spec they stand for:
 *
 * - `--target URL`: one request. With `--rate` it arrives at that rate for `-d`
 *   (constant-arrival-rate, vegeta's way); without, k6's shortcuts make VUs of it
 *   (`--vus 10 -d 30s`, `-i 100`, `--stage 10s:20`).
 * - `--scenario NAME`: a built-in scenario at a `--preset`, or at `--rate` for `-d`.
 *
 * The load flags these forms do not consume, and the flags every run takes, are applied
 * afterwards as to a spec file (load-overrides.ts, run-overrides.ts).
 */
import { CliError, EXIT } from "./connection.ts";
import { closedProfile, type LoadFlags } from "./load-overrides.ts";
import { quickSpec, QuickSpecError, scenarioRunSpec } from "./quick-spec.ts";

export interface FormSpec {
  readonly spec: Record<string, unknown>;
  /** The load flags still to apply. */
  readonly rest: LoadFlags;
}

/** `--target URL` with `--rate N -d D`, or with k6's VU shortcuts. */
export function quickForm(
  v: { target?: string | undefined; method?: string | undefined; header?: string[] | undefined; body?: string | undefined },
  load: LoadFlags,
): FormSpec {
  if (!v.target) throw new CliError("a spec file, a k6 script, --target URL or --scenario NAME is required (edgeload run --help)", EXIT.invalidConfig);
  const { rate, duration, vus, iterations, stages, ...rest } = load;
  const request = {
    target: v.target,
    ...(v.method ? { method: v.method.toUpperCase() } : {}),
    ...(v.header ? { headers: v.header } : {}),
    ...(v.body !== undefined ? { body: v.body } : {}),
  };
  if (rate !== undefined) {
    if (duration === undefined) throw new CliError("--rate needs -d/--duration: how long to arrive at that rate", EXIT.invalidConfig);
    return {
      spec: built(() => quickSpec({ ...request, rate, duration })),
      rest: { ...rest, ...(vus !== undefined ? { vus } : {}), ...(iterations !== undefined ? { iterations } : {}), ...(stages ? { stages } : {}) },
    };
  }
  const profile = closedProfile(load, vus ?? 1, vus ?? 1);
  if (!profile) throw new CliError("--target needs a load: --rate N -d 30s (arrivals per second) or --vus N -d 30s (VUs, as k6)", EXIT.invalidConfig);
  if (duration !== undefined && stages)
    throw new CliError("-d and --stage: give one (k6 refuses the pair too): --stage's durations add up to the run's", EXIT.invalidConfig);
  if (iterations !== undefined && stages) throw new CliError("-i and --stage: give one (k6 refuses the pair too)", EXIT.invalidConfig);
  return { spec: built(() => quickSpec({ ...request, profile })), rest };
}

export interface ScenarioFlags {
  readonly scenario: string;
  readonly target?: string | undefined;
  readonly preset?: string | undefined;
  readonly "duration-scale"?: string | undefined;
  readonly seed?: string | undefined;
  readonly "client-id"?: string | undefined;
  readonly "client-secret"?: string | undefined;
  readonly "admin-secret"?: string | undefined;
  readonly "redirect-uri"?: string | undefined;
  readonly scope?: string | undefined;
  readonly audience?: string | undefined;
}

/**
 * `--scenario NAME` at a preset (its thresholds come with it) or at `--rate` for `-d`.
 * Against the local stack, the target, the load-test client and the admin secret default
 * from `.edgeload/dev.json`.
 */
export async function scenarioForm(v: ScenarioFlags, load: LoadFlags): Promise<FormSpec> {
  const { SCENARIOS, BUILT_IN_SCENARIO_NAMES } = await import("../scenarios/catalog.ts");
  const definition = SCENARIOS[v.scenario];
  if (!definition) throw new CliError(`--scenario: unknown scenario "${v.scenario}"; built in: ${BUILT_IN_SCENARIO_NAMES.join(", ")}`, EXIT.invalidConfig);
  const dev = v.target ? null : await (await import("./dev-file.ts")).readDevFile();
  const target = v.target ?? dev?.targetUrl;
  if (!target) throw new CliError("--target is required (or run `edgeload dev` to default to the local target)", EXIT.invalidConfig);
  let durationScale: number | undefined;
  if (v["duration-scale"] !== undefined) {
    durationScale = Number(v["duration-scale"]);
    if (!Number.isFinite(durationScale) || durationScale <= 0)
      throw new CliError(`--duration-scale: "${v["duration-scale"]}" is not a positive number`, EXIT.invalidConfig);
  }
  const pick = <T>(flag: T | undefined, local: T | undefined) => flag ?? local;
  const common = {
    scenario: definition.name,
    target,
    ...(v.seed ? { seed: v.seed } : {}),
    clientId: pick(v["client-id"], dev?.targetClient.clientId),
    clientSecret: pick(v["client-secret"], dev?.targetClient.clientSecret),
    adminSecret: pick(v["admin-secret"], dev?.targetAdminSecret),
    redirectUri: pick(v["redirect-uri"], dev?.targetClient.redirectUri),
    ...(v.scope ? { scope: v.scope } : {}),
    ...(v.audience ? { audience: v.audience } : {}),
  };
  if (v.preset) {
    // The preset is the base; -d, --stage, --rate and --rps then override it as in a spec.
    return {
      spec: built(() => scenarioRunSpec({ ...common, preset: v.preset!, ...(durationScale !== undefined ? { durationScale } : {}) }, definition.needs)),
      rest: load,
    };
  }
  if (durationScale !== undefined) throw new CliError("--duration-scale shortens a preset: without --preset, -d sets the length", EXIT.invalidConfig);
  const { rate, duration, ...rest } = load;
  if (rate === undefined || duration === undefined)
    throw new CliError("--preset (e.g. rps100), or --rate and -d/--duration, are required with --scenario", EXIT.invalidConfig);
  return { spec: built(() => scenarioRunSpec({ ...common, rate, duration }, definition.needs)), rest };
}

/** A form's spec, its QuickSpecError (a bad flag) as exit 104. */
function built(make: () => Record<string, unknown>): Record<string, unknown> {
  try {
    return make();
  } catch (error) {
    if (error instanceof QuickSpecError) throw new CliError(error.message, EXIT.invalidConfig);
    throw error;
  }
}
