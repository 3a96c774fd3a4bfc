/**
 * `edgeload run --scenario NAME` for a built-in scenario that is a k6 script
 * (scenarios/script-scenarios.ts, e.g. `browser-login`): the script to run and the __ENV it
 * gets, so run-command.ts runs it exactly as `edgeload run <script>` runs any script.
 *
 * BASE_URL is `--target`, else the local stack's target; ADMIN_SECRET is `--admin-secret`,
 * else the local stack's; `-e` comes after both, so it can override either. The `--scenario`
 * form's flags that only a flow takes (`--preset`, `--seed`, `--client-id`, `--rate`, …) are
 * refused by name, exit 104: a script's load is k6's `--vus`, `-d`, `-i`, `--stage`.
 */
import { join } from "node:path";
import { SCRIPT_SCENARIOS } from "../scenarios/script-scenarios.ts";
import { CliError, EXIT } from "./connection.ts";
import type { OptionSpec } from "./option-table.ts";
import { PROJECT_ROOT } from "./paths.ts";
import { RUN_COMMAND } from "./tables/run-table.ts";

/** The flags of the --scenario form a script scenario still takes, though k6 scripts otherwise do not. */
const TAKEN = new Set(["scenario", "admin-secret"]);

export interface ScenarioScript {
  /** The script's path. */
  readonly path: string;
  /** `NAME=VALUE` entries for its __ENV, the command line's `-e` last. */
  readonly env: string[];
}

/**
 * The script run of `--scenario name`, or null when that scenario is a flow. Flags that
 * cannot apply are refused all at once, naming each.
 */
export async function scenarioScript(
  name: string,
  values: { target?: string | undefined; "admin-secret"?: string | undefined; env?: string[] | undefined },
  given: ReadonlySet<string>,
): Promise<ScenarioScript | null> {
  const scenario = Object.hasOwn(SCRIPT_SCENARIOS, name) ? SCRIPT_SCENARIOS[name]! : null;
  if (!scenario) return null;
  const options: readonly OptionSpec[] = RUN_COMMAND.options;
  const refused = options
    .filter((o) => given.has(o.name) && !TAKEN.has(o.name) && o.kinds !== undefined && !o.kinds.includes("script"))
    .map((o) => `--${o.name}`);
  if (refused.length) {
    throw new CliError(
      `${refused.join(", ")} cannot apply to --scenario ${name}, a k6 script (${scenario.script}): its load is --vus, -d, -i or --stage, as any script's`,
      EXIT.invalidConfig,
    );
  }
  const dev = values.target && (values["admin-secret"] || !scenario.needsAdminSecret) ? null : await (await import("./dev-file.ts")).readDevFile();
  const target = values.target ?? dev?.targetUrl;
  if (!target) throw new CliError(`--scenario ${name}: --target is required (or run \`edgeload dev\` to default to the local target)`, EXIT.invalidConfig);
  const adminSecret = values["admin-secret"] ?? dev?.targetAdminSecret;
  if (scenario.needsAdminSecret && !adminSecret) {
    throw new CliError(
      `--scenario ${name}: --admin-secret is required (the provider's admin API secret: the script makes its user and client with it), or run \`edgeload dev\``,
      EXIT.invalidConfig,
    );
  }
  const env = [`BASE_URL=${target.replace(/\/+$/, "")}`, ...(adminSecret ? [`ADMIN_SECRET=${adminSecret}`] : []), ...(values.env ?? [])];
  return { path: join(PROJECT_ROOT, scenario.script), env };
}
