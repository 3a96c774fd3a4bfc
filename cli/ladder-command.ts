/**
 * `edgeload ladder`: a capacity ladder. Runs a load at rising rates one step after another
 * (each step a normal run through the API, with a cool-down between), stops climbing at
 * the first step that breaks, and prints the capacity table of the reference reports —
 * recommended, peak, hard limit and the knee — with the evidence of each (core/plan/capacity.ts
 * has the rules).
 *
 *   edgeload ladder --scenario userinfo --presets rps100,rps500,rps1000 [--seed NAME]
 *                   [--duration-scale 0.1] [--target URL --client-id … --client-secret …]
 *   edgeload ladder --scenario NAME --rates 50,100,200 --duration 30s [--seed NAME] …
 *   edgeload ladder --target http://127.0.0.1:9090/path --rates 50,100,200,400 --duration 5s
 *                   [--threshold "http_req_duration=p(95)<100"]... [--method …] [--header …]
 *   common: [--cool-down 10s] [--error-limit 1%] [--out capacity.json] [--shards N]
 *           [--regions wnam,enam] [--timeout 10s] [--max-vus N] [--quiet] [--url … --token …]
 *
 * Exit codes: 0 when the ladder completed (whether or not it found a limit), 104 for bad
 * input (also a step the API refuses), 105 when interrupted, 103 when a run ended in error.
 */
import { writeFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { breakReasons, deriveCapacity, ladderVerdict, renderCapacity, stepFromSummary, type CapacityRules, type LadderStep } from "../core/plan/capacity.ts";
import { parseDurationMs } from "../core/spec/duration.ts";
import { expandPreset, presetThresholds } from "../core/spec/presets.ts";
import type { RunView } from "../core/run/protocol.ts";
import { parseRunSpec } from "../core/spec/run-spec.ts";
import { formatMs } from "../core/metrics/clock-resolution.ts";
import { ApiProblem, type EdgeloadClient } from "./client.ts";
import { CliError, connect, EXIT } from "./connection.ts";
import { exitCodeOfApiStatus } from "./exit-codes.ts";
import { verdictExitCode } from "../core/run/verdict.ts";
import { parseCommand, type OptionValues } from "./option-table.ts";
import { LADDER_COMMAND } from "./tables/analysis-tables.ts";
import { quickSpec, QuickSpecError, scenarioRunSpec, type CommonRunOptions } from "./quick-spec.ts";

type Flags = OptionValues<typeof LADDER_COMMAND.options>;

/** One step to run: how it is named, its nominal rate and its run spec. */
export interface PlannedStep {
  readonly label: string;
  readonly ratePerS: number;
  readonly spec: Record<string, unknown>;
}

/**
 * Why the ladder ended before its last step, and the exit code that goes with it; null: a
 * step broke as a ladder means steps to, and the ladder's verdict decides (ladderVerdict).
 */
interface Stop {
  readonly reason: string;
  readonly exit: number | null;
}

export async function ladderCommand(args: string[]): Promise<number> {
  const { flags, steps, rules, coolDownMs } = await planLadder(args);
  const client = await connect(flags);
  // A built-in scenario's provider set up so that no step can pass is refused before any load,
  // as `edgeload run` refuses it (cli/preflight.ts): its steps would all break on the first.
  if (!flags["no-preflight"]) await (await import("./preflight.ts")).preflight(client, steps[0]!.spec);

  console.log(`ladder: ${steps.map((s) => s.label).join(" → ")}, cool-down ${formatMs(coolDownMs)}, error limit ${(rules.errorLimit * 100).toFixed(2)}%`);
  const { measured, stop } = await climb(client, steps, rules, coolDownMs, flags.quiet);
  const capacity = deriveCapacity(measured, rules);
  console.log(renderCapacity(capacity));
  if (stop) console.log(`  ${stop.reason}`);
  const verdict = ladderVerdict(capacity);
  if (verdict.kind === "inconclusive" && stop?.exit == null) console.log(`  INCONCLUSIVE (exit ${verdictExitCode(verdict)}): ${verdict.reasons.join("; ")}`);
  if (flags.out) {
    const doc = { planned: steps.map((s) => s.label), stopped: stop?.reason ?? null, verdict, ...capacity };
    await writeFile(flags.out, JSON.stringify(doc, null, 2) + "\n");
    console.log(`  capacity table written to ${flags.out}`);
  }
  return stop?.exit ?? verdictExitCode(verdict);
}

/** The ladder the arguments describe, every step's spec validated; CliError (104) otherwise. */
export async function planLadder(args: string[]): Promise<{ flags: Flags; steps: PlannedStep[]; rules: CapacityRules; coolDownMs: number }> {
  const flags: Flags = parseCommand(LADDER_COMMAND, args).values;
  const rules: CapacityRules = { errorLimit: parseErrorLimit(flags["error-limit"]) };
  const coolDownMs = parseDurationMs(flags["cool-down"]);
  if (coolDownMs === undefined) throw new CliError(`--cool-down: "${flags["cool-down"]}" is not a duration (e.g. 10s)`, EXIT.invalidConfig);
  return { flags, steps: await planSteps(flags), rules, coolDownMs };
}

/** Runs the steps in order until one breaks; Ctrl-C aborts the current run and stops. */
async function climb(
  client: EdgeloadClient,
  steps: readonly PlannedStep[],
  rules: CapacityRules,
  coolDownMs: number,
  quiet: boolean,
): Promise<{ measured: LadderStep[]; stop: Stop | null }> {
  const measured: LadderStep[] = [];
  const interrupt = new AbortController();
  let current: string | null = null;
  const onSigint = () => {
    if (interrupt.signal.aborted) process.exit(EXIT.aborted);
    interrupt.abort();
    console.log("\nstopping the ladder (Ctrl-C again to leave without waiting)…");
    if (current) void client.abort(current).catch((error: unknown) => console.error(`abort failed: ${String(error)}`));
  };
  process.on("SIGINT", onSigint);
  const interrupted: Stop = { reason: "interrupted", exit: EXIT.aborted };
  try {
    for (const [i, step] of steps.entries()) {
      const position = `step ${i + 1}/${steps.length}`;
      if (i > 0 && coolDownMs > 0) await sleep(coolDownMs, undefined, { signal: interrupt.signal }).catch(() => {});
      if (interrupt.signal.aborted) return { measured, stop: interrupted };
      let run;
      try {
        run = await client.createRun(step.spec);
      } catch (error) {
        if (!(error instanceof ApiProblem)) throw error;
        const exit = exitCodeOfApiStatus(error.status, error.body.type);
        return { measured, stop: { reason: `stopped: the API refused ${position} (${step.label}): ${error.message}`, exit } };
      }
      current = run.id;
      const regions = [...new Set(run.plan.shards.map((s) => s.region))];
      console.log(`${position}  ${step.label.padEnd(8)} run ${run.id}  ${run.plan.shards.length} shards in ${regions.join(", ")}`);
      const view = await client.follow(run.id, (v) => showProgress(position, v, quiet));
      if (process.stdout.isTTY && !quiet) process.stdout.write("\r\u001b[K");
      current = null;
      const result = stepFromSummary(step.label, step.ratePerS, await client.summary(run.id));
      measured.push(result);
      const breaks = breakReasons(result, rules);
      console.log(stepLine(position, result, view, breaks));
      if (interrupt.signal.aborted) return { measured, stop: interrupted };
      if (view.status === "error")
        return { measured, stop: { reason: `stopped: ${position} ended in error${view.abortReason ? `: ${view.abortReason}` : ""}`, exit: EXIT.runError } };
      // A step whose own result could not be established says nothing about the capacity.
      if (view.status === "inconclusive")
        return {
          measured,
          stop: {
            reason: `stopped: ${position} (${step.label}) was inconclusive: ${(view.verdict?.kind === "inconclusive" ? view.verdict.reasons : []).join("; ")}`,
            exit: EXIT.inconclusive,
          },
        };
      if (breaks.length)
        return { measured, stop: i < steps.length - 1 ? { reason: `stopped climbing at ${step.label}: ${breaks.join("; ")}`, exit: null } : null };
      if (view.status === "aborted")
        return {
          measured,
          stop: { reason: `stopped at ${step.label}, aborted: ${view.abortReason ?? "no reason given"}; the capacity is not established`, exit: EXIT.aborted },
        };
    }
    return { measured, stop: null };
  } finally {
    process.off("SIGINT", onSigint);
  }
}

function showProgress(position: string, v: RunView, quiet: boolean): void {
  if (quiet || !process.stdout.isTTY) return;
  const l = v.live;
  const p95 = l.p95Ms === null ? "-" : formatMs(l.p95Ms);
  process.stdout.write(
    `\r  ${position} ${v.status} ${v.progress.elapsedS.toFixed(1)}s/${v.progress.durationS.toFixed(0)}s  achieved ${l.achievedRatePerS.toFixed(0)}/s  failed ${l.failed}  dropped ${l.dropped}  p95 ${p95}\u001b[K`,
  );
}

/** The one line a finished step gets. */
function stepLine(position: string, s: LadderStep, view: RunView, breaks: readonly string[]): string {
  const ms = (v: number | null) => (v === null ? "-" : formatMs(v, s.clockResolutionMs));
  return [
    `${position}  ${s.label.padEnd(8)} ${view.status.padEnd(7)}`,
    `achieved ${s.achievedRatePerS.toFixed(1)}/s of ${s.targetRatePerS.toFixed(1)}/s`,
    `p95 ${ms(s.p95Ms)}  p99 ${ms(s.p99Ms)}`,
    `errors ${(s.errorRate * 100).toFixed(2)}%  dropped ${s.dropped}`,
    s.failedThresholds.length ? `✗ ${s.failedThresholds.join(", ")}` : "thresholds ✓",
    ...(breaks.length ? [`BREAKS: ${breaks.join("; ")}`] : []),
  ].join("  ");
}

/** "1%" or "0.01" → 0.01. */
function parseErrorLimit(raw: string): number {
  const percent = raw.endsWith("%");
  const n = Number(percent ? raw.slice(0, -1) : raw) / (percent ? 100 : 1);
  if (raw.trim() === "" || raw === "%" || !(n >= 0 && n <= 1))
    throw new CliError(`--error-limit: "${raw}" must be a share like 1% or 0.01`, EXIT.invalidConfig);
  return n;
}

/** Positive numbers in rising order, from "50,100,200". */
function parseRates(raw: string): number[] {
  const rates = raw.split(",").map((r) => Number(r.trim()));
  if (rates.some((r) => !(r > 0) || !Number.isFinite(r))) throw new CliError(`--rates: "${raw}" must be positive numbers, e.g. 50,100,200`, EXIT.invalidConfig);
  if (rates.some((r, i) => i > 0 && r <= rates[i - 1]!)) throw new CliError(`--rates: "${raw}" must rise from step to step`, EXIT.invalidConfig);
  return rates;
}

function positive(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!(n > 0) || !Number.isFinite(n)) throw new CliError(`--${flag}: "${raw}" is not a positive number`, EXIT.invalidConfig);
  return n;
}

