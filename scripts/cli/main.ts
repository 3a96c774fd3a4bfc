/**
 * The `edgeload` command line.
 *
 *   edgeload dev   [--api-port 8787] [--target-port 9090]      start the local stack
 *   edgeload run   <spec.json> | --target URL --rate N --duration 30s [options]
 *                  | --scenario NAME --preset rpsN --seed NAME [options]
 *   edgeload run   --scenario userinfo|introspect|token-exchange|refresh|silent-auth|otp-login
                 --preset rps300 [--duration-scale 0.1] | --rate N --duration 30s
                 [--seed NAME] [--target URL] [--client-id ID --client-secret S] [--admin-secret S]
                 [--redirect-uri URI] [--scope "openid profile"] [--audience A] [--shards N] [--regions …]
  edgeload demo  [--summary-export file]                     local stack + a demo run
 *   edgeload runs | status <id> | summary <id> | abort <id>
 *
 * Exit codes follow k6: 0 ok, 99 thresholds failed, 104 invalid config, 105 aborted,
 * 103 run error, 1 anything else (e.g. no stack to talk to).
 */
import { writeFile } from "node:fs/promises";
import type { RunView } from "../../core/protocol.ts";
import type { Summary } from "../../core/summary.ts";
import { formatMs, renderScenarioTable, renderSummary } from "../../core/summary-text.ts";
import { ApiProblem, EdgeloadClient } from "./client.ts";
import { LOCAL_ADMIN_SECRET, namedValues, withOverrides } from "./spec-overrides.ts";
import { CliError, connect, CONNECTION_OPTIONS, EXIT, parseCliArgs, readJsonFile } from "./connection.ts";
import { parseRunSpec } from "../../core/run-spec.ts";
import type { LocalStack } from "./local-stack.ts";
import { checkDelivery, ledgerFor, type TargetLedger } from "./delivery-check.ts";
import { renderDelivery } from "../../core/delivery.ts";
import { DEMO_PRESET, DEMO_SCENARIOS, demoSpec, quickSpec, QuickSpecError, scenarioRunSpec } from "./quick-spec.ts";


