/**
 * `edgeload deploy [--dry-run] [--with-target]`: the path from this repository to a
 * Cloudflare account.
 *
 * --dry-run (no account, no network): `wrangler deploy --dry-run --outdir` builds the
 * coordinator Worker (and the Authrim-style target with --with-target), the bundle sizes
 * are set against the Workers limits, wrangler.toml is checked for consistency (every
 * Durable Object class exported and created as SQLite, D1 migrations present, caps that
 * parse) and what a deploy would create is printed.
 *
 * Without it: the same checks, then `wrangler deploy` itself — exactly what `npm run deploy`
 * and a plain `npx wrangler deploy` do, nothing more to remember: wrangler creates the D1
 * database and the R2 bucket on the first deploy (the config holds no ids), and the
 * coordinator applies its D1 migrations on first use (coordinator/store/schema.ts). Then the next
 * steps: the secrets (API token, allowed targets) and a first run.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { PLATFORM_LIMITS } from "../core/plan/platform-limits.ts";
import { CliError, EXIT, parseCliArgs } from "./connection.ts";
import { PROJECT_ROOT } from "./paths.ts";
import { checkConfigFile, readWranglerConfig, REQUIRED_SECRETS, type ConfigProblem, type WranglerConfig } from "./wrangler-config.ts";

const USAGE = "usage: edgeload deploy [--dry-run] [--with-target] [--config wrangler.toml]";
const WRANGLER_JS = join(PROJECT_ROOT, "node_modules", "wrangler", "bin", "wrangler.js");

export interface BundleReport {
  readonly worker: string;
  readonly configPath: string;
  readonly rawBytes: number;
  readonly gzipBytes: number;
  readonly problems: readonly ConfigProblem[];
  readonly config: WranglerConfig;
}

export async function deployCommand(args: string[]): Promise<number> {
  const { values } = parseCliArgs(
    { args, options: { "dry-run": { type: "boolean", default: false }, "with-target": { type: "boolean", default: false }, config: { type: "string" } } },
    USAGE,
  );
  const configs = [
    values.config ?? join(PROJECT_ROOT, "wrangler.toml"),
    ...(values["with-target"] ? [join(PROJECT_ROOT, "workers/target/wrangler.toml")] : []),
  ];
  const reports: BundleReport[] = [];
  for (const configPath of configs) reports.push(await dryRun(configPath));
  for (const report of reports) console.log(describeBundle(report));
  const errors = reports.flatMap((r) => r.problems.filter((p) => p.severity === "error"));
  if (errors.length) {
    console.error(`edgeload: ${errors.length} problem${errors.length === 1 ? "" : "s"} to fix before deploying`);
    return EXIT.invalidConfig;
  }
  if (values["dry-run"]) {
    console.log(
      "dry run: nothing was uploaded. `edgeload deploy` runs:\n" +
        reports
          .flatMap((r) => deployCommands(r.config, r.configPath))
          .map((c) => `  ${c.join(" ")}`)
          .join("\n"),
    );
    return EXIT.ok;
  }
  for (const report of reports) {
    for (const command of deployCommands(report.config, report.configPath)) {
      console.log(`$ ${command.join(" ")}`);
      const code = await runInherit(command);
      if (code !== 0) throw new CliError(`${command.join(" ")} exited ${code}`);
    }
  }
  console.log(nextSteps(reports[0]!.config));
  return EXIT.ok;
}

/** Builds one Worker with `wrangler deploy --dry-run` and checks it and its config. */
export async function dryRun(configPath: string): Promise<BundleReport> {
  const outdir = await mkdtemp(join(tmpdir(), "edgeload-deploy-"));
  try {
    try {
      await promisify(execFile)(process.execPath, [WRANGLER_JS, "deploy", "--dry-run", "--outdir", outdir, "--config", configPath], {
        cwd: PROJECT_ROOT,
        env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" },
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (error) {
      const e = error as { stderr?: string; stdout?: string };
      throw new CliError(`wrangler could not build ${relative(PROJECT_ROOT, configPath)}:\n${e.stderr || e.stdout || String(error)}`, EXIT.invalidConfig);
    }
    const files = (await readdir(outdir, { recursive: true })).map((f) => join(outdir, f));
    let rawBytes = 0;
    let gzipBytes = 0;
    let bundle = "";
    for (const file of files) {
      if (!(await stat(file)).isFile() || file.endsWith(".map") || file.endsWith("README.md")) continue;
      const bytes = await readFile(file);
      rawBytes += bytes.length;
      gzipBytes += gzipSync(bytes).length;
      if (file.endsWith(".js")) bundle += bytes.toString("utf8");
    }
    const config = readWranglerConfig(configPath);
    const problems = [...checkConfigFile(configPath, bundle), ...sizeProblems(rawBytes)];
    return { worker: config.name ?? "(unnamed)", configPath, rawBytes, gzipBytes, problems, config };
  } finally {
    await rm(outdir, { recursive: true, force: true });
  }
}

/** Bundle size against the Workers limit: 64 MiB uncompressed on every plan, none compressed (core/plan/platform-limits.ts). */
export function sizeProblems(rawBytes: number): ConfigProblem[] {
  const mb = (n: number) => `${(n / 2 ** 20).toFixed(2)} MiB`;
  if (rawBytes <= PLATFORM_LIMITS.workerSizeBytes) return [];
  return [{ severity: "error", field: "bundle", detail: `${mb(rawBytes)} uncompressed, over the ${mb(PLATFORM_LIMITS.workerSizeBytes)} Workers limit` }];
}

/**
 * The commands a real deploy of one config runs: `wrangler deploy` alone. Resources are
 * provisioned by wrangler and the D1 schema by the coordinator, so there is no second step
 * that a user deploying with plain wrangler could forget.
 */
export function deployCommands(_config: WranglerConfig, configPath: string): string[][] {
  return [["npx", "wrangler", "deploy", "--config", relative(PROJECT_ROOT, configPath) || configPath]];
}

/** What `wrangler deploy` would create for this config, its size and its problems. */
export function describeBundle(r: BundleReport): string {
  const c = r.config;
  const kb = (n: number) => `${Math.round(n / 1024)} KiB`;
  const lines = [
    `Worker ${r.worker} (${relative(PROJECT_ROOT, r.configPath)}): ${kb(r.rawBytes)}, ${kb(r.gzipBytes)} compressed (limit ${PLATFORM_LIMITS.workerSizeBytes / 2 ** 20} MiB uncompressed)`,
    ...(c.durable_objects?.bindings ?? []).map((b) => `  Durable Object ${b.class_name} as ${b.name} (SQLite storage)`),
    ...(c.d1_databases ?? []).map(
      (d) =>
        `  D1 ${d.database_name} as ${d.binding}${d.database_id ? "" : " (created by wrangler on the first deploy)"}${d.migrations_dir ? `, migrations from ${d.migrations_dir}` : ""}`,
    ),
    ...(c.r2_buckets ?? []).map((b) => `  R2 bucket ${b.bucket_name} as ${b.binding} (created by wrangler if missing)`),
    ...(c.limits
      ? [
          `  limits: ${Object.entries(c.limits)
            .map(([k, v]) => `${k} ${v}`)
            .join(", ")}`,
        ]
      : []),
    ...r.problems.map((p) => `  ${p.severity}: ${p.field}: ${p.detail}`),
  ];
  return lines.join("\n");
}

function nextSteps(config: WranglerConfig): string {
  const db = config.d1_databases?.[0]?.database_name ?? "edgeload-results";
  const bucket = config.r2_buckets?.[0]?.bucket_name ?? "edgeload-seeds";
  return `
deployed. Next (secrets apply at once, no redeploy):
${Object.entries(REQUIRED_SECRETS)
  .map(([name, what]) => `  npx wrangler secret put ${name.padEnd(20)} # ${what}`)
  .join("\n")}
  export EDGELOAD_URL=https://${config.name ?? "edgeload"}.<your-subdomain>.workers.dev EDGELOAD_TOKEN=<the token>
  npx edgeload plan spec.json                     # cost, limits and the allow-list before any load
  npx edgeload run --target https://<allowed host>/ --rate 10 --duration 10s
  teardown: npx wrangler delete; npx wrangler d1 delete ${db}; npx wrangler r2 bucket delete ${bucket}`;
}

/** Runs `npx wrangler …` as the project's own wrangler, under the Node running this CLI. */
function runInherit(command: string[]): Promise<number> {
  const [file, ...args] = command[0] === "npx" && command[1] === "wrangler" ? [process.execPath, WRANGLER_JS, ...command.slice(2)] : command;
  return new Promise((resolve, reject) => {
    const child = spawn(file!, args, { cwd: PROJECT_ROOT, stdio: "inherit" });
    child.on("error", reject);
    child.on("close", (code) => resolve(code ?? 1));
  });
}
