/**
 * `edgeload plan <spec.json | script.js> [--max-cost USD] [--config wrangler.toml] [--format table|json]`:
 * what a run would do, before any load — shards per region, platform usage against every
 * documented limit, and its estimated cost — under the caps of the deployment's
 * wrangler.toml. With a deployment named (`--url`/`--token` or EDGELOAD_URL/EDGELOAD_TOKEN)
 * it also asks that deployment (POST /v1/plan, which starts nothing) whether its
 * ALLOWED_TARGETS take the target; without one nothing is contacted. Exit 104 when the spec
 * is invalid, the plan breaks a cap or a platform limit, the cost is over `maxCost`, or the
 * deployment would refuse the target. A k6 script is planned from its
 * options (`-e NAME=VALUE` for its __ENV), counting one request per iteration: what an
 * iteration sends is the script's to decide at run time.
 */
import { join } from "node:path";
import { ArrivalSchedule } from "../../core/schedule/arrival-schedule.ts";
import { planRun } from "../../core/plan/plan.ts";
import { preflight } from "../../core/plan/preflight.ts";
import { renderPreflight } from "../../core/plan/preflight-text.ts";
import { parseRunSpec, redactSpec } from "../../core/spec/run-spec.ts";
import { ApiProblem } from "./client.ts";
import { CliError, connect, EXIT, parseCliArgs, readJsonFile } from "./connection.ts";
import { exitCodeOfApiStatus } from "./exit-codes.ts";
import { PROJECT_ROOT } from "./paths.ts";
import { namedValues, withOverrides } from "./spec-overrides.ts";
import { limitsFromConfig, readWranglerConfig } from "./wrangler-config.ts";

const USAGE =
  "usage: edgeload plan <spec.json | script.js [-e NAME=VALUE]...> [--max-cost USD] [--var NAME=VALUE]... [--config wrangler.toml] [--format table|json] [--url URL --token TOKEN]";

export async function planCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    {
      args,
      allowPositionals: true,
      options: {
        "max-cost": { type: "string" },
        config: { type: "string" },
        format: { type: "string", default: "table" },
        var: { type: "string", multiple: true },
        secret: { type: "string", multiple: true },
        env: { type: "string", multiple: true, short: "e" },
        target: { type: "string" },
        url: { type: "string" },
        token: { type: "string" },
      },
    },
    USAGE,
  );
  if (!positionals[0]) throw new CliError(`a spec file is required\n${USAGE}`, EXIT.invalidConfig);
  if (values.format !== "table" && values.format !== "json") throw new CliError(`--format: table or json, not "${values.format}"`, EXIT.invalidConfig);
  const script = await import("./script-command.ts");
  const input = script.isScriptPath(positionals[0])
    ? (await script.scriptRun(positionals[0], namedValues("env", values.env), values.target ?? null)).spec
    : await readJsonFile(positionals[0], "run spec");
  if (script.isScriptPath(positionals[0]) && values.format === "table")
    console.log("note: a k6 script's iterations are counted as one request each; what one sends is the script's to decide at run time\n");
  const raw = withOverrides(input, namedValues("var", values.var), namedValues("secret", values.secret), null);
  const spec = parseRunSpec(values["max-cost"] === undefined ? raw : { ...(raw as object), maxCost: maxCost(values["max-cost"]) });
  if (!spec.ok) throw new CliError(`invalid run spec:\n${spec.problems.map((p) => `  - ${p.field}: ${p.detail}`).join("\n")}`, EXIT.invalidConfig);
  const limits = limitsFromConfig(readWranglerConfig(values.config ?? join(PROJECT_ROOT, "wrangler.toml")));
  const planned = planRun(spec.spec, new ArrivalSchedule(spec.spec.stages).total, limits);
  if (!planned.ok)
    throw new CliError(`the run exceeds the deployment's caps:\n${planned.problems.map((p) => `  - ${p.field}: ${p.detail}`).join("\n")}`, EXIT.invalidConfig);
  const result = preflight(spec.spec, planned.plan);
  const target = await deploymentTargetCheck(values, raw);
  if (values.format === "json") console.log(JSON.stringify({ spec: redactSpec(spec.spec), plan: planned.plan, ...result, target }, null, 2));
  else console.log(`${renderPreflight(spec.spec, planned.plan, result)}\n\n${targetLine(spec.spec.target, target)}`);
  if (target && !target.allowed) {
    console.error(`edgeload: the deployment would refuse this run: ${target.detail ?? "target not allowed"}`);
    return EXIT.invalidConfig;
  }
  const over = result.limits.filter((l) => !l.ok);
  if (result.overBudget) {
    console.error(`edgeload: ${result.overBudget.field}: ${result.overBudget.detail}`);
    return EXIT.invalidConfig;
  }
  if (over.length) {
    console.error(`edgeload: the run breaks ${over.length} platform limit${over.length === 1 ? "" : "s"}: ${over.map((l) => l.limit).join(", ")}`);
    return EXIT.invalidConfig;
  }
  return EXIT.ok;
}

type TargetCheck = { url: string; allowed: boolean; detail?: string } | null;

/** The named deployment's verdict on the target (POST /v1/plan), or null when none is named. */
async function deploymentTargetCheck(values: { url?: string | undefined; token?: string | undefined }, spec: unknown): Promise<TargetCheck> {
  if (!values.url && !process.env.EDGELOAD_URL) return null;
  const client = await connect(values);
  try {
    return (await client.planRun(spec)).target;
  } catch (error) {
    if (error instanceof ApiProblem)
      throw new CliError(`${client.baseUrl} could not check the run: ${error.message}`, exitCodeOfApiStatus(error.status, error.body.type));
    throw new CliError(`${client.baseUrl} could not be reached to check the target: ${(error as Error).message}`);
  }
}

function targetLine(target: string, check: TargetCheck): string {
  if (!check)
    return `target: ${target} — not checked against a deployment's ALLOWED_TARGETS (name one with --url and --token, or EDGELOAD_URL and EDGELOAD_TOKEN)`;
  return check.allowed ? `target: ${target} — allowed by the deployment` : `target: ${target} — ${check.detail ?? "would be refused"}`;
}

/** `--max-cost 5` or `--max-cost $5`. */
export function maxCost(text: string): number {
  const n = Number(text.replace(/^\$/, ""));
  if (!(n > 0) || !Number.isFinite(n)) throw new CliError(`--max-cost: "${text}" is not a budget in US dollars above 0`, EXIT.invalidConfig);
  return n;
}
