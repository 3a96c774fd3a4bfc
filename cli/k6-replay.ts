/**
 * How local k6 replays an edgeload run: the script and environment that give k6 the run's
 * target, arrival schedule, in-flight cap and timeout (and for a built-in scenario its seed
 * and client), and running it. `edgeload crosscheck --run-k6` and `--abba` both use it.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { SCENARIOS } from "../scenarios/catalog.ts";
import { CliError, EXIT } from "./connection.ts";
import { PROJECT_ROOT } from "./paths.ts";

/** What the stored spec of a run holds that a k6 replay needs (core/spec/run-spec.ts RunSpec, redacted). */
export interface StoredSpec {
  readonly target: string;
  readonly executor: string;
  readonly stages: ReadonlyArray<{ durationMs: number; fromPerS: number; toPerS: number }>;
  readonly durationMs: number;
  readonly maxInFlight: number;
  readonly timeoutMs: number;
  readonly scenario: { name: string; seed: string | null; options: Record<string, string | undefined> } | null;
  readonly steps: ReadonlyArray<{
    name: string;
    method: string;
    path: string;
    headers: Record<string, string>;
    body: string | null;
    expectedStatuses: readonly number[] | null;
    capture?: Record<string, unknown>;
    think?: unknown;
  }>;
  readonly flow?: string;
  /** A k6 script run's script (core/spec/types.ts RunSpec.script); null or absent otherwise. */
  readonly script?: unknown;
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

/** The env names of scenario options (k6-scripts/lib/oauth.js), and the flags that give them. */
const OPTION_ENV = { clientId: "CLIENT_ID", clientSecret: "CLIENT_SECRET", adminSecret: "ADMIN_SECRET", redirectUri: "REDIRECT_URI" } as const;
const OPTION_FLAG = { clientId: "--client-id", clientSecret: "--client-secret", adminSecret: "--admin-secret", redirectUri: "--redirect-uri" } as const;

/**
 * How k6 replays a run: which script, and the environment that gives it the run's target,
 * arrival schedule, in-flight cap and timeout (and for scenarios, the seed and client).
 * Refuses what a one-request-per-iteration k6 script cannot replay.
 *
 * @example k6Invocation(spec, {}) // custom step GET /delay?ms=20 at 300/s for 5 s
 *   // → { script: "k6-scripts/http.js", vars: { BASE_URL: "http://127.0.0.1:9090", PATH: "/delay?ms=20", RATE: "300", DURATION: "5000ms", … }, env: {} }
 */
export function k6Invocation(spec: StoredSpec, inputs: ReplayInputs): K6Invocation {
  if (spec.executor !== "constant-arrival-rate" && spec.executor !== "ramping-arrival-rate") {
    throw new CliError(`run's executor ${spec.executor}: --run-k6 replays arrival-rate runs (the open model both tools share)`, EXIT.invalidConfig);
  }
  const load: Record<string, string> =
    spec.executor === "constant-arrival-rate"
      ? { RATE: String(spec.stages[0]?.fromPerS ?? 0), DURATION: `${spec.durationMs}ms` }
      : {
          STAGES: JSON.stringify(spec.stages.map((s) => ({ target: s.toPerS, duration: `${s.durationMs}ms` }))),
          START_RATE: String(spec.stages[0]?.fromPerS ?? 0),
        };
  const common = { BASE_URL: spec.target, MAX_VUS: String(spec.maxInFlight), TIMEOUT: `${spec.timeoutMs}ms`, ...load };
  const cleared = Object.fromEntries(CLEARED.filter((k) => !(k in load)).map((k) => [k, ""]));

  if (!spec.scenario) {
    const step = spec.steps[0];
    if (spec.steps.length !== 1 || !step)
      throw new CliError(`the run has ${spec.steps.length} steps: --run-k6 replays a single-step run through k6-scripts/http.js`, EXIT.invalidConfig);
    if (spec.flow === "sequence" || Object.keys(step.capture ?? {}).length || step.think) {
      throw new CliError("the run's step captures values or thinks: --run-k6 replays plain one-request iterations", EXIT.invalidConfig);
    }
    // Redaction may hide a part only (a URL's `api_key=[redacted]`, its userinfo).
    const texts = [spec.target, step.path, ...Object.values(step.headers), step.body ?? ""];
    if (texts.some((t) => t.includes("{{") || t.includes("[redacted]"))) {
      throw new CliError("the run's step uses templates or secrets (redacted from the stored spec): k6 cannot replay it exactly", EXIT.invalidConfig);
    }
    return {
      script: "k6-scripts/http.js",
      vars: {
        ...common,
        PATH: step.path,
        METHOD: step.method,
        STEP: step.name,
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
    throw new CliError(
      `the ${name} scenario needs ${missing.join(" and ")} (secrets are redacted from a stored run; against the local target \`edgeload dev\` supplies them)`,
      EXIT.invalidConfig,
    );
  }
  return {
    script: `k6-scripts/${name}.js`,
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
  const args = [
    "run",
    "--no-usage-report",
    ...(options.quiet ? ["--quiet"] : []),
    ...Object.entries(vars).flatMap(([k, v]) => ["-e", `${k}=${v}`]),
    join(PROJECT_ROOT, invocation.script),
  ];
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
