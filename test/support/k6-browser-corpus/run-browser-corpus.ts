/**
 * Runs one browser-corpus script (test/fixtures/k6-browser-corpus/corpus.json) under real k6,
 * with its browser module driving Debian's Chromium, and under `edgeload run`, whose shard
 * drives the local Browser Run binding (the same Chromium, cli/local-chromium.ts). Each run has
 * a work folder of its own with the script at its source path, the manifest's substitutions
 * applied to that copy (the fixture stays byte-identical to its source). What each tool did is
 * Both get -e BASE_URL={origin}, which the scripts do not read but edgeload takes as the run's
 * target (its requests are checked against the deployment's allowed targets). What each tool did is
 * read from its --summary-export and exit code, as the protocol corpus reads it
 * (test/support/k6-corpus/outcome.ts).
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { PROJECT_ROOT } from "../../../cli/paths.ts";
import { type Outcome, outcomeOf, type SummaryExport } from "../k6-corpus/outcome.ts";
import { layOutScript, type CorpusScript } from "../k6-corpus/run-corpus.ts";

export const BROWSER_CORPUS_DIR = join(PROJECT_ROOT, "test/fixtures/k6-browser-corpus");
/** The jslib modules both tools read (laid out as --modules-dir takes them). */
const MODULES_DIR = join(BROWSER_CORPUS_DIR, "modules");

/**
 * A browser script is recorded as the protocol corpus records its scripts, without companions or
 * args. Its counts are compared exactly unless it says "timing" (a scenario of a duration).
 */
export type BrowserCorpusScript = Pick<CorpusScript, "name" | "file" | "repository" | "path" | "commit" | "licence" | "substitutions" | "features"> & {
  readonly counts?: "timing";
};

export interface BrowserCorpusManifest {
  readonly scripts: readonly BrowserCorpusScript[];
  /** grafana/k6's examples left out of the corpus, each with why. */
  readonly leftOut?: readonly { readonly path: string; readonly commit: string; readonly reason: string }[];
  readonly modules: readonly {
    readonly url: string;
    readonly file: string;
    readonly repository: string;
    readonly path: string;
    readonly commit: string;
    readonly licence: string;
  }[];
}

export type Tool = "k6" | "edgeload";

/**
 * A substitution's placeholders filled: `{origin}` is the look-alike site; `{jslib}` is the
 * jslib copies' file: URL for k6 (which imports only file: and https:), and the https URL
 * for edgeload, which reads them with --modules-dir. An unknown placeholder names itself.
 */
export function fillPlaceholders(to: string, origin: string, tool: Tool): string {
  const jslib = tool === "k6" ? pathToFileURL(join(MODULES_DIR, "jslib.k6.io")).href : "https://jslib.k6.io";
  const filled = to.replaceAll("{origin}", new URL(origin).origin).replaceAll("{jslib}", jslib);
  const unknown = /\{[a-z][a-z0-9-]*\}/.exec(filled);
  if (unknown) throw new Error(`unknown placeholder ${unknown[0]} in the substitution ${JSON.stringify(to)} (known: {origin} {jslib})`);
  return filled;
}

/** The script's work folder for one tool: returns the script's path in it. */
function layOut(script: BrowserCorpusScript, origin: string, tool: Tool): Promise<{ dir: string; entry: string }> {
  return layOutScript(BROWSER_CORPUS_DIR, script, "browser-corpus", tool, (to) => fillPlaceholders(to, origin, tool));
}

/** Runs a process to its end; a non-zero exit is a value, not an error. */
async function exec(file: string, args: readonly string[], cwd: string, env: Record<string, string>): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(file, [...args], {
      cwd,
      env: { ...process.env, ...env },
      maxBuffer: 64 << 20,
      timeout: RUN_TIMEOUT_MS,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== "number") return { code: -1, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}\n${String(error)}` };
    return { code: failed.code, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

/** A run is stopped after this long: the longest script (multiple-scenario) runs about 6 s under either tool. */
const RUN_TIMEOUT_MS = 90_000;

async function readSummary(path: string): Promise<SummaryExport | null> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as SummaryExport;
  } catch {
    return null;
  }
}

/** How k6's browser module finds and starts Debian's Chromium (k6 would otherwise look for Google Chrome). */
export const K6_BROWSER_ENV = {
  K6_BROWSER_EXECUTABLE_PATH: "/usr/bin/chromium",
  K6_BROWSER_ARGS: "no-sandbox,disable-gpu",
  K6_BROWSER_HEADLESS: "true",
  K6_NO_USAGE_REPORT: "true",
} as const;

export async function underK6(k6: string, script: BrowserCorpusScript, origin: string): Promise<Outcome> {
  const { dir, entry } = await layOut(script, origin, "k6");
  const out = join(dir, "summary-export.json");
  const started = Date.now();
  // --address: k6's REST API on a free port, as two k6 may run at once.
  const run = await exec(k6, ["run", "--quiet", "--address", "127.0.0.1:0", "--summary-export", out, "-e", `BASE_URL=${origin}`, entry], dir, K6_BROWSER_ENV);
  return outcomeOf(run.code, await readSummary(out), run.output, Date.now() - started);
}

export interface Api {
  readonly url: string;
  readonly token: string;
}

export async function underEdgeload(api: Api, script: BrowserCorpusScript, origin: string): Promise<Outcome> {
  const { dir, entry } = await layOut(script, origin, "edgeload");
  const out = join(dir, "summary-export.json");
  const started = Date.now();
  const run = await exec(
    process.execPath,
    [join(PROJECT_ROOT, "cli/edgeload.mjs"), "run", entry, "--quiet", "--summary-export", out, "--modules-dir", MODULES_DIR, "-e", `BASE_URL=${origin}`],
    dir,
    { EDGELOAD_URL: api.url, EDGELOAD_TOKEN: api.token },
  );
  return outcomeOf(run.code, await readSummary(out), run.output, Date.now() - started);
}
