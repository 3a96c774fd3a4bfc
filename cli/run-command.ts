/**
 * `edgeload run`: a spec file, a k6 script, or one of the spec-less forms (run-forms.ts),
 * with the command line's flags applied over the run's own options as in k6
 * (load-overrides.ts, run-overrides.ts, k6-option-overrides.ts), validated here before
 * anything is contacted, then submitted and followed (follow-run.ts).
 *
 * Every flag the parser accepts is acted on or refused with exit 104, naming it: first by
 * the table (a flag of another kind of run), then by the overrides (a flag this run's
 * model cannot express).
 */
import { parseRunSpec } from "../core/spec/run-spec.ts";
import { CliError, connect, EXIT, readJsonFile } from "./connection.ts";
import { ledgerFor } from "./delivery-check.ts";
import { submitAndFollow } from "./follow-run.ts";
import { applyLoadFlags, parseLoadFlags, type Checked, type LoadFlags } from "./load-overrides.ts";
import { inapplicableFlags, parseCommand, type OptionValues, type RunKind } from "./option-table.ts";
import { applyRunFlags } from "./run-overrides.ts";
import { withPublicEnv } from "./public-env.ts";
import { quickForm, scenarioForm } from "./run-forms.ts";
import { LOCAL_ADMIN_SECRET, namedValues, withOverrides } from "./spec-overrides.ts";
import { RUN_COMMAND } from "./tables/run-table.ts";

type RunValues = OptionValues<typeof RUN_COMMAND.options>;

export async function runCommand(args: readonly string[]): Promise<number> {
  const { values, positionals, given } = parseCommand(RUN_COMMAND, args);
  if (positionals.length > 1) throw new CliError(`one spec or script at a time, not ${positionals.join(" ")}`, EXIT.invalidConfig);
  const file = positionals[0];
  // script-command.ts (esbuild, the k6 runtime) is loaded only for a file.
  const isScript = file !== undefined && (await import("./script-command.ts")).isScriptPath(file);
  const kind: RunKind = file ? (isScript ? "script" : "spec") : values.scenario !== undefined ? "scenario" : "quick";
  const where = `flags that cannot apply to ${file ?? "this run"}`;
  const refused = inapplicableFlags(RUN_COMMAND, given, kind);
  if (refused.length) throw invalid(where, refused);
  const load = checked("bad load flags", parseLoadFlags(values));
  if (kind === "script") return runScript(file!, values, load);
  // A built-in scenario that is a k6 script (browser-login) runs as that script.
  const scripted = kind === "scenario" ? await (await import("./scenario-script.ts")).scenarioScript(values.scenario!, values, given) : null;
  if (scripted) return runScript(scripted.path, { ...values, env: scripted.env }, load);

  const { spec: base, rest } =
    kind === "spec"
      ? { spec: await readSpecFile(file!), rest: load }
      : kind === "scenario"
        ? await scenarioForm({ ...values, scenario: values.scenario! }, load)
        : quickForm(values, load);
  // Both steps run whatever the first found, so every flag that cannot apply is named at once.
  const loaded = applyLoadFlags(base, rest);
  const placed = applyRunFlags(loaded.ok ? loaded.value : base, {
    // The --target form and the --scenario form took theirs already.
    target: kind === "spec" ? values.target : undefined,
    name: values.name,
    shards: values.shards,
    regions: values.regions,
    timeout: values.timeout,
    maxVUs: values["max-vus"],
    tags: values.tag,
    thresholds: values.threshold,
    noThresholds: values["no-thresholds"],
  });
  const problems = [...(loaded.ok ? [] : loaded.problems), ...(placed.ok ? [] : placed.problems)];
  if (!placed.ok || problems.length) throw invalid(where, problems);
  // -e is k6's name for what a spec calls vars.
  const vars = { ...namedValues("env", values.env), ...namedValues("var", values.var) };
  const secrets = namedValues("secret", values.secret);
  const needsDev = JSON.stringify(placed.value).includes(LOCAL_ADMIN_SECRET) || Object.values(secrets).includes(LOCAL_ADMIN_SECRET);
  const spec = withOverrides(placed.value, vars, secrets, needsDev ? await (await import("./dev-file.ts")).readDevFile() : null) as Record<string, unknown>;
  const outputs = await withOutputs(spec, values);
  // Validate before talking to anyone, as k6 does; the API validates again (authoritatively).
  const parsed = parseRunSpec(outputs.spec);
  if (!parsed.ok) throw new CliError(`invalid run spec:\n${parsed.problems.map((p) => `  - ${p.field}: ${p.detail}`).join("\n")}`, EXIT.invalidConfig);
  if (values["no-thresholds"] && parsed.spec.scenario) {
    // Said on stderr, whatever --quiet: without them nothing the provider answers can fail the run.
    console.error(
      `⚠ --no-thresholds: the ${parsed.spec.scenario.name} scenario's success and correctness thresholds are left out; this run cannot fail on what the provider answers`,
    );
  }
  const client = await connect(values);
  return submitAndFollow(client, outputs.spec, {
    summaryExport: values["summary-export"],
    quiet: values.quiet,
    ledger: await localLedger(values, parsed.spec.target),
    jsonOut: outputs.jsonFiles,
    preflight: !values["no-preflight"],
  });
}

