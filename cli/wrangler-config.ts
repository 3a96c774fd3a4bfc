/**
 * What `edgeload deploy` checks in a wrangler.toml before anything is uploaded, and what
 * `edgeload plan` reads from it: the deployment's caps (its [vars]) and limits.
 *
 * The checks are pure over the parsed file, the classes the bundle exports and the files
 * that exist, so they are tested on fixtures; problems are errors (the deploy would fail
 * or the Worker would not work) or warnings (it deploys, but something needs doing).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parse } from "smol-toml";
import { DEFAULT_LIMITS, type Limits } from "../core/plan/plan.ts";
import { PLATFORM_LIMITS } from "../core/plan/platform-limits.ts";

export interface WranglerConfig {
  readonly name?: string;
  readonly main?: string;
  readonly compatibility_date?: string;
  readonly compatibility_flags?: readonly string[];
  readonly limits?: { readonly subrequests?: number; readonly cpu_ms?: number };
  readonly vars?: Readonly<Record<string, string>>;
  readonly durable_objects?: { readonly bindings?: ReadonlyArray<{ readonly name: string; readonly class_name: string; readonly script_name?: string }> };
  readonly migrations?: ReadonlyArray<{
    readonly tag: string;
    readonly new_sqlite_classes?: readonly string[];
    readonly new_classes?: readonly string[];
    readonly deleted_classes?: readonly string[];
  }>;
  readonly d1_databases?: ReadonlyArray<{
    readonly binding: string;
    readonly database_name: string;
    readonly database_id?: string;
    readonly migrations_dir?: string;
  }>;
  readonly r2_buckets?: ReadonlyArray<{ readonly binding: string; readonly bucket_name: string }>;
}

export interface ConfigProblem {
  readonly severity: "error" | "warning";
  readonly field: string;
  readonly detail: string;
}

/** An all-zero D1 id: a placeholder someone put in, which a deploy would try to bind. */
export const PLACEHOLDER_DATABASE_ID = /^0{8}-0{4}-0{4}-0{4}-0{12}$/;

/**
 * Settings that are secrets (`wrangler secret put NAME`), never [vars]: a var and a secret
 * cannot share a name, and these are the user's to choose without editing a tracked file.
 */
export const SECRET_SETTINGS = [
  "ALLOWED_TARGETS",
  "SEED_URL_KEY",
  "MAX_RATE_PER_S",
  "MAX_DURATION_S",
  "MAX_SHARDS",
  "MAX_TOTAL_REQUESTS",
  "MAX_VUS",
  "MAX_CONCURRENT_RUNS",
] as const;

export function readWranglerConfig(path: string): WranglerConfig {
  return parse(readFileSync(path, "utf8")) as WranglerConfig;
}

/** Secrets the coordinator needs, each with the command that sets it. */
export const REQUIRED_SECRETS: Readonly<Record<string, string>> = {
  EDGELOAD_API_TOKEN: "the bearer token every /v1 route requires",
  ALLOWED_TARGETS: "the targets runs may load, e.g. https://auth.example.com,*.example.net",
};

/**
 * Problems of a config whose bundle exports `exportedClasses`; `fileExists` answers for
 * paths relative to the config's folder.
 */
