/**
 * Runs one corpus script (test/fixtures/k6-corpus/corpus.json) under real k6 and under
 * `edgeload run`, each in a work folder of its own: the script laid out at its path in its
 * source repository with the files it imports or open()s beside it, the manifest's
 * substitutions applied to that copy (the fixture itself stays byte-identical to its source),
 * and the same -e BASE_URL and command-line overrides on both sides. What each tool did is
 * read from its --summary-export and exit code (outcome.ts).
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { PROJECT_ROOT } from "../../../cli/paths.ts";
import { type Outcome, outcomeOf, type SummaryExport } from "./outcome.ts";

export const CORPUS_DIR = join(PROJECT_ROOT, "test/fixtures/k6-corpus");

export interface Substitution {
  readonly from: string;
  readonly to: string;
}

export interface CorpusScript {
  readonly name: string;
  readonly file: string;
  readonly repository: string;
  readonly path: string;
  readonly commit: string;
  readonly licence: string;
  readonly companions: readonly { readonly file: string; readonly path: string }[];
  readonly substitutions: readonly Substitution[];
  readonly args: readonly string[];
  readonly features: readonly string[];
  /** "throughput" when the script has no think time: its counts are each tool's speed. */
  readonly counts?: "throughput";
}

export interface CorpusModule {
  readonly url: string;
  readonly file: string;
  readonly repository: string;
  readonly path: string;
  readonly commit: string;
  readonly licence: string;
}

export interface CorpusManifest {
  readonly scripts: readonly CorpusScript[];
  readonly modules: readonly CorpusModule[];
}

export async function readManifest(): Promise<CorpusManifest> {
  return JSON.parse(await readFile(join(CORPUS_DIR, "corpus.json"), "utf8")) as CorpusManifest;
}

export type Tool = "k6" | "edgeload";

/** The jslib modules both tools read (laid out as --modules-dir takes them). */
const MODULES_DIR = join(CORPUS_DIR, "modules");

/**
 * Where the placeholders of corpus.json's substitutions point: the real httpbin
 * (real-targets.ts) and the look-alike targets standing in for the rest (targets.ts).
 */
export interface TargetOrigins {
  /** http://127.0.0.1:port of httpbin.org's own program: `{httpbin}`, `{httpbin-host}`. */
  readonly httpbin: string;
  /** http://127.0.0.1:port of targets.ts: `{origin}`, `{host}`, `{ws}`, and -e BASE_URL. */
  readonly lookAlike: string;
}

/** A placeholder left after filling is a typo in corpus.json: `{word}`, unlike `{ duration: … }`. */
const PLACEHOLDER = /\{[a-z][a-z0-9-]*\}/;

/**
 * The placeholders in a substitution, filled for `origins` and for `tool`: k6 imports only
 * file: and https: URLs, so it reads the jslib copies by their path; edgeload keeps the https
 * URL and reads them with --modules-dir. An unknown placeholder is an error naming it.
 */
export function fill(to: string, origins: TargetOrigins, tool: Tool): string {
  const lookAlike = new URL(origins.lookAlike);
  const httpbin = new URL(origins.httpbin);
  const jslib = tool === "k6" ? pathToFileURL(join(MODULES_DIR, "jslib.k6.io")).href : "https://jslib.k6.io";
  const filled = to
    .replaceAll("{httpbin}", httpbin.origin)
    .replaceAll("{httpbin-host}", httpbin.host)
    .replaceAll("{origin}", lookAlike.origin)
    .replaceAll("{host}", lookAlike.host)
    .replaceAll("{ws}", `ws://${lookAlike.host}`)
    .replaceAll("{jslib}", jslib);
  const unknown = PLACEHOLDER.exec(filled);
  if (unknown)
    throw new Error(
      `unknown placeholder ${unknown[0]} in the substitution ${JSON.stringify(to)} (known: {httpbin} {httpbin-host} {origin} {host} {ws} {jslib})`,
    );
  return filled;
}

/** The script's command-line args, their placeholders filled (`-e BASE_URL={ws}` names a WebSocket base). */
const argsOf = (script: CorpusScript, origins: TargetOrigins, tool: Tool) => script.args.map((a) => fill(a, origins, tool));

