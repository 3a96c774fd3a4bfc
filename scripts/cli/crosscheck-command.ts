/**
 * `edgeload crosscheck`: an edge run held against k6 measuring the same load.
 *
 *   edgeload crosscheck <run> --k6 summary.json    import a k6 summary (any format core/k6-summary.ts reads) and compare
 *   edgeload crosscheck <run> --run-k6             run local k6 with the run's target, load and seed right after the run ends, then compare
 *   edgeload crosscheck <run>                      the comparisons stored for the run
 *   edgeload crosscheck --abba spec.json           edgeload, k6, k6, edgeload: the tools apart from the target's drift
 *
 * With --run-k6 a custom-steps run replays through scripts/k6/http.js and a scenario run
 * through the scenario's own script, with the same arrival schedule (the run's stages, so a
 * shortened preset stays shortened), in-flight cap and timeout, and for scenarios the same
 * seed set through a signed TOKEN_URL. Secrets are redacted from stored specs: client and
 * admin secrets come from flags, or from `edgeload dev` when the run hit the local target.
 * Exit code 0 when every row agrees, 99 when one does not (as `edgeload compare`).
 */
import { spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderCrosscheck } from "../../core/crosscheck.ts";
import { SCENARIOS } from "../../scenarios/catalog.ts";
import type { K6ImportView } from "../../core/k6-summary.ts";
import type { EdgeloadClient } from "./client.ts";
import { CliError, connect, EXIT, readJsonFile } from "./connection.ts";
import { parseCommand } from "./option-table.ts";
import { CROSSCHECK_COMMAND } from "./tables/analysis-tables.ts";
import { PROJECT_ROOT } from "./paths.ts";

export async function crosscheckCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(CROSSCHECK_COMMAND, args);
  const runId = positionals[0];
  if (!runId) throw new CliError("a run id is required (edgeload crosscheck --help)", EXIT.invalidConfig);
  if (values.format !== "table" && values.format !== "json") throw new CliError(`--format: "${values.format}" must be table or json`, EXIT.invalidConfig);
  if (values.k6 && values["run-k6"]) throw new CliError("give either --k6 FILE or --run-k6, not both", EXIT.invalidConfig);
  const client = await connect(values);

  if (values.abba) {
    if (values.k6 || values["run-k6"]) throw new CliError("--abba runs its own edgeload and k6 runs: give it a spec file, without --k6 or --run-k6", EXIT.invalidConfig);
    const dev = await (await import("./dev-file.ts")).readDevFile();
    const v = values as unknown as Record<string, string | undefined>;
    return (await import("./crosscheck-abba-command.ts")).crosscheckAbba(client, runId, {
      ...(v.seed ? { tokenUrl: (await client.seedUrl(v.seed, { expiresIn: "1h" })).url } : {}),
      clientId: v["client-id"] ?? dev?.targetClient.clientId,
      clientSecret: v["client-secret"] ?? dev?.targetClient.clientSecret,
      adminSecret: v["admin-secret"] ?? dev?.targetAdminSecret,
      redirectUri: v["redirect-uri"] ?? dev?.targetClient.redirectUri,
    }, values.format as "table" | "json");
  }

  if (!values.k6 && !values["run-k6"]) {
    const { imports } = await client.crosschecks(runId);
    if (values.format === "json") console.log(JSON.stringify(imports, null, 2));
    else if (imports.length === 0) console.log(`no k6 summaries imported for run ${runId} (edgeload crosscheck ${runId} --k6 summary.json)`);
    else for (const i of imports) console.log(renderImport(i) + "\n");
    return imports.some((i) => i.comparison?.verdict === "disagree") ? EXIT.thresholdsFailed : EXIT.ok;
  }

  const summaryPath = values.k6 ?? (await runK6AfterRun(client, runId, values));
  const view = await client.crosscheck(runId, await readSummaryFile(summaryPath));
  console.log(values.format === "json" ? JSON.stringify(view, null, 2) : renderImport(view));
  return view.comparison?.verdict === "disagree" ? EXIT.thresholdsFailed : EXIT.ok;
}

function renderImport(view: K6ImportView): string {
  const head = `crosscheck of run ${view.runId} with k6 (${view.format}, import ${view.id}, ${view.importedAt})`;
  if (!view.comparison) return `${head}\n  cannot be compared: ${(view.problems ?? []).map((p) => `${p.field}: ${p.detail}`).join("; ")}`;
  return `${head}\n\n${renderCrosscheck(view.comparison)}`;
}

function readSummaryFile(path: string): Promise<unknown> {
  return readJsonFile(path, "k6 summary", "write it with --summary-export or handleSummary");
}

