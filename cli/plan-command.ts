/**
 * `edgeload plan <spec.json | script.js> [--max-cost USD] [--config wrangler.toml] [--format table|json] [--probe]`:
 * what a run would do, before any load — shards per region, how they report (the
 * aggregation tree), platform usage against every documented limit, and its estimated cost
 * at the spec's expectedLatency beside its cost at 30, 50, 100 and 200 ms (or, with
 * `--probe`, at the p95 time to first byte a few requests measured — from each region of the
 * run through the named deployment's shards, else from here: plan-probe.ts) —
 * under the caps of the deployment's wrangler.toml, or of `--var MAX_RATE_PER_S=…` and the
 * other cap settings (CAP_SETTINGS), which stand for the secrets a deployment sets them with.
 * A run over those caps is planned without them and printed all the same, followed by each
 * cap it needs and the command that raises it. With a deployment named (`--url`/`--token` or
 * EDGELOAD_URL/EDGELOAD_TOKEN) it also asks that deployment (POST /v1/plan, which starts
 * nothing) whether its ALLOWED_TARGETS take the target, and (GET /v1/targets/:host/verification)
 * whether the target's owner has proved control where it asks that; without one nothing is
 * contacted. Exit 104 when the spec is invalid, the plan needs a cap raised or breaks a
 * platform limit, the cost is over `maxCost`, or the deployment would refuse the target (not
 * allowed, or no proof of ownership). A k6 script is
 * planned from its options (`-e NAME=VALUE` for its __ENV), counting one request per
 * iteration: what an iteration sends is the script's to decide at run time.
 */
import { join } from "node:path";
import { ArrivalSchedule } from "../core/schedule/arrival-schedule.ts";
import { planRun, type Limits, type Plan } from "../core/plan/plan.ts";
import { preflight, type Preflight } from "../core/plan/preflight.ts";
import { renderLatencyCosts, renderPreflight } from "../core/plan/preflight-text.ts";
import { costsAtLatencies, type LatencyCost } from "../core/plan/latency-costs.ts";
import { parseRunSpec } from "../core/spec/run-spec.ts";
import { redactSpec } from "../core/spec/redact.ts";
import type { Problem, RunSpec } from "../core/spec/types.ts";
import { parseCron, schedulePrice } from "../core/watch/cron.ts";
import { hostOfTarget } from "../core/spec/target-ownership.ts";
import { ApiProblem, type TargetVerification } from "./client.ts";
import { CliError, connect, EXIT, parseCliArgs, readJsonFile } from "./connection.ts";
import { exitCodeOfApiStatus } from "./exit-codes.ts";
import { PROJECT_ROOT } from "./paths.ts";
import { namedValues, withOverrides } from "./spec-overrides.ts";
import { withPublicEnv } from "./public-env.ts";
import { limitsFromConfig, readWranglerConfig } from "./wrangler-config.ts";
import { ownershipLine } from "./verify-command.ts";
import type { DeploymentProbe } from "../core/plan/latency-probe.ts";
import { plannedLatency, type PlannedLatency } from "./plan-probe.ts";
import { screenshotsOption, usageOptionsOf } from "./plan-usage-options.ts";