const USAGE = `usage:
  edgeload dev   [--api-port 8787] [--target-port 9090]
  edgeload run   <script.js> [-e NAME=VALUE]... [--include-system-env-vars] [--target URL] [--summary-export file]   a k6 script, unmodified
  edgeload run   <spec.json> [--var NAME=VALUE]... [--secret NAME=VALUE]... [--summary-export file] [--max-cost USD]
                 [--out json=results.jsonl] [--out opentelemetry=URL] [--out experimental-prometheus-rw=URL]
                 [--url URL --token TOKEN] [--quiet]
  edgeload run   --target URL --rate N --duration 30s [--shards N] [--regions wnam,enam]
                 [--method GET] [--header "Name: value"]... [--body TEXT] [--timeout 10s]
                 [--max-vus N] [--threshold "http_req_duration=p(95)<300"]...
  edgeload run   --scenario userinfo|introspect|token-exchange|refresh|silent-auth|otp-login
                 --preset rps300 [--duration-scale 0.1] | --rate N --duration 30s
                 [--seed NAME] [--target URL] [--client-id ID --client-secret S] [--admin-secret S]
                 [--redirect-uri URI] [--scope "openid profile"] [--audience A] [--shards N] [--regions …]
  edgeload demo  [--summary-export file]
  edgeload seed access-tokens --count 3000 [--name tokens-3k] [--mix valid=60,valid_exchanged=5,…]
                 [--base-url URL --client-id ID --client-secret S --admin-secret S] [--concurrency 20]
                 [--users 100] [--out file.json] [--expires-in 24h]
  edgeload seed users|refresh-tokens|sessions|auth-codes --count N [--name NAME] [--users N]
                 [--base-url … --client-id … --client-secret … --admin-secret …] [--redirect-uri URI]
                 [--concurrency 20] [--out file.json] [--expires-in 24h]
                 (after a failure, the same command resumes from .edgeload/seeding/<name>.json)
  edgeload query <run> [--by region,step,status_class|shard,colo] [--every 1m|run]
                 [--metrics rps,requests,error_rate,p50,p95,p99,p99.9,…] [--trend duration|ttfb|corrected]
                 [--format table|json|csv]      (no stack running: reads .edgeload/state directly)
  edgeload query --sql "SELECT …" [--format …]  (read-only SQL on the results database)
  edgeload query <run> --series [NAME] [--format …]   (the target's series scraped by the run)
  edgeload compare <baseline-run|baseline-name> <run> [--format table|json]
  edgeload ladder --scenario NAME --presets rps100,rps500 | --target URL --rates 50,100 --duration 5s
  edgeload report <run> [--out reports/NAME] [--local]
  edgeload crosscheck <run> --k6 summary.json | --run-k6 [--seed NAME] [--client-secret S] [--admin-secret S]
                 [--k6-out FILE] [--format table|json]
  edgeload plan  <spec.json> [--max-cost USD] [--config wrangler.toml] [--format table|json]
                 (shards, platform limits and estimated cost before any load; nothing is contacted)
  edgeload deploy [--dry-run] [--with-target]   (wrangler deploy with bundle and config checks)
  edgeload cf-analytics <run> --account ID [--zone ID] [--scripts a,b] [--margin 60s]   (CF_API_TOKEN)
  edgeload dashboard [run-id]   (prints a link that opens the live dashboard: valid 10 minutes)
  edgeload seeds | runs | status <id> | summary <id> | abort <id>   [--url URL --token TOKEN]

The API is found from --url/--token, EDGELOAD_URL/EDGELOAD_TOKEN, or a running \`edgeload dev\`.`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "dev": return await devCommand(rest);
      case "run": return await runCommand(rest);
      case "demo": return await demoCommand(rest);
      case "runs": return await simpleCommand(rest, async (client) => print(await client.listRuns()));
      case "seeds": return await simpleCommand(rest, async (client) => print(await client.listSeeds()));
      case "seed": return await seedCommand(rest);
      case "query": return await (await import("./query-command.ts")).queryCommand(rest);
      case "compare": return await (await import("./compare-command.ts")).compareCommand(rest);
      case "ladder": return await (await import("./ladder-command.ts")).ladderCommand(rest);
      case "report": return await (await import("./report-command.ts")).reportCommand(rest);
      case "cf-analytics": return await (await import("./cf-analytics-command.ts")).cfAnalyticsCommand(rest);
      case "crosscheck": return await (await import("./crosscheck-command.ts")).crosscheckCommand(rest);
      case "plan": return await (await import("./plan-command.ts")).planCommand(rest);
      case "deploy": return await (await import("./deploy-command.ts")).deployCommand(rest);
      case "status": return await simpleCommand(rest, async (client, id) => print(await client.getRun(need(id))));
      case "summary": return await simpleCommand(rest, async (client, id) => console.log(renderSummary(await client.summary(need(id)))));
      case "abort": return await simpleCommand(rest, async (client, id) => print(await client.abort(need(id))));
      case "dashboard": return await simpleCommand(rest, async (client, id) => console.log((await client.dashboardLink(id)).url));
      case undefined:
      case "help":
      case "--help":
      case "-h":
        console.log(USAGE);
        return command === undefined ? EXIT.failure : EXIT.ok;
      default:
        throw new CliError(`unknown command "${command}"\n${USAGE}`);
    }
  } catch (error) {
    if (error instanceof CliError) {
      console.error(`edgeload: ${error.message}`);
      return error.code;
    }
    if (error instanceof ApiProblem) {
      console.error(`edgeload: ${error.message}`);
      return error.status === 400 || error.status === 403 ? EXIT.invalidConfig : EXIT.failure;
    }
    throw error;
  }
}

function need(id: string | undefined): string {
  if (!id) throw new CliError("a run id is required");
  return id;
}