/** The script's work folder for one tool: returns the script's path in it. */
function layOut(script: CorpusScript, origins: TargetOrigins, tool: Tool): Promise<{ dir: string; entry: string }> {
  return layOutScript(CORPUS_DIR, script, "corpus", tool, (to) => fill(to, origins, tool));
}

/**
 * A corpus script copied into a work folder of its own, at its repository path, with its
 * substitutions made (`fillTo` fills a substitution's placeholders) and its companions beside
 * it: the protocol and browser corpora lay out their scripts alike. A substitution that
 * matches nothing is an error: the script changed under it.
 */
export async function layOutScript(
  corpusDir: string,
  script: Pick<CorpusScript, "name" | "file" | "path" | "substitutions"> & { readonly companions?: CorpusScript["companions"] },
  corpus: string,
  tool: Tool,
  fillTo: (to: string) => string,
): Promise<{ dir: string; entry: string }> {
  const dir = await mkdtemp(join(tmpdir(), `edgeload-${corpus}-${script.name}-${tool}-`));
  let source = await readFile(join(corpusDir, script.file), "utf8");
  for (const s of script.substitutions) {
    if (!source.includes(s.from)) throw new Error(`${script.name}: substitution ${JSON.stringify(s.from)} matches nothing in ${script.file}`);
    source = source.replaceAll(s.from, fillTo(s.to));
  }
  const entry = join(dir, script.path);
  await mkdir(dirname(entry), { recursive: true });
  await writeFile(entry, source);
  for (const c of script.companions ?? []) {
    await mkdir(dirname(join(dir, c.path)), { recursive: true });
    await writeFile(join(dir, c.path), await readFile(join(corpusDir, c.file)));
  }
  return { dir, entry };
}

interface Exec {
  readonly code: number;
  readonly output: string;
}

/** Runs a process to its end; a non-zero exit is a value, not an error. */
async function exec(file: string, args: readonly string[], cwd: string, env: Record<string, string>, timeoutMs: number): Promise<Exec> {
  try {
    const { stdout, stderr } = await promisify(execFile)(file, [...args], { cwd, env: { ...process.env, ...env }, maxBuffer: 64 << 20, timeout: timeoutMs });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string; killed?: boolean };
    if (typeof failed.code !== "number") return { code: -1, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}\n${String(error)}` };
    return { code: failed.code, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

async function readSummary(path: string): Promise<SummaryExport | null> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as SummaryExport;
  } catch {
    return null;
  }
}

export interface Api {
  readonly url: string;
  readonly token: string;
}

/** A run is stopped after this long: the longest script runs about 10 s under either tool. */
const RUN_TIMEOUT_MS = 120_000;

export async function underK6(k6: string, script: CorpusScript, origins: TargetOrigins): Promise<Outcome> {
  const { dir, entry } = await layOut(script, origins, "k6");
  const out = join(dir, "summary-export.json");
  const started = Date.now();
  const run = await exec(
    k6,
    // --address: k6's REST API on a free port, as two k6 run at once.
    ["run", "--quiet", "--address", "127.0.0.1:0", "--summary-export", out, "-e", `BASE_URL=${origins.lookAlike}`, ...argsOf(script, origins, "k6"), entry],
    dir,
    { K6_NO_USAGE_REPORT: "true" },
    RUN_TIMEOUT_MS,
  );
  return outcomeOf(run.code, await readSummary(out), run.output, Date.now() - started);
}

export async function underEdgeload(api: Api, script: CorpusScript, origins: TargetOrigins): Promise<Outcome> {
  const { dir, entry } = await layOut(script, origins, "edgeload");
  const out = join(dir, "summary-export.json");
  const started = Date.now();
  const run = await exec(
    process.execPath,
    [
      join(PROJECT_ROOT, "cli/edgeload.mjs"),
      "run",
      entry,
      "--quiet",
      "--summary-export",
      out,
      "--modules-dir",
      MODULES_DIR,
      "-e",
      `BASE_URL=${origins.lookAlike}`,
      ...argsOf(script, origins, "edgeload"),
    ],
    dir,
    { EDGELOAD_URL: api.url, EDGELOAD_TOKEN: api.token },
    RUN_TIMEOUT_MS,
  );
  return outcomeOf(run.code, await readSummary(out), run.output, Date.now() - started);
}