const USAGE =
  "usage: edgeload plan <spec.json | script.js [-e NAME=VALUE]...> [--max-cost USD] [--var NAME=VALUE]... [--config wrangler.toml] [--format table|json] [--probe] [--screenshots N] [--cron EXPR] [--url URL --token TOKEN]";

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
        "public-env": { type: "string", multiple: true },
        "modules-dir": { type: "string" },
        "allow-http-modules": { type: "boolean" },
        target: { type: "string" },
        cron: { type: "string" },
        probe: { type: "boolean" },
        screenshots: { type: "string" },
        url: { type: "string" },
        token: { type: "string" },
      },
    },
    USAGE,
  );
  if (!positionals[0]) throw new CliError(`a spec file is required\n${USAGE}`, EXIT.invalidConfig);
  if (values.format !== "table" && values.format !== "json") throw new CliError(`--format: table or json, not "${values.format}"`, EXIT.invalidConfig);
  const script = await import("./script-command.ts");
  const imports = { dir: values["modules-dir"] ?? null, allowHttp: values["allow-http-modules"] };
  const scripted = script.isScriptPath(positionals[0])
    ? await script.scriptRun(positionals[0], namedValues("env", values.env), values.target ?? null, { load: {} }, imports)
    : null;
  const input = scripted ? withPublicEnv(scripted.spec, values["public-env"]) : await readJsonFile(positionals[0], "run spec");
  if (script.isScriptPath(positionals[0]) && values.format === "table")
    console.log("note: a k6 script's iterations are counted as one request each; what one sends is the script's to decide at run time\n");
  const { settings, specVars } = splitVars(namedValues("var", values.var));
  const raw = withOverrides(input, specVars, namedValues("secret", values.secret), null);
  const spec = parseRunSpec(values["max-cost"] === undefined ? raw : { ...(raw as object), maxCost: maxCost(values["max-cost"]) });
  if (!spec.ok) throw new CliError(`invalid run spec:\n${spec.problems.map((p) => `  - ${p.field}: ${p.detail}`).join("\n")}`, EXIT.invalidConfig);
  const configPath = values.config ?? join(PROJECT_ROOT, "wrangler.toml");
  const config = readWranglerConfig(configPath);
  const limits = limitsFromConfig({ ...config, vars: { ...config.vars, ...settings } });
  // A script's browser scenarios are priced from its spec (script.browser), as the API prices them.
  const usageOptions = { ...usageOptionsOf(config, configPath), screenshots: screenshotsOption(values.screenshots) };
  const target = await deploymentTargetCheck(values, raw);
  // The latency the plan is sized for: the spec's, or the p95 a probe of the target measured.
  const latency = await latencyOf(values, spec.spec, raw, target);
  const total = new ArrivalSchedule(latency.spec.stages).total;
  const planned = planRun(latency.spec, total, limits);
  // Over a cap: plan without the caps, so the whole run can be seen, and say what to raise.
  const uncapped = planned.ok ? planned : planRun(latency.spec, total, UNCAPPED(limits));
  if (!uncapped.ok) {
    const problems = planned.ok ? uncapped.problems : planned.problems;
    throw new CliError(`the run exceeds the deployment's caps:\n${problems.map((p) => `  - ${p.field}: ${p.detail}`).join("\n")}`, EXIT.invalidConfig);
  }
  const plan = uncapped.plan;
  const caps = planned.ok ? [] : capsNeeded(latency.spec, plan, limits);
  const result = preflight(latency.spec, plan, usageOptions);
  const latencyCosts = costsAtLatencies(latency.spec, UNCAPPED(limits), usageOptions);
  const ownership = target ? await deploymentOwnershipCheck(values, spec.spec.target) : null;
  const schedule = values.cron === undefined ? null : schedulePriceOf(values.cron, result.cost.totalUsd);
  printPlan(values, {
    spec: latency.spec,
    plan,
    result,
    latency,
    latencyCosts,
    target,
    ownership,
    caps,
    capProblems: planned.ok ? [] : planned.problems,
    schedule,
    config,
    limits,
  });
  const failures = planFailures(caps, target, ownership, result);
  for (const f of failures) console.error(`edgeload: ${f}`);
  return failures.length ? EXIT.invalidConfig : EXIT.ok;
}

/** Why `plan` exits 104: caps to raise, a target the deployment refuses or has no proof for, the budget, the platform limits. */
function planFailures(caps: readonly CapRaise[], target: TargetCheck, ownership: TargetVerification | null, result: Preflight): string[] {
  const failures: string[] = [];
  if (caps.length) failures.push(`the run needs ${caps.length} of the deployment's caps raised: ${caps.map((c) => c.setting).join(", ")} (see above)`);
  if (target && !target.allowed) failures.push(`the deployment would refuse this run: ${target.detail ?? "target not allowed"}`);
  if (ownership?.required && ownership.state === "unverified") failures.push(notVerifiedFailure(ownership.host));
  if (result.overBudget) failures.push(`${result.overBudget.field}: ${result.overBudget.detail}`);
  const over = result.limits.filter((l) => !l.ok);
  if (over.length) failures.push(`the run breaks ${over.length} platform limit${over.length === 1 ? "" : "s"}: ${over.map((l) => l.limit).join(", ")}`);
  return failures;
}