function print(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

async function simpleCommand(args: string[], action: (client: EdgeloadClient, id?: string) => Promise<void>): Promise<number> {
  const { values, positionals } = parseCliArgs({ args, options: CONNECTION_OPTIONS, allowPositionals: true });
  await action(await connect(values), positionals[0]);
  return EXIT.ok;
}

async function devCommand(args: string[]): Promise<number> {
  const { values } = parseCliArgs({ args, options: { "api-port": { type: "string", default: "8787" }, "target-port": { type: "string", default: "9090" } } });
  // wrangler is loaded only by the commands that start a stack: it installs its own
  // signal handlers, which must not pre-empt `edgeload run`'s Ctrl-C (abort the run).
  const { startLocalStack } = await import("./local-stack.ts");
  const stack = await startLocalStack({ apiPort: Number(values["api-port"]), targetPort: Number(values["target-port"]), writeDevFile: true });
  console.log(`edgeload local stack is up (state in .edgeload/state)
  API      ${stack.apiUrl}
  target   ${stack.targetProxyUrl}   (knobs: /delay?ms=20&jitter=5&status=200&size=1024&fail=0.01)
           ${stack.targetUrl}   (the same target without wrangler's dev proxy: use it for high rates)
  token    ${stack.token}
  dashboard ${(await new EdgeloadClient(stack.apiUrl, stack.token).dashboardLink()).url}
           (open within 10 minutes; \`edgeload dashboard\` prints a fresh one)

  export EDGELOAD_URL=${stack.apiUrl} EDGELOAD_TOKEN=${stack.token}
  edgeload run --target ${stack.targetProxyUrl}/delay?ms=20 --rate 200 --duration 15s

Ctrl-C stops it.`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  console.log("\nstopping…");
  await stack.stop();
  return EXIT.ok;
}

const RUN_OPTIONS = {
  ...CONNECTION_OPTIONS,
  "summary-export": { type: "string" },
  out: { type: "string", multiple: true },
  quiet: { type: "boolean", default: false },
  target: { type: "string" },
  rate: { type: "string" },
  duration: { type: "string" },
  shards: { type: "string" },
  regions: { type: "string" },
  method: { type: "string" },
  header: { type: "string", multiple: true },
  body: { type: "string" },
  timeout: { type: "string" },
  "max-vus": { type: "string" },
  threshold: { type: "string", multiple: true },
  name: { type: "string" },
  scenario: { type: "string" },
  preset: { type: "string" },
  seed: { type: "string" },
  "duration-scale": { type: "string" },
  "client-id": { type: "string" },
  "client-secret": { type: "string" },
  "admin-secret": { type: "string" },
  "redirect-uri": { type: "string" },
  scope: { type: "string" },
  audience: { type: "string" },
  var: { type: "string", multiple: true },
  secret: { type: "string", multiple: true },
  "max-cost": { type: "string" },
  // k6's -e/--env: __ENV of a k6 script run.
  env: { type: "string", multiple: true, short: "e" },
  // k6 puts the whole environment in __ENV by default; edgeload only when asked, since
  // __ENV travels to the shards with the run (and a shell holds secrets).
  "include-system-env-vars": { type: "boolean", default: false },
} as const;

async function runCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs({ args, options: RUN_OPTIONS, allowPositionals: true }, USAGE);
  if (positionals[0] && (await import("./script-command.ts")).isScriptPath(positionals[0])) return runScript(positionals[0], values);
  const base = positionals[0] ? await readSpecFile(positionals[0]) : values.scenario ? await scenarioFromFlags(values) : quickFromFlags(values);
  const vars = namedValues("var", values.var);
  const secrets = namedValues("secret", values.secret);
  const needsDev = JSON.stringify(base).includes(LOCAL_ADMIN_SECRET) || Object.values(secrets).includes(LOCAL_ADMIN_SECRET);
  const overridden = withOverrides(base, vars, secrets, needsDev ? await (await import("./dev-file.ts")).readDevFile() : null);
  const { jsonFiles: jsonOut, pushOutputs } = (await import("./out-flags.ts")).parseOutFlags(values.out);
  const spec = values["max-cost"] === undefined ? overridden : { ...(overridden as object), maxCost: (await import("./plan-command.ts")).maxCost(values["max-cost"]) };
  if (pushOutputs.length) Object.assign(spec as object, { outputs: [...((spec as { outputs?: unknown[] }).outputs ?? []), ...pushOutputs] });
  // Validate before talking to anyone, as k6 does; the API validates again (authoritatively).
  const checked = parseRunSpec(spec);
  if (!checked.ok) {
    throw new CliError(`invalid run spec:\n${checked.problems.map((p) => `  - ${p.field}: ${p.detail}`).join("\n")}`, EXIT.invalidConfig);
  }
  const client = await connect(values);
  // Against the local stack's own target, reconcile what was sent with what it received.
  const dev = values.url ? null : await (await import("./dev-file.ts")).readDevFile();
  const ledger = dev ? ledgerFor(checked.spec.target, [dev.targetUrl, ...(dev.targetProxyUrl ? [dev.targetProxyUrl] : [])], dev.targetAdminSecret) : null;
  return submitAndFollow(client, spec, { summaryExport: values["summary-export"], quiet: values.quiet, ledger, jsonOut });
}

/** `edgeload run script.js [-e NAME=VALUE]…`: a k6 script (scripts/cli/script-command.ts). */
async function runScript(path: string, values: { env?: string[]; "include-system-env-vars"?: boolean; target?: string; url?: string; token?: string; quiet: boolean; "summary-export"?: string; out?: string[] }): Promise<number> {
  const system = values["include-system-env-vars"] ? Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined)) : {};
  const env = { ...system, ...namedValues("env", values.env) };
  const dev = values.url ? null : await (await import("./dev-file.ts")).readDevFile();
  const built = await (await import("./script-command.ts")).scriptRun(path, env, values.target ?? null);
  if (built.ignored.length && !values.quiet) console.log(`options accepted without effect on edgeload: ${built.ignored.join(", ")}`);
  const checked = parseRunSpec(built.spec);
  if (!checked.ok) throw new CliError(`invalid run spec from ${path}:\n${checked.problems.map((p) => `  - ${p.field}: ${p.detail}`).join("\n")}`, EXIT.invalidConfig);
  const client = await connect(values);
  await client.uploadScript(built.id, built.modules);
  const ledger = dev ? ledgerFor(checked.spec.target, [dev.targetUrl, ...(dev.targetProxyUrl ? [dev.targetProxyUrl] : [])], dev.targetAdminSecret) : null;
  const { jsonFiles: jsonOut } = (await import("./out-flags.ts")).parseOutFlags(values.out);
  return submitAndFollow(client, built.spec, { summaryExport: values["summary-export"], quiet: values.quiet, ledger, jsonOut, handleSummary: built.handleSummary });
}