export function checkWranglerConfig(
  config: WranglerConfig,
  exportedClasses: readonly string[],
  fileExists: (relative: string) => boolean,
  migrationsIn: (relative: string) => readonly string[],
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const error = (field: string, detail: string) => problems.push({ severity: "error", field, detail });
  const warning = (field: string, detail: string) => problems.push({ severity: "warning", field, detail });
  if (!config.name) error("name", "the Worker needs a name");
  if (!config.main) error("main", "the Worker needs an entry module");
  else if (!fileExists(config.main)) error("main", `${config.main} does not exist`);
  if (!config.compatibility_date) error("compatibility_date", "set a compatibility date");

  const sqliteClasses = new Set<string>();
  const kvClasses = new Set<string>();
  const tags = new Set<string>();
  for (const [i, m] of (config.migrations ?? []).entries()) {
    if (tags.has(m.tag)) error(`migrations.${i}.tag`, `tag ${m.tag} is used twice`);
    tags.add(m.tag);
    for (const c of m.new_sqlite_classes ?? []) sqliteClasses.add(c);
    for (const c of m.new_classes ?? []) kvClasses.add(c);
    for (const c of m.deleted_classes ?? []) {
      sqliteClasses.delete(c);
      kvClasses.delete(c);
    }
  }
  for (const [i, b] of (config.durable_objects?.bindings ?? []).entries()) {
    const field = `durable_objects.bindings.${i}`;
    if (b.script_name) continue; // a class of another Worker: that Worker's config declares it
    if (!exportedClasses.includes(b.class_name)) error(field, `class ${b.class_name} (binding ${b.name}) is not exported by ${config.main}`);
    if (kvClasses.has(b.class_name))
      error(field, `class ${b.class_name} is created with new_classes (key-value storage); edgeload's objects use SQL storage: new_sqlite_classes`);
    else if (!sqliteClasses.has(b.class_name))
      error(field, `no migration creates class ${b.class_name}: add it to new_sqlite_classes in a [[migrations]] entry`);
  }
  for (const [i, d] of (config.d1_databases ?? []).entries()) {
    const field = `d1_databases.${i}`;
    if (d.database_id && PLACEHOLDER_DATABASE_ID.test(d.database_id)) {
      error(`${field}.database_id`, "a placeholder id: remove the line, and wrangler creates the database on the first deploy");
    }
    if (!d.migrations_dir)
      warning(
        `${field}.migrations_dir`,
        "no migrations_dir: `wrangler d1 migrations apply` will not find the results schema (the coordinator still applies it)",
      );
    else if (!fileExists(d.migrations_dir)) error(`${field}.migrations_dir`, `${d.migrations_dir} does not exist`);
    else if (migrationsIn(d.migrations_dir).length === 0) error(`${field}.migrations_dir`, `${d.migrations_dir} has no .sql migrations`);
  }
  for (const [i, r] of (config.r2_buckets ?? []).entries()) {
    if (!/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/.test(r.bucket_name)) error(`r2_buckets.${i}.bucket_name`, "3–63 lowercase letters, digits and -");
  }
  const subrequests = config.limits?.subrequests;
  if (subrequests !== undefined && Number(config.vars?.SUBREQUESTS_PER_INVOCATION ?? subrequests) > subrequests) {
    error(
      "vars.SUBREQUESTS_PER_INVOCATION",
      `shards would plan ${config.vars!.SUBREQUESTS_PER_INVOCATION} subrequests per invocation, above limits.subrequests (${subrequests})`,
    );
  }
  const cpuMs = config.limits?.cpu_ms;
  if (cpuMs !== undefined && cpuMs > PLATFORM_LIMITS.maxCpuMsPerInvocation)
    error("limits.cpu_ms", `at most ${PLATFORM_LIMITS.maxCpuMsPerInvocation} (5 minutes)`);
  for (const name of ["MAX_RATE_PER_S", "MAX_DURATION_S", "MAX_SHARDS", "MAX_TOTAL_REQUESTS", "MAX_VUS", "MAX_CONCURRENT_RUNS", "SUBREQUESTS_PER_INVOCATION"]) {
    const value = config.vars?.[name];
    if (value !== undefined && !(Number(value) > 0)) error(`vars.${name}`, `must be a positive number, got "${value}"`);
  }
  for (const name of SECRET_SETTINGS) {
    if (config.vars?.[name] !== undefined)
      warning(
        `vars.${name}`,
        `set it as a secret instead (\`npx wrangler secret put ${name}\`): as a var it takes a tracked file's edit to change, and no secret of that name can be set`,
      );
  }
  return problems;
}

/** The deployment's caps as the coordinator reads them from its vars (coordinator/http/policy.ts). */
export function limitsFromConfig(config: WranglerConfig): Limits {
  const v = config.vars ?? {};
  const n = (name: string, fallback: number) => (v[name] !== undefined && Number(v[name]) > 0 ? Number(v[name]) : fallback);
  return {
    maxRatePerS: n("MAX_RATE_PER_S", DEFAULT_LIMITS.maxRatePerS),
    maxDurationMs: n("MAX_DURATION_S", DEFAULT_LIMITS.maxDurationMs / 1000) * 1000,
    maxShards: n("MAX_SHARDS", DEFAULT_LIMITS.maxShards),
    maxTotalRequests: n("MAX_TOTAL_REQUESTS", DEFAULT_LIMITS.maxTotalRequests),
    maxVUs: n("MAX_VUS", DEFAULT_LIMITS.maxVUs),
    subrequestsPerInvocation: n("SUBREQUESTS_PER_INVOCATION", DEFAULT_LIMITS.subrequestsPerInvocation),
    aggregatorFanIn: n("AGGREGATOR_FAN_IN", DEFAULT_LIMITS.aggregatorFanIn),
  };
}

/** Checks a config file on disk against the bundle wrangler built from it. */
export function checkConfigFile(configPath: string, bundle: string): ConfigProblem[] {
  const dir = dirname(configPath);
  const config = readWranglerConfig(configPath);
  return checkWranglerConfig(
    config,
    exportedNames(bundle),
    (relative) => existsSync(join(dir, relative)),
    (relative) => readdirSync(join(dir, relative)).filter((f) => f.endsWith(".sql")),
  );
}

/** Names a bundled ES module exports (`export { A, B as C }` statements). */
export function exportedNames(bundle: string): string[] {
  const names: string[] = [];
  for (const m of bundle.matchAll(/export\s*\{([^}]*)\}/g)) {
    for (const part of m[1]!.split(",")) {
      const name = part
        .trim()
        .split(/\s+as\s+/)
        .pop()
        ?.trim();
      if (name) names.push(name);
    }
  }
  for (const m of bundle.matchAll(/export\s+(?:class|function|const|let|var)\s+([A-Za-z_$][\w$]*)/g)) names.push(m[1]!);
  return names;
}