/** What `plan` prints, as JSON or as text: the plan and its cost, the cost by latency, the deployment's answers, the caps. */
function printPlan(
  values: { readonly format?: string; readonly config?: string | undefined },
  p: {
    readonly spec: RunSpec;
    readonly plan: Plan;
    readonly result: Preflight;
    readonly latency: PlannedLatency;
    readonly latencyCosts: readonly LatencyCost[];
    readonly target: TargetCheck;
    readonly ownership: TargetVerification | null;
    readonly caps: readonly CapRaise[];
    readonly capProblems: readonly Problem[];
    readonly schedule: ReturnType<typeof schedulePriceOf> | null;
    readonly config: { readonly vars?: Readonly<Record<string, string>> };
    readonly limits: Limits;
  },
): void {
  const { caps, schedule } = p;
  if (values.format === "json") {
    const capsView = caps.length ? { caps: { problems: p.capProblems, raise: caps.map((c) => ({ ...c, command: raiseCommand(c, values.config) })) } } : {};
    const rest = { ...p.result, latency: p.latency.view, latencyCosts: p.latencyCosts, target: p.target, ownership: p.ownership };
    console.log(JSON.stringify({ spec: redactSpec(p.spec), plan: p.plan, ...rest, ...capsView, ...(schedule ? { schedule } : {}) }, null, 2));
    return;
  }
  const capsText = caps.length ? `\n\n${renderCaps(caps, p.config.vars ?? {}, values.config)}` : "";
  const scheduleText = schedule
    ? `\n\nscheduled ${schedule.cron} (UTC): ${schedule.turnsPer30Days} runs in 30 days, about $${schedule.usdPer30Days.toFixed(2)} a month ($${schedule.usdPerRun.toFixed(4)} a run)`
    : "";
  const latencyText = `${p.latency.probeText ? `${p.latency.probeText}\n` : ""}${renderLatencyCosts(p.latencyCosts, p.spec.expectedLatencyMs, p.latency.basis)}`;
  console.log(
    `${renderPreflight(p.spec, p.plan, p.result, p.limits.aggregatorFanIn)}\n\n${latencyText}\n\n${deploymentText(p.spec.target, p.target, p.ownership)}${capsText}${scheduleText}`,
  );
}

/**
 * The deployment settings `edgeload plan` reads (coordinator/http/policy.ts reads the same): a
 * `--var` of one of these names is that setting, as the deployment's secret would give it,
 * not a spec var.
 */
export const CAP_SETTINGS = [
  "MAX_RATE_PER_S",
  "MAX_DURATION_S",
  "MAX_SHARDS",
  "MAX_TOTAL_REQUESTS",
  "MAX_VUS",
  "SUBREQUESTS_PER_INVOCATION",
  "AGGREGATOR_FAN_IN",
] as const;

function splitVars(vars: Record<string, string>): { settings: Record<string, string>; specVars: Record<string, string> } {
  const settings: Record<string, string> = {};
  const specVars: Record<string, string> = {};
  for (const [name, value] of Object.entries(vars)) {
    if (!(CAP_SETTINGS as readonly string[]).includes(name)) specVars[name] = value;
    else if (Number(value) > 0) settings[name] = value;
    else throw new CliError(`--var ${name}: a deployment cap, a number above 0, not "${value}"`, EXIT.invalidConfig);
  }
  return { settings, specVars };
}

/** The limits with every cap a run can exceed lifted; the platform's own settings kept. */
const UNCAPPED = (limits: Limits): Limits => ({
  ...limits,
  maxRatePerS: Infinity,
  maxDurationMs: Infinity,
  maxShards: Infinity,
  maxTotalRequests: Infinity,
  maxVUs: Infinity,
});

/** A cap the run needs raised: what it needs, what the deployment allows. */
export interface CapRaise {
  readonly setting: "MAX_RATE_PER_S" | "MAX_DURATION_S" | "MAX_SHARDS" | "MAX_TOTAL_REQUESTS" | "MAX_VUS";
  readonly needed: number;
  readonly cap: number;
}

/**
 * The caps `plan` (planned without caps) needs above `limits`, counted as planRun counts
 * them: the peak rate of each open-model part, the peak VUs of each closed-model part, the
 * duration, the shards (an auto-sized run over MAX_SHARDS would be cut to it and saturate),
 * and the requests (iterations of an open model, the estimate of a closed one).
 */
export function capsNeeded(spec: RunSpec, plan: Plan, limits: Limits): CapRaise[] {
  const parts = spec.scenarios?.length ? spec.scenarios.map((s, i) => ({ spec: s.spec, plan: plan.scenarios![i]!.plan })) : [{ spec, plan }];
  const needs: CapRaise[] = [
    { setting: "MAX_RATE_PER_S", needed: Math.ceil(Math.max(0, ...parts.filter((p) => !p.spec.vus).map((p) => p.spec.peakRatePerS))), cap: limits.maxRatePerS },
    { setting: "MAX_VUS", needed: Math.max(0, ...parts.map((p) => p.plan.closedModel?.peakVUs ?? 0)), cap: limits.maxVUs },
    { setting: "MAX_DURATION_S", needed: Math.ceil(spec.durationMs / 1000), cap: limits.maxDurationMs / 1000 },
    { setting: "MAX_SHARDS", needed: plan.shards.length, cap: limits.maxShards },
    {
      setting: "MAX_TOTAL_REQUESTS",
      needed: parts.reduce((n, p) => n + (p.plan.closedModel?.estimatedRequests ?? p.plan.totalIterations), 0),
      cap: limits.maxTotalRequests,
    },
  ];
  return needs.filter((c) => c.needed > c.cap);
}