function quickFromFlags(values: Record<string, unknown>): Record<string, unknown> {
  const v = values as Record<string, string | string[] | undefined>;
  if (!v.target || !v.rate || !v.duration) throw new CliError(`a spec file, or --target, --rate and --duration, are required\n${USAGE}`, EXIT.invalidConfig);
  const number = (name: string, raw: string | undefined) => {
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) throw new CliError(`--${name}: "${raw}" is not a number`, EXIT.invalidConfig);
    return n;
  };
  try {
    return quickSpec({
      target: v.target as string,
      rate: number("rate", v.rate as string)!,
      duration: v.duration as string,
      ...(v.method ? { method: (v.method as string).toUpperCase() } : {}),
      ...(v.header ? { headers: v.header as string[] } : {}),
      ...(v.body !== undefined ? { body: v.body as string } : {}),
      ...(v.shards ? { shards: number("shards", v.shards as string)! } : {}),
      ...(v.regions ? { regions: v.regions as string } : {}),
      ...(v.timeout ? { timeout: v.timeout as string } : {}),
      ...(v["max-vus"] ? { maxVUs: number("max-vus", v["max-vus"] as string)! } : {}),
      ...(v.threshold ? { thresholds: v.threshold as string[] } : {}),
      ...(v.name ? { name: v.name as string } : {}),
    });
  } catch (error) {
    if (error instanceof QuickSpecError) throw new CliError(error.message, EXIT.invalidConfig);
    throw error;
  }
}

/**
 * `--scenario NAME` with a preset or a rate. Against the local stack, the target, the
 * load-test client and the admin secret default from `.edgeload/dev.json`.
 */
