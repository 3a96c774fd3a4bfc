/**
 * `--public-env NAME`: the `__ENV` names of a k6 script whose values may be stored and shown
 * with the run (`script.publicEnv`). Every other `-e` value is redacted wherever the run is
 * stored or shown (core/spec/redact.ts): a value's name does not say whether it is a token,
 * so only the user can say which are not.
 */
import { CliError, EXIT } from "./connection.ts";

/**
 * The script run's spec (k6-compat/options.ts specFromOptions) with `names` as the
 * `publicEnv` of its script — of each named scenario's script in a run of several. A name
 * that is in no script's `__ENV` is refused by name: a typo would otherwise hide the value
 * it meant to show.
 *
 * @example withPublicEnv({ script: { bundle, env: { BASE_URL: "…" } } }, ["BASE_URL"])
 *   // → { script: { bundle, env: { BASE_URL: "…" }, publicEnv: ["BASE_URL"] } }
 */
export function withPublicEnv(spec: Record<string, unknown>, names: readonly string[] | undefined): Record<string, unknown> {
  if (!names?.length) return spec;
  const scenarios = spec.scenarios as Record<string, Record<string, unknown>> | undefined;
  const scripts = (scenarios ? Object.values(scenarios) : [spec]).map((f) => f.script as { env?: Record<string, string> } | undefined);
  // The run's -e values and a k6 scenario's own `env`, both in its script's env by now.
  const given = [...new Set(scripts.flatMap((s) => Object.keys(s?.env ?? {})))];
  const unknown = names.filter((name) => !given.includes(name));
  if (unknown.length) {
    throw new CliError(
      `--public-env ${unknown.join(", ")}: not an __ENV name this run was given (${given.length ? `its names: ${given.slice(0, 20).join(", ")}${given.length > 20 ? ", …" : ""}` : "it has none; give values with -e NAME=VALUE"})`,
      EXIT.invalidConfig,
    );
  }
  const publicEnv = [...new Set(names)];
  const withNames = (fields: unknown) => {
    const f = fields as Record<string, unknown>;
    return f.script ? { ...f, script: { ...(f.script as Record<string, unknown>), publicEnv } } : f;
  };
  return scenarios ? { ...spec, scenarios: Object.fromEntries(Object.entries(scenarios).map(([name, fields]) => [name, withNames(fields)])) } : withNames(spec);
}
