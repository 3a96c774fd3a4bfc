/**
 * `edgeload run script.js`: a k6 script, as written for k6, made into a run. The script is
 * bundled and rewritten for the shards (k6-compat/bundle.ts), its init context evaluated
 * here for its options (k6-compat/init-context.ts), its options mapped to a run spec
 * (k6-compat/options.ts); the bundle is uploaded under its SHA-256 and the spec names it.
 * Anything edgeload cannot run is refused here, before any load, with exit code 104.
 */
import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { bundleId, bundleRuntime, bundleScript } from "../k6-compat/bundle.ts";
import { evaluateInitContext, runHandleSummary, scriptModule } from "../k6-compat/init-context.ts";
import { handleSummaryData, writeSummaryOutputs } from "../k6-compat/handle-summary.ts";
import { specFromOptions } from "../k6-compat/options.ts";
import { lockFileOf, RemoteModules } from "../k6-compat/remote-modules.ts";
import { CliError, EXIT } from "./connection.ts";
import { applyK6Flags, type K6Flags } from "./k6-option-overrides.ts";
import { k6TestOptions } from "../k6-compat/test-options.ts";

/**
 * The run's target when only `-e BASE_URL=…` names it: that origin, a WebSocket base
 * (`ws://`, `wss://`, as many WebSocket scripts name theirs) as the same origin over http(s).
 * The target is what the allow-list is checked against, not where every request goes.
 */
export function targetOfBaseUrl(base: string | undefined): string | null {
  if (!base || !URL.canParse(base)) return null;
  const url = new URL(base);
  if (url.protocol === "http:" || url.protocol === "https:") return base;
  if (url.protocol !== "ws:" && url.protocol !== "wss:") return null;
  url.protocol = url.protocol === "ws:" ? "http:" : "https:";
  return url.href;
}

/** A k6 script, as k6 1.x takes them: JavaScript, or TypeScript (its types stripped when bundling). */
export const isScriptPath = (path: string) => /\.(js|mjs|cjs|ts|mts)$/.test(path);

export interface ScriptRun {
  readonly spec: Record<string, unknown>;
  /** The bundle to upload and its id (the SHA-256 of its JSON). */
  readonly modules: Readonly<Record<string, string>>;
  readonly id: string;
  /** Options accepted without effect, to say so. */
  readonly ignored: readonly string[];
  /** The script's handleSummary, run on the run's summary; null when it exports none. */
  readonly handleSummary: ((summary: Record<string, unknown>) => Promise<void>) | null;
}

/** Where a script's remote imports may come from: the CLI's --modules-dir and --allow-http-modules. */
export interface ModuleFlags {
  readonly dir?: string | null;
  readonly allowHttp?: boolean;
}

/**
 * The run of the script at `path`, with its __ENV, nominal target and k6's command-line
 * flags (k6-option-overrides.ts) merged into its options.
 */
export async function scriptRun(
  path: string,
  env: Readonly<Record<string, string>>,
  target: string | null,
  flags: K6Flags = { load: {} },
  imports: ModuleFlags = {},
): Promise<ScriptRun> {
  const refuse = (what: string, problems: readonly string[], code: number = EXIT.invalidConfig) =>
    new CliError(`${what}:\n${problems.map((p) => `  - ${p}`).join("\n")}`, code);
  // Checked before bundling, which would call a missing file an import it cannot resolve.
  if (!existsSync(path)) throw new CliError(`file not found: ${path}`, EXIT.invalidConfig);
  // https:// imports are fetched here, as k6 fetches them when a script starts, and their
  // hashes recorded beside the script (k6-compat/remote-modules.ts).
  const remote = new RemoteModules({
    cacheDir: join(process.cwd(), ".cache", "k6-modules"),
    modulesDir: imports.dir ?? null,
    allowHttp: imports.allowHttp ?? false,
    lockFile: lockFileOf(path),
  });
  const bundled = await bundleScript(path, remote);
  if (!bundled.ok) throw refuse(`${path} cannot run on edgeload`, bundled.problems);
  await remote.writeLock();
  const init = evaluateInitContext(bundled.factory, path, env);
  // An exception is the script's (k6: 107), anything else a script edgeload cannot run (104).
  if (!init.ok)
    throw refuse(
      `${path} failed in its init context`,
      init.problems,
      init.aborted ? EXIT.scriptAborted : init.exception ? EXIT.scriptException : EXIT.invalidConfig,
    );
  const nominal = target ?? targetOfBaseUrl(env.BASE_URL);
  if (!nominal)
    throw new CliError(
      "give the run's target with --target URL or -e BASE_URL=URL (the script's requests are checked against the deployment's allowed targets either way)",
      EXIT.invalidConfig,
    );
  const options = applyK6Flags(init.init.options, flags);
  if (!options.ok) throw refuse(`flags that cannot apply to ${path}`, options.problems);
  // The VUs' exec.test.options: the options with the flags merged, as k6 consolidates them.
  const script = scriptModule(bundled.factory, init.init.files, bundled.lines, k6TestOptions(options.value));
  const modules = { "main.js": await bundleRuntime(), "script.js": script };
  const id = bundleId(JSON.stringify(modules));
  const mapped = specFromOptions(options.value, {
    name: basename(path),
    target: nominal,
    bundle: id,
    env,
    metrics: init.init.metrics,
    timeTrends: init.init.timeTrends,
    exports: init.init.exports,
  });
  if (!mapped.ok) throw refuse(`${path}'s options cannot run on edgeload`, mapped.problems);
  const timeTrends = new Set(init.init.timeTrends);
  const handleSummary = init.init.exports.includes("handleSummary")
    ? async (summary: Record<string, unknown>) =>
        writeSummaryOutputs(await runHandleSummary(bundled.factory, path, env, handleSummaryData(summary, timeTrends)))
    : null;
  return { spec: mapped.spec, modules, id, ignored: mapped.ignored, handleSummary };
}