async function scenarioFromFlags(values: Record<string, unknown>): Promise<Record<string, unknown>> {
  const v = values as Record<string, string | string[] | undefined>;
  const { SCENARIOS } = await import("../../scenarios/catalog.ts");
  const definition = SCENARIOS[v.scenario as string];
  if (!definition) throw new CliError(`--scenario: unknown scenario "${String(v.scenario)}"; built in: ${Object.keys(SCENARIOS).join(", ")}`, EXIT.invalidConfig);
  const dev = v.target ? null : await (await import("./dev-file.ts")).readDevFile();
  const target = (v.target as string | undefined) ?? dev?.targetUrl;
  if (!target) throw new CliError("--target is required (or run `edgeload dev` to default to the local target)", EXIT.invalidConfig);
  const number = (name: string) => {
    const raw = v[name] as string | undefined;
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new CliError(`--${name}: "${raw}" is not a positive number`, EXIT.invalidConfig);
    return n;
  };
  const str = (name: string) => v[name] as string | undefined;
  try {
    return scenarioRunSpec({
      scenario: definition.name,
      target,
      ...(str("seed") ? { seed: str("seed")! } : {}),
      ...(str("preset") ? { preset: str("preset")! } : {}),
      ...(number("duration-scale") !== undefined ? { durationScale: number("duration-scale")! } : {}),
      ...(number("rate") !== undefined ? { rate: number("rate")! } : {}),
      ...(str("duration") ? { duration: str("duration")! } : {}),
      ...((str("client-id") ?? dev?.targetClient.clientId) ? { clientId: (str("client-id") ?? dev?.targetClient.clientId)! } : {}),
      ...((str("client-secret") ?? dev?.targetClient.clientSecret) ? { clientSecret: (str("client-secret") ?? dev?.targetClient.clientSecret)! } : {}),
      ...((str("admin-secret") ?? dev?.targetAdminSecret) ? { adminSecret: (str("admin-secret") ?? dev?.targetAdminSecret)! } : {}),
      ...((str("redirect-uri") ?? dev?.targetClient.redirectUri) ? { redirectUri: (str("redirect-uri") ?? dev?.targetClient.redirectUri)! } : {}),
      ...(str("scope") ? { scope: str("scope")! } : {}),
      ...(str("audience") ? { audience: str("audience")! } : {}),
      ...(number("shards") !== undefined ? { shards: number("shards")! } : {}),
      ...(str("regions") ? { regions: str("regions")! } : {}),
      ...(str("timeout") ? { timeout: str("timeout")! } : {}),
      ...(number("max-vus") !== undefined ? { maxVUs: number("max-vus")! } : {}),
      ...(v.threshold ? { thresholds: v.threshold as string[] } : {}),
      ...(str("name") ? { name: str("name")! } : {}),
    }, definition.needs);
  } catch (error) {
    if (error instanceof QuickSpecError) throw new CliError(error.message, EXIT.invalidConfig);
    throw error;
  }
}

function readSpecFile(path: string): Promise<unknown> {
  return readJsonFile(path, "spec file");
}

export function progressLine(view: RunView): string {
  const l = view.live;
  const p = view.progress;
  return [
    view.status.padEnd(9),
    `${p.elapsedS.toFixed(1)}s/${p.durationS.toFixed(0)}s`,
    // A closed-model run's load is its VUs; its rate follows from the target's latency.
    // A run of named scenarios may have both.
    [l.targetRatePerS === null ? null : `target ${l.targetRatePerS.toFixed(l.targetRatePerS < 10 ? 1 : 0)}/s`, l.targetVUs === undefined ? null : `vus ${l.targetVUs}`].filter(Boolean).join(" · ") || "vus 0",
    `achieved ${l.achievedRatePerS.toFixed(0)}/s`,
    `reqs ${l.requests}`,
    `failed ${l.failed}`,
    `dropped ${l.dropped}`,
    `p95 ${l.p95Ms === null ? "-" : formatMs(l.p95Ms)}`,
    `shards done ${l.shardsDone}/${l.shards}`,
    ...(view.lastError ? [`⚠ retrying: ${view.lastError}`] : []),
  ].join("  ");
}

/** Submits a spec, shows live progress, prints the summary; returns the k6 exit code. */
export async function submitAndFollow(
  client: EdgeloadClient,
  spec: unknown,
  options: FollowOptions = {},
): Promise<number> {
  return (await followRun(client, spec, options)).exit;
}

interface FollowOptions {
  readonly summaryExport?: string | undefined;
  readonly quiet?: boolean | undefined;
  /** A target that counts what it receives: reconcile the run with it at the end. */
  readonly ledger?: TargetLedger | null;
  /** `--out json=FILE` targets: k6 JSON lines written once the run ends. */
  readonly jsonOut?: readonly string[];
  /** A k6 script's handleSummary: its outputs replace the printed summary, as under k6. */
  readonly handleSummary?: ((summary: Summary) => Promise<void>) | null;
}