/** The steps of the ladder from the flags, each spec validated before anything runs. */
async function planSteps(flags: Flags): Promise<PlannedStep[]> {
  if (flags.presets !== undefined && flags.rates !== undefined)
    throw new CliError("--presets and --rates are two kinds of ladder: give one", EXIT.invalidConfig);
  if (flags.presets === undefined && flags.rates === undefined) throw new CliError("--presets (with --scenario) or --rates are required", EXIT.invalidConfig);
  if (flags.rates !== undefined && !flags.duration) throw new CliError("--duration (of each step) is required with --rates", EXIT.invalidConfig);
  if (flags.presets !== undefined && flags.duration)
    throw new CliError("a preset sets each step's length: drop --duration (use --duration-scale to shorten it)", EXIT.invalidConfig);
  const common: CommonRunOptions = {
    shards: positive("shards", flags.shards),
    regions: flags.regions,
    timeout: flags.timeout,
    maxVUs: positive("max-vus", flags["max-vus"]),
    thresholds: flags.threshold,
  };
  let steps: PlannedStep[];
  try {
    steps = flags.scenario ? await scenarioSteps(flags, common) : targetSteps(flags, common);
  } catch (error) {
    if (error instanceof QuickSpecError) throw new CliError(error.message, EXIT.invalidConfig);
    throw error;
  }
  const problems = steps.flatMap((s) => {
    const checked = parseRunSpec(s.spec);
    return checked.ok ? [] : checked.problems.map((p) => `  - ${s.label}: ${p.field}: ${p.detail}`);
  });
  if (problems.length) throw new CliError(`invalid ladder:\n${problems.join("\n")}`, EXIT.invalidConfig);
  return steps;
}