/** What the stored spec of a run holds that a k6 replay needs (core/run-spec.ts RunSpec, redacted). */
export interface StoredSpec {
  readonly target: string;
  readonly executor: string;
  readonly stages: ReadonlyArray<{ durationMs: number; fromPerS: number; toPerS: number }>;
  readonly durationMs: number;
  readonly maxInFlight: number;
  readonly timeoutMs: number;
  readonly scenario: { name: string; seed: string | null; options: Record<string, string | undefined> } | null;
  readonly steps: ReadonlyArray<{
    name: string; method: string; path: string; headers: Record<string, string>; body: string | null;
    expectedStatuses: readonly number[] | null; capture?: Record<string, unknown>; think?: unknown;
  }>;
  readonly flow?: string;
}

/** Credentials and seed for a replay; secrets never come from the stored spec (it has none). */
export interface ReplayInputs {
  readonly tokenUrl?: string;
  readonly clientId?: string | undefined;
  readonly clientSecret?: string | undefined;
  readonly adminSecret?: string | undefined;
  readonly redirectUri?: string | undefined;
}

export interface K6Invocation {
  /** The script, relative to the project root. */
  readonly script: string;
  /** `-e NAME=value` pairs that are no secret (shown in errors). */
  readonly vars: Readonly<Record<string, string>>;
  /** Environment of the k6 process: secrets travel here, not on the command line. */
  readonly env: Readonly<Record<string, string>>;
}

/** Environment variables of the k6 scripts that an operator's shell may have set: cleared so only the run decides. */
const CLEARED = ["PRESET", "DURATION_SCALE", "RATE", "DURATION", "STAGES", "START_RATE", "TOKEN_URL", "TOKEN_PATH", "K6_CLOUD_DISTRIBUTION"];

/** The env names of scenario options (scripts/k6/lib/oauth.js), and the flags that give them. */
const OPTION_ENV = { clientId: "CLIENT_ID", clientSecret: "CLIENT_SECRET", adminSecret: "ADMIN_SECRET", redirectUri: "REDIRECT_URI" } as const;
const OPTION_FLAG = { clientId: "--client-id", clientSecret: "--client-secret", adminSecret: "--admin-secret", redirectUri: "--redirect-uri" } as const;

/**
 * How k6 replays a run: which script, and the environment that gives it the run's target,
 * arrival schedule, in-flight cap and timeout (and for scenarios, the seed and client).
 * Refuses what a one-request-per-iteration k6 script cannot replay.
 *
 * @example k6Invocation(spec, {}) // custom step GET /delay?ms=20 at 300/s for 5 s
 *   // → { script: "scripts/k6/http.js", vars: { BASE_URL: "http://127.0.0.1:9090", PATH: "/delay?ms=20", RATE: "300", DURATION: "5000ms", … }, env: {} }
 */
export function k6Invocation(spec: StoredSpec, inputs: ReplayInputs): K6Invocation {
  if (spec.executor !== "constant-arrival-rate" && spec.executor !== "ramping-arrival-rate") {
    throw new CliError(`run's executor ${spec.executor}: --run-k6 replays arrival-rate runs (the open model both tools share)`, EXIT.invalidConfig);
  }
  const load: Record<string, string> = spec.executor === "constant-arrival-rate"
    ? { RATE: String(spec.stages[0]?.fromPerS ?? 0), DURATION: `${spec.durationMs}ms` }
    : { STAGES: JSON.stringify(spec.stages.map((s) => ({ target: s.toPerS, duration: `${s.durationMs}ms` }))), START_RATE: String(spec.stages[0]?.fromPerS ?? 0) };
  const common = { BASE_URL: spec.target, MAX_VUS: String(spec.maxInFlight), TIMEOUT: `${spec.timeoutMs}ms`, ...load };
  const cleared = Object.fromEntries(CLEARED.filter((k) => !(k in load)).map((k) => [k, ""]));

  if (!spec.scenario) {
    const step = spec.steps[0];
    if (spec.steps.length !== 1 || !step) throw new CliError(`the run has ${spec.steps.length} steps: --run-k6 replays a single-step run through scripts/k6/http.js`, EXIT.invalidConfig);
    if (spec.flow === "sequence" || Object.keys(step.capture ?? {}).length || step.think) {
      throw new CliError("the run's step captures values or thinks: --run-k6 replays plain one-request iterations", EXIT.invalidConfig);
    }
    const texts = [step.path, ...Object.values(step.headers), step.body ?? ""];
    if (texts.some((t) => t.includes("{{") || t === "[redacted]")) {
      throw new CliError("the run's step uses templates or secrets (redacted from the stored spec): k6 cannot replay it exactly", EXIT.invalidConfig);
    }
    return {
      script: "scripts/k6/http.js",
      vars: {
        ...common, PATH: step.path, METHOD: step.method, STEP: step.name,
        ...(Object.keys(step.headers).length ? { HEADERS: JSON.stringify(step.headers) } : {}),
        ...(step.body !== null ? { BODY: step.body } : {}),
        ...(step.expectedStatuses ? { EXPECT: step.expectedStatuses.join(",") } : {}),
      },
      env: cleared,
    };
  }

  const { name, options } = spec.scenario;
  const env: Record<string, string> = { ...cleared, ...(inputs.tokenUrl ? { TOKEN_URL: inputs.tokenUrl } : {}) };
  for (const [key, variable] of Object.entries(OPTION_ENV)) {
    const value = inputs[key as keyof typeof OPTION_ENV] ?? (key === "clientId" || key === "redirectUri" ? options[key] : undefined);
    if (value && value !== "[redacted]") env[variable] = value;
  }
  const missing = (SCENARIOS[name]?.needs ?? []).filter((need) => !env[OPTION_ENV[need]]).map((need) => OPTION_FLAG[need]);
  if (missing.length) {
    throw new CliError(`the ${name} scenario needs ${missing.join(" and ")} (secrets are redacted from a stored run; against the local target \`edgeload dev\` supplies them)`, EXIT.invalidConfig);
  }
  return {
    script: `scripts/k6/${name}.js`,
    vars: { ...common, ...(options.scope ? { SCOPE: options.scope } : {}), ...(options.audience ? { AUDIENCE: options.audience } : {}) },
    env,
  };
}