/** Submits a run, shows its progress, prints its summary; the exit code k6 would give. */
async function followRun(
  client: EdgeloadClient,
  spec: unknown,
  options: FollowOptions = {},
): Promise<{ exit: number; summary: Summary }> {
  const run = await client.createRun(spec);
  const regions = [...new Set(run.plan.shards.map((s) => s.region))];
  const n = run.plan.shards.length;
  console.log(`run ${run.id}: ${n} shard${n === 1 ? "" : "s"} in ${regions.join(", ")}, starting ${run.startsAt}`);
  for (const note of run.plan.notes) console.log(`  note: ${note}`);
  // The link signs a browser in (10 minutes to open it); the token never goes in a URL.
  const dashboard = await client.dashboardLink(run.id).catch(() => null);
  if (dashboard) console.log(`  dashboard: ${dashboard.url}`);

  let interrupted = false;
  const onSigint = () => {
    if (interrupted) process.exit(EXIT.aborted);
    interrupted = true;
    console.log("\naborting the run (Ctrl-C again to leave without waiting)…");
    void client.abort(run.id).catch((error: unknown) => console.error(`abort failed: ${String(error)}`));
  };
  process.on("SIGINT", onSigint);
  const tty = process.stdout.isTTY === true;
  let lastPrinted = 0;
  let view: RunView;
  try {
    view = await client.waitForEnd(run.id, (v) => {
      if (options.quiet) return;
      if (tty) process.stdout.write(`\r${progressLine(v)}\u001b[K`);
      else if (Date.now() - lastPrinted >= 5000) {
        console.log(progressLine(v));
        lastPrinted = Date.now();
      }
    });
  } finally {
    process.off("SIGINT", onSigint);
  }
  if (tty && !options.quiet) process.stdout.write("\n");
  const summary: Summary = await client.summary(run.id);
  if (options.handleSummary) await options.handleSummary(summary);
  else console.log("\n" + renderSummary(summary) + "\n");
  if (options.ledger) {
    try {
      console.log(renderDelivery(await checkDelivery(client, run.id, options.ledger)) + "\n");
    } catch (error) {
      console.log(`  delivery: not reconciled (${(error as Error).message})\n`);
    }
  }
  if (options.summaryExport) {
    await writeFile(options.summaryExport, JSON.stringify(summary, null, 2) + "\n");
    console.log(`summary written to ${options.summaryExport}`);
  }
  for (const file of options.jsonOut ?? []) await (await import("./json-output.ts")).writeJsonOutput(client, summary, file);
  return { exit: exitCodeOf(view.status), summary };
}

function exitCodeOf(status: RunView["status"]): number {
  switch (status) {
    case "passed": return EXIT.ok;
    case "failed": return EXIT.thresholdsFailed;
    case "aborted": return EXIT.aborted;
    default: return EXIT.runError;
  }
}