/** `--target URL --rates …`: constant-arrival-rate steps of the quick spec form. */
function targetSteps(flags: Flags, common: CommonRunOptions): PlannedStep[] {
  if (!flags.target) throw new CliError("--target (or --scenario) is required", EXIT.invalidConfig);
  if (flags.presets !== undefined) throw new CliError("--presets need --scenario", EXIT.invalidConfig);
  return parseRates(flags.rates!).map((rate, i, all) => ({
    label: `${rate}/s`,
    ratePerS: rate,
    spec: quickSpec({
      ...common,
      target: flags.target!,
      rate,
      duration: flags.duration!,
      method: flags.method?.toUpperCase(),
      headers: flags.header,
      body: flags.body,
      name: `${flags.name ?? "ladder"} ${i + 1}/${all.length}: ${rate}/s`,
    }),
  }));
}

/**
 * `--scenario NAME` at presets (their thresholds come with them) or at rates (with the
 * scenario's preset thresholds unless --threshold is given). Against the local stack, the
 * target, the load-test client and the admin secret default from `.edgeload/dev.json`.
 */
async function scenarioSteps(flags: Flags, common: CommonRunOptions): Promise<PlannedStep[]> {
  const { SCENARIOS } = await import("../scenarios/catalog.ts");
  const definition = SCENARIOS[flags.scenario!];
  if (!definition) throw new CliError(`--scenario: unknown scenario "${flags.scenario}"; built in: ${Object.keys(SCENARIOS).join(", ")}`, EXIT.invalidConfig);
  const dev = flags.target ? null : await (await import("./dev-file.ts")).readDevFile();
  const target = flags.target ?? dev?.targetUrl;
  if (!target) throw new CliError("--target is required (or run `edgeload dev` to default to the local target)", EXIT.invalidConfig);
  const base = {
    ...common,
    scenario: definition.name,
    target,
    seed: flags.seed,
    scope: flags.scope,
    audience: flags.audience,
    clientId: flags["client-id"] ?? dev?.targetClient.clientId,
    clientSecret: flags["client-secret"] ?? dev?.targetClient.clientSecret,
    adminSecret: flags["admin-secret"] ?? dev?.targetAdminSecret,
    redirectUri: flags["redirect-uri"] ?? dev?.targetClient.redirectUri,
  };
  const name = (label: string, i: number, n: number) => `${flags.name ?? `${definition.name} ladder`} ${i + 1}/${n}: ${label}`;
  if (flags.presets !== undefined) {
    const durationScale = positive("duration-scale", flags["duration-scale"]);
    const presets = flags.presets.split(",").map((p) => p.trim());
    const rates = presets.map((preset) => {
      const expanded = expandPreset(definition.name, preset, durationScale);
      if (!expanded.ok) throw new CliError(`--presets: ${expanded.error}`, EXIT.invalidConfig);
      return expanded.value.ratePerS;
    });
    if (rates.some((r, i) => i > 0 && r <= rates[i - 1]!)) throw new CliError(`--presets: "${flags.presets}" must rise from step to step`, EXIT.invalidConfig);
    return presets.map((preset, i) => ({
      label: preset,
      ratePerS: rates[i]!,
      spec: scenarioRunSpec({ ...base, preset, durationScale, name: name(preset, i, presets.length) }, definition.needs),
    }));
  }
  if (flags["duration-scale"] !== undefined) throw new CliError("--duration-scale shortens presets: with --rates, set --duration", EXIT.invalidConfig);
  const thresholds = flags.threshold ?? Object.entries(presetThresholds(definition.name)).flatMap(([metric, list]) => list.map((t) => `${metric}=${t}`));
  return parseRates(flags.rates!).map((rate, i, all) => ({
    label: `${rate}/s`,
    ratePerS: rate,
    spec: scenarioRunSpec({ ...base, thresholds, rate, duration: flags.duration!, name: name(`${rate}/s`, i, all.length) }, definition.needs),
  }));
}