/**
 * Runs k6 with an invocation and returns the path of its handleSummary JSON. k6's own
 * output goes to this process's (with `quiet`, only its errors, kept for the message);
 * exit 99 (thresholds failed) is still a measurement.
 */
export async function runK6(k6: string, invocation: K6Invocation, summaryPath: string, options: { quiet?: boolean } = {}): Promise<string> {
  const vars = { ...invocation.vars, SUMMARY_PATH: summaryPath };
  const args = ["run", "--no-usage-report", ...(options.quiet ? ["--quiet"] : []), ...Object.entries(vars).flatMap(([k, v]) => ["-e", `${k}=${v}`]), join(PROJECT_ROOT, invocation.script)];
  let stderr = "";
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn(k6, args, { env: { ...process.env, ...invocation.env }, stdio: options.quiet ? ["ignore", "ignore", "pipe"] : "inherit" });
    child.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    child.on("error", reject);
    child.on("close", (c) => resolve(c ?? 1));
  });
  if (code !== 0 && code !== 99) throw new CliError(`k6 exited ${code} (${invocation.script})${stderr ? `:\n${stderr.trim()}` : ""}`, EXIT.runError);
  return summaryPath;
}

/** --run-k6: waits for the run to end, then replays it with local k6 against the same target. */
async function runK6AfterRun(client: EdgeloadClient, runId: string, values: Record<string, unknown>): Promise<string> {
  const v = values as Record<string, string | undefined>;
  const record = await client.runRecord(runId);
  if (!record) throw new CliError(`run ${runId} does not exist`);
  if (!["passed", "failed", "aborted", "error"].includes(record.status)) {
    console.log(`waiting for run ${runId} to end…`);
    await client.waitForEnd(runId, () => {}, 250);
  }
  const spec = record.spec as unknown as StoredSpec;
  let tokenUrl: string | undefined;
  if (spec.scenario?.seed || v.seed) {
    if (spec.scenario?.name === "refresh" && !v.seed) {
      throw new CliError(`the edge run rotated the refresh-token families of seed ${spec.scenario.seed}: give --seed with a fresh refresh-token set for k6`, EXIT.invalidConfig);
    }
    tokenUrl = (await client.seedUrl(v.seed ?? spec.scenario!.seed!, { expiresIn: "1h" })).url;
  }
  // Against the local target, `edgeload dev` knows the client and admin secrets.
  const dev = await (await import("./dev-file.ts")).readDevFile();
  const local = dev && spec.target === dev.targetUrl ? dev : null;
  const invocation = k6Invocation(spec, {
    ...(tokenUrl ? { tokenUrl } : {}),
    clientId: v["client-id"] ?? local?.targetClient.clientId,
    clientSecret: v["client-secret"] ?? local?.targetClient.clientSecret,
    adminSecret: v["admin-secret"] ?? local?.targetAdminSecret,
    redirectUri: v["redirect-uri"] ?? local?.targetClient.redirectUri,
  });
  const { findK6 } = await import("./k6-binary.ts");
  const out = v["k6-out"] ?? join(await mkdtemp(join(tmpdir(), "edgeload-k6-")), "summary.json");
  console.log(`running k6 (${invocation.script}) against ${spec.target}…`);
  await runK6(findK6(), invocation, out);
  console.log(`k6 summary written to ${out}`);
  return out;
}