async function seedCommand(args: string[]): Promise<number> {
  const [kind, ...rest] = args;
  type SeedKind = import("../../core/seed-set.ts").SeedKind;
  const { SEED_KINDS, SEED_NAME } = await import("../../core/seed-set.ts");
  if (!SEED_KINDS.includes(kind as SeedKind)) {
    throw new CliError(`unknown seed kind "${kind ?? ""}"; available: ${SEED_KINDS.join(", ")}\n${USAGE}`, EXIT.invalidConfig);
  }
  const v = parseCliArgs({
    args: rest,
    options: {
      ...CONNECTION_OPTIONS,
      "base-url": { type: "string" }, "client-id": { type: "string" }, "client-secret": { type: "string" }, "admin-secret": { type: "string" },
      count: { type: "string" }, mix: { type: "string" }, concurrency: { type: "string", default: "20" }, users: { type: "string" },
      "redirect-uri": { type: "string" }, name: { type: "string" }, out: { type: "string" }, "expires-in": { type: "string", default: "24h" },
    },
  }, USAGE).values;
  const whole = (flag: string, raw: string | undefined, min: number): number | undefined => {
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new CliError(`--${flag}: a whole number of at least ${min} is required`, EXIT.invalidConfig);
    return n;
  };
  const count = whole("count", v.count ?? "", 1)!;
  const concurrency = whole("concurrency", v.concurrency, 1)!;
  const users = whole("users", v.users, 1);
  const { parseMix } = await import("../../seeds/token-mix.ts");
  if (v.mix !== undefined && kind !== "access-tokens") throw new CliError("--mix is for access-tokens only", EXIT.invalidConfig);
  const mix = v.mix ? parseMix(v.mix) : null;
  if (mix && !mix.ok) throw new CliError(mix.error, EXIT.invalidConfig);
  const name = v.name ?? `${kind}-${count}`;
  if (!SEED_NAME.test(name)) throw new CliError(`--name: "${name}" is not a seed name (1–64 of a-z 0-9 . _ -, starting with a letter or digit)`, EXIT.invalidConfig);
  // Against the local stack, its target, admin secret and load-test client are the defaults.
  const { DEV_FILE, readDevFile } = await import("./dev-file.ts");
  const { dirname, join } = await import("node:path");
  const dev = v["base-url"] ? null : await readDevFile();
  const baseUrl = v["base-url"] ?? dev?.targetUrl;
  const clientId = v["client-id"] ?? dev?.targetClient.clientId;
  const clientSecret = v["client-secret"] ?? dev?.targetClient.clientSecret;
  const adminSecret = v["admin-secret"] ?? dev?.targetAdminSecret;
  const redirectUri = v["redirect-uri"] ?? dev?.targetClient.redirectUri;
  const needsClient = kind !== "users" && kind !== "sessions";
  if (!baseUrl || !adminSecret || (needsClient && (!clientId || !clientSecret))) {
    const flags = needsClient ? "--base-url, --client-id, --client-secret and --admin-secret are" : "--base-url and --admin-secret are";
    throw new CliError(`${flags} required (or run \`edgeload dev\` for local defaults)`, EXIT.invalidConfig);
  }
  if (kind === "auth-codes" && !redirectUri) throw new CliError("--redirect-uri (registered for the client) is required for auth-codes", EXIT.invalidConfig);
  const client = await connect(v);
  const { SeedError } = await import("../../seeds/provider-api.ts");
  let lastPhase = "";
  const onProgress = (done: number, total: number, phase: string) => {
    if (process.stderr.isTTY) process.stderr.write(`\r  ${phase.padEnd(8)} ${done}/${total}\u001b[K`);
    else if (phase !== lastPhase) process.stderr.write(`  ${phase}…\n`);
    lastPhase = phase;
  };
  // Every kind but access tokens (signed locally; re-running it makes nothing twice) resumes
  // from a checkpoint after a failure.
  const run = {
    baseUrl: baseUrl!, adminSecret: adminSecret!, clientId: clientId!, clientSecret: clientSecret!, count, concurrency, testName: name, onProgress,
    ...(users === undefined ? {} : { users }),
    checkpoint: join(dirname(DEV_FILE), "seeding", `${name}.json`),
    onResume: (made: number, total: number, phase: string) => {
      console.log(`resuming: ${made} of ${total} already made${kind === "auth-codes" ? ` (${phase}; the codes themselves are always made afresh)` : ""}`);
    },
  };
  let doc;
  try {
    switch (kind as SeedKind) {
      case "access-tokens": doc = await (await import("../../seeds/access-tokens.ts")).seedAccessTokens({ ...run, ...(mix?.ok ? { mix: mix.mix } : {}) }); break;
      case "users": doc = await (await import("../../seeds/users.ts")).seedUsers(run); break;
      case "refresh-tokens": doc = await (await import("../../seeds/refresh-tokens.ts")).seedRefreshTokens(run); break;
      case "sessions": doc = await (await import("../../seeds/sessions.ts")).seedSessions(run); break;
      case "auth-codes": doc = await (await import("../../seeds/auth-codes.ts")).seedAuthCodes({ ...run, redirectUri: redirectUri! }); break;
    }
  } catch (error) {
    if (process.stderr.isTTY) process.stderr.write("\n");
    if (error instanceof SeedError) {
      const kept = kind !== "access-tokens" && (await import("node:fs")).existsSync(run.checkpoint);
      const resumable = kept ? `\nwhat was made is kept in ${run.checkpoint}: run the same command again to continue` : "";
      throw new CliError(error.message + resumable);
    }
    throw error;
  }
  if (process.stderr.isTTY) process.stderr.write("\n");
  if (v.out) await writeFile(v.out, JSON.stringify(doc, null, 2) + "\n", { mode: 0o600 });
  const stored = await client.uploadSeed(name, doc);
  const url = await client.seedUrl(name, { expiresIn: v["expires-in"] });
  if ("tokens" in doc) {
    const valid = await client.seedUrl(name, { expiresIn: v["expires-in"], format: "array", type: "valid" });
    const verification = doc.metadata.verification;
    console.log(`seed set ${name}: ${stored.total} tokens ${JSON.stringify(stored.counts)}, sha256 ${stored.sha256.slice(0, 16)}…`);
    console.log(`verification: ${verification.verified} correct, ${verification.incorrect} incorrect${verification.all_correct ? " (all correct)" : " — CHECK THE PROVIDER"}`);
    console.log(`TOKEN_URL (expires ${url.expiresAt}):\n  ${url.url}`);
    console.log(`valid tokens as a bare array (Authrim's userinfo cloud script):\n  ${valid.url}`);
    return verification.all_correct ? EXIT.ok : EXIT.failure;
  }
  console.log(`seed set ${name}: ${stored.total} ${kind}, sha256 ${stored.sha256.slice(0, 16)}…`);
  if ("codes" in doc) console.log(`note: ${doc.metadata.note}; the first expires at ${doc.metadata.expires_at}`);
  console.log(`signed URL (expires ${url.expiresAt}):\n  ${url.url}`);
  return EXIT.ok;
}