/** `edgeload run script.js`: a k6 script (script-command.ts), k6's flags merged into its options. */
async function runScript(path: string, values: RunValues, load: LoadFlags): Promise<number> {
  const system = values["include-system-env-vars"]
    ? Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined))
    : {};
  // --var is the spec's name for what a script reads from __ENV.
  const env = { ...system, ...namedValues("var", values.var), ...namedValues("env", values.env) };
  const built = await (await import("./script-command.ts")).scriptRun(
    path,
    env,
    values.target ?? null,
    { load, tags: values.tag, thresholds: values.threshold, noThresholds: values["no-thresholds"] },
    { dir: values["modules-dir"] ?? null, allowHttp: values["allow-http-modules"] },
  );
  if (built.ignored.length && !values.quiet) console.log(`options accepted without effect on edgeload: ${built.ignored.join(", ")}`);
  // The script's target is its nominal one (set above); the rest are the run's own fields.
  const placed = checked(
    `flags that cannot apply to ${path}`,
    applyRunFlags(withPublicEnv(built.spec, values["public-env"]), {
      name: values.name,
      shards: values.shards,
      regions: values.regions,
      timeout: values.timeout,
    }),
  );
  const outputs = await withOutputs(placed, values);
  const parsed = parseRunSpec(outputs.spec);
  if (!parsed.ok)
    throw new CliError(`invalid run spec from ${path}:\n${parsed.problems.map((p) => `  - ${p.field}: ${p.detail}`).join("\n")}`, EXIT.invalidConfig);
  const client = await connect(values);
  await client.uploadScript(built.id, built.modules);
  return submitAndFollow(client, outputs.spec, {
    summaryExport: values["summary-export"],
    quiet: values.quiet,
    ledger: await localLedger(values, parsed.spec.target),
    jsonOut: outputs.jsonFiles,
    handleSummary: built.handleSummary,
  });
}

/** --max-cost and --out: the budget, push outputs added to the spec's, JSON files the CLI writes. */
async function withOutputs(spec: Record<string, unknown>, values: RunValues): Promise<{ spec: Record<string, unknown>; jsonFiles: string[] }> {
  const { jsonFiles, pushOutputs } = (await import("./out-flags.ts")).parseOutFlags(values.out);
  const out = { ...spec };
  if (values["max-cost"] !== undefined) out.maxCost = (await import("./plan-command.ts")).maxCost(values["max-cost"]);
  if (pushOutputs.length && spec.scenarios !== undefined) {
    // The spec of a run of named scenarios has no `outputs` (core/spec/named-scenarios.ts): say so by flag.
    throw new CliError(
      `--out ${pushOutputs.map((o) => (o.type === "prometheus-rw" ? "experimental-prometheus-rw" : o.type)).join(", ")}: a run of named scenarios cannot push outputs yet; --out json=FILE works`,
      EXIT.invalidConfig,
    );
  }
  if (pushOutputs.length) out.outputs = [...(Array.isArray(spec.outputs) ? spec.outputs : []), ...pushOutputs];
  return { spec: out, jsonFiles };
}

/** Against the local stack's own target, a ledger to reconcile what was sent with what it received. */
async function localLedger(values: RunValues, target: string) {
  const dev = values.url ? null : await (await import("./dev-file.ts")).readDevFile();
  return dev ? ledgerFor(target, [dev.targetUrl, ...(dev.targetProxyUrl ? [dev.targetProxyUrl] : [])], dev.targetAdminSecret) : null;
}

async function readSpecFile(path: string): Promise<Record<string, unknown>> {
  const spec = await readJsonFile(path, "spec file");
  if (typeof spec !== "object" || spec === null || Array.isArray(spec)) throw new CliError(`spec file ${path} is not a JSON object`, EXIT.invalidConfig);
  return spec as Record<string, unknown>;
}

/** A checked value, or its problems as one invalid-input error. */
function checked<T>(what: string, result: Checked<T>): T {
  if (result.ok) return result.value;
  throw invalid(what, result.problems);
}

function invalid(what: string, problems: readonly string[]): CliError {
  return new CliError(`${what}:\n${problems.map((p) => `  - ${p}`).join("\n")}`, EXIT.invalidConfig);
}