/** `echo 1000000 | npx wrangler secret put MAX_RATE_PER_S`: wrangler reads a piped secret from stdin. */
function raiseCommand(c: CapRaise, config: string | undefined): string {
  return `echo ${c.needed} | npx wrangler secret put ${c.setting}${config ? ` --config ${config}` : ""}`;
}

function renderCaps(caps: readonly CapRaise[], configVars: Readonly<Record<string, string>>, config: string | undefined): string {
  const n = (v: number) => v.toLocaleString("en-US");
  const inVars = caps.filter((c) => configVars[c.setting] !== undefined).map((c) => c.setting);
  return [
    "deployment caps: the plan above is planned without them; this deployment would refuse the run",
    ...caps.map((c) => `  ${c.setting.padEnd(18)} needs ${n(c.needed)}, the deployment allows ${n(c.cap)}`),
    "to raise them on the deployment:",
    ...(inVars.length ? [`  (first remove ${inVars.join(", ")} from [vars] in ${config ?? "wrangler.toml"}: a var and a secret cannot share a name)`] : []),
    ...caps.map((c) => `  ${raiseCommand(c, config)}`),
    `to plan under them here, add: ${caps.map((c) => `--var ${c.setting}=${c.needed}`).join(" ")}`,
  ].join("\n");
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

/** The latency the plan is sized for: the spec's, or with --probe the p95 measured (by the named deployment's regions, else from here). */
function latencyOf(values: { probe?: boolean; url?: string; token?: string }, spec: RunSpec, raw: unknown, target: TargetCheck): Promise<PlannedLatency> {
  const flags = { probe: values.probe === true, refused: target?.allowed === false, deployment: target !== null };
  return plannedLatency(spec, raw, flags, { deployment: () => deploymentProbe(values, raw) });
}

/** The named deployment's probe of the target from each region of the run (POST /v1/probe); null from one without the route. */
async function deploymentProbe(values: { url?: string | undefined; token?: string | undefined }, spec: unknown): Promise<DeploymentProbe | null> {
  const client = await connect(values);
  try {
    return await client.probeTarget(spec);
  } catch (error) {
    if (error instanceof ApiProblem && error.status === 404) return null;
    if (error instanceof ApiProblem)
      throw new CliError(`${client.baseUrl} could not probe the target: ${error.message}`, exitCodeOfApiStatus(error.status, error.body.type));
    throw new CliError(`${client.baseUrl} could not be reached to probe the target: ${(error as Error).message}`);
  }
}

/**
 * The named deployment's view of the target host's ownership proof (GET, which starts and
 * stores nothing), asked only when a deployment was asked about the target.
 */
async function deploymentOwnershipCheck(values: { url?: string | undefined; token?: string | undefined }, target: string): Promise<TargetVerification | null> {
  const client = await connect(values);
  const url = new URL(target);
  try {
    return await client.targetVerification("GET", hostOfTarget(url), url.origin);
  } catch (error) {
    // A deployment older than the route asks no proof: the plan says so rather than failing.
    if (error instanceof ApiProblem && error.status === 404) return null;
    if (error instanceof ApiProblem)
      throw new CliError(`${client.baseUrl} could not report the target's ownership: ${error.message}`, exitCodeOfApiStatus(error.status, error.body.type));
    throw new CliError(`${client.baseUrl} could not be reached to check the target's ownership: ${(error as Error).message}`);
  }
}

/** The deployment's answer on the target: allowed or not, then, when asked, its ownership. */
function deploymentText(target: string, check: TargetCheck, ownership: TargetVerification | null): string {
  if (!check) return targetLine(target, check);
  return `${targetLine(target, check)}\n${ownership ? ownershipLine(ownership) : "target ownership: not reported by this deployment (one older than `edgeload verify`)"}`;
}

const notVerifiedFailure = (host: string) =>
  `the deployment has no proof that ${host} is yours, so it would refuse the run: see above, or \`edgeload verify ${host}\``;

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

/** `--cron`: what the run costs a month as a schedule (core/watch/cron.ts, as POST /v1/schedules prices it). */
function schedulePriceOf(expression: string, usdPerRun: number) {
  const parsed = parseCron(expression, "--cron");
  if (!parsed.ok) throw new CliError(`--cron: ${parsed.problems.map((p) => p.detail).join("; ")}`, EXIT.invalidConfig);
  return { cron: parsed.cron.source, ...schedulePrice(parsed.cron, usdPerRun, Date.now()) };
}