/**
 * The demo, end to end against the local Authrim-style target: seed an access-token set
 * (signed with the target's key, revoked ones revoked, verified by introspection), store it
 * in R2 and print its signed TOKEN_URL, then run the userinfo and introspect scenarios at
 * a shortened rps100 preset and print each summary and a per-scenario table.
 */
async function demoCommand(args: string[]): Promise<number> {
  const { values } = parseCliArgs({ args, options: { "summary-export": { type: "string" }, quiet: { type: "boolean", default: false } } });
  console.log("starting the local stack (coordinator, shards, D1, R2 and the Authrim-style target in workerd)…");
  const started = Date.now();
  let stack: LocalStack | undefined;
  try {
    const { startLocalStack } = await import("./local-stack.ts");
    stack = await startLocalStack({ writeDevFile: false });
    console.log(`  API ${stack.apiUrl}   target ${stack.targetUrl}   (up in ${((Date.now() - started) / 1000).toFixed(1)}s)`);
    const client = new EdgeloadClient(stack.apiUrl, stack.token);

    const seed = "demo-tokens";
    console.log(`\nseeding ${DEMO_TOKENS} access tokens against the target (Authrim's mix: valid, valid_exchanged, expired, revoked, wrong_audience, wrong_client)…`);
    const { seedAccessTokens } = await import("../../seeds/access-tokens.ts");
    const doc = await seedAccessTokens({ baseUrl: stack.targetUrl, adminSecret: stack.targetAdminSecret, ...stack.targetClient, count: DEMO_TOKENS, users: 50, testName: "edgeload demo" });
    const stored = await client.uploadSeed(seed, doc);
    const url = await client.seedUrl(seed, { expiresIn: "1h" });
    const v = doc.metadata.verification;
    console.log(`  seed set ${seed}: ${stored.total} tokens ${JSON.stringify(stored.counts)}`);
    console.log(`  verified by introspection: ${v.verified} correct, ${v.incorrect} incorrect`);
    console.log(`  TOKEN_URL (k6 can read it; expires ${url.expiresAt}):\n    ${url.url}`);

    const results: Array<{ scenario: string; exit: number; summary: Summary }> = [];
    for (const scenario of DEMO_SCENARIOS) {
      console.log(`\n── ${scenario}: preset ${DEMO_PRESET.preset} shortened ×${DEMO_PRESET.durationScale} ──`);
      const summaryExport = values["summary-export"]?.replace(/(\.json)?$/, `.${scenario}$1`);
      const ledger = { origin: stack.targetUrl, adminSecret: stack.targetAdminSecret };
      const result = await followRun(client, demoSpec(scenario, stack.targetUrl, seed, stack.targetClient), { summaryExport, quiet: values.quiet, ledger });
      results.push({ scenario, ...result });
    }
    console.log(renderScenarioTable(results.map((r) => r.summary)));
    return results.reduce((worst, r) => (r.exit !== EXIT.ok ? r.exit : worst), EXIT.ok as number);
  } finally {
    await stack?.stop();
  }
}

const DEMO_TOKENS = 600;