/**
 * Turns a k6 script, as written for k6, into what a shard runs: one per-VU factory.
 *
 * 1. esbuild bundles the script with its local imports. `k6/…` imports resolve to virtual
 *    modules that read the compat layer's per-VU objects (modules.ts); `https://` imports
 *    are fetched here, once (remote-modules.ts), and bundled like local ones; anything
 *    edgeload cannot run (gRPC, xk6, k6/browser calls not built: browser-refusals.ts) is
 *    refused here, before any load, naming the import or call and the file that makes it.
 * 2. The bundle's blocking calls are awaited (async-transform.ts): Workers cannot block.
 * 3. The result is wrapped as `(function (__k6modules, __ENV, __VU, __k6open, __k6seq) {…})`,
 *    called once per VU so that each VU has its own globals, as in k6.
 *
 * Workers forbid `eval` and `new Function`, so the factory does not run in the shard's own
 * isolate: the shard hands it to the Worker Loader binding, which starts it in a sandboxed
 * isolate of its own with no network access (runtime/entry.ts, workers/shard/script-flow.ts).
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Message, type Plugin } from "esbuild";
import { makeBlockingCallsAwaited } from "./async-transform.ts";
import { isBlockingMember, isBlockingName, isSupportedModule, missingExport, refusal, virtualModuleSource } from "./modules.ts";
import { unbuiltBrowserCalls } from "./browser-refusals.ts";
import { sourceLines } from "./source-lines.ts";
import type { ScriptLines } from "./runtime/script-failure.ts";
import type { RemoteModules } from "./remote-modules.ts";

export type Bundled = { ok: true; factory: string; lines: ScriptLines } | { ok: false; problems: string[] };

/**
 * Lines before the bundle's own in the module the isolate imports: the `files` line of
 * init-context.ts scriptModule and the two of wrapFactory. Errors' stacks name lines of
 * that module (runtime/script-failure.ts).
 */
export const LINES_BEFORE_CODE = 3;

const NAMESPACE = "k6-compat";
/**
 * `require("k6/http")` in a CommonJS module: the VU's module object itself, as k6's require
 * gives it, so that a jslib may replace its functions for every importer (the http-instrumentation
 * jslibs set `http.get = …`); esbuild's copy of an ES module for require has getters only.
 */
const REQUIRED = "k6-compat-require";
/** Modules imported by URL, loaded through RemoteModules. */
const REMOTE = "remote-module";
/** k6-compat/runtime/, where k6/html's parser (html.ts) is bundled from. */
const RUNTIME_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "runtime");
/** A script that may parse HTML: `res.html(…)` or an import of k6/html. */
const HTML_USE = /\.html\s*\(|["']k6\/html["']/;
/** The mark of k6/html's module in a bundle (a string esbuild keeps as it is). */
const HTML_INSTALLED = '__k6modules["k6/html"]';
/**
 * k6/html: cheerio's parser (runtime/html.ts) bundled with the script and installed in the
 * VU's modules, where res.html() finds it too (runtime/vu-modules/html.ts).
 */
const HTML_MODULE = [
  'import { parseHTML as parse } from "./html.ts";',
  `const m = ${HTML_INSTALLED};`,
  "m.install(parse);",
  "export const parseHTML = m.parseHTML;",
  "export default m;",
].join("\n");
/** The bundle's global name: the object of the script's exports. */
const EXPORTS = "__k6script";

/**
 * `remote`: where `https://` (and `http://`) imports are loaded from (remote-modules.ts);
 * without it they are refused, naming the URL.
 */
export async function bundleScript(scriptPath: string, remote: RemoteModules | null = null, withHtml = false): Promise<Bundled> {
  const notes: LoadNotes = { refused: [], usesHtml: false, usesBrowser: false, browserCalls: [] };
  const { refused } = notes;
  const entryDir = dirname(resolve(scriptPath));
  const plugin = k6ModulesPlugin(entryDir, remote, notes);
  let code: string;
  let map: { sources: string[]; mappings: string };
  try {
    const result = await build({
      entryPoints: [resolve(scriptPath)],
      bundle: true,
      write: false,
      // A map back to the script's files and lines, for errors' locations (source-lines.ts);
      // nothing is written, the output name only makes its sources relative to the script.
      outfile: resolve(entryDir, "bundle.js"),
      sourcemap: "external",
      sourcesContent: false,
      format: "iife",
      globalName: EXPORTS,
      platform: "neutral",
      target: "es2022",
      mainFields: ["module", "main"],
      keepNames: false,
      logLevel: "silent",
      plugins: [plugin],
      // res.html() of a script that does not import k6/html: its parser is added all the same.
      ...(withHtml ? { inject: ["k6/html"] } : {}),
    });
    code = result.outputFiles.find((f) => f.path.endsWith(".js"))!.text;
    map = JSON.parse(result.outputFiles.find((f) => f.path.endsWith(".map"))!.text) as typeof map;
  } catch (error) {
    // A refused import is the cause of what esbuild says next ("No matching export" for a
    // named import of it): name the import, not the symptom.
    if (refused.length) return { ok: false, problems: refused };
    const errors = (error as { errors?: Message[] }).errors;
    return { ok: false, problems: errors?.length ? errors.map(formatMessage) : [(error as Error).message] };
  }
  // k6/browser calls not built yet, in any of the script's files (a page object may be passed to a helper module).
  if (notes.usesBrowser) refused.push(...notes.browserCalls);
  if (refused.length) return { ok: false, problems: refused };
  // A script that calls .html( gets k6/html's parser (cheerio) with it; others do not carry it.
  if (notes.usesHtml && !withHtml && !code.includes(HTML_INSTALLED)) return bundleScript(scriptPath, remote, true);
  const rewritten = makeBlockingCallsAwaited(code, { isAsyncName: isBlockingName, isAsyncMember: isBlockingMember });
  if (!rewritten.ok) return { ok: false, problems: rewritten.problems.map((p) => `${relative(process.cwd(), scriptPath)} (bundled) ${p}`) };
  return { ok: true, factory: wrapFactory(rewritten.code), lines: sourceLines(map, LINES_BEFORE_CODE + 1) };
}

/** What esbuild's loads tell bundleScript: the imports refused, and whether the script may parse HTML. */
interface LoadNotes {
  readonly refused: string[];
  usesHtml: boolean;
  /** Whether the script imports k6/browser, and the calls of it not built yet (browser-refusals.ts) its files make. */
  usesBrowser: boolean;
  readonly browserCalls: string[];
}

/**
 * How the script's imports load: `k6/…` as the compat layer's virtual modules (refusing what
 * edgeload cannot run), URLs through `remote`, and local files with their own `open`.
 */
function k6ModulesPlugin(entryDir: string, remote: RemoteModules | null, notes: LoadNotes): Plugin {
  const { refused } = notes;
  return {
    name: "k6-modules",
    setup(b) {
      b.onResolve({ filter: /^k6(\/.*)?$/ }, (args) => {
        const reason = refusal(args.path);
        if (reason) refused.push(`${shownPath(args.importer)}: import of ${reason}`);
        if (args.path === "k6/browser") notes.usesBrowser = true;
        // Only k6/http so far: given the raw module, k6chaijs's require("k6") group() was not
        // awaited and each failed expect counted twice (test/e2e/script-callbacks.test.ts).
        if (args.kind === "require-call" && args.path === "k6/http") return { path: args.path, namespace: REQUIRED };
        return { path: args.path, namespace: NAMESPACE };
      });
      // The async rewrite reads `__k6modules["k6/http"]` as the module (async-transform-heap.ts read).
      b.onLoad({ filter: /.*/, namespace: REQUIRED }, (args) => ({ contents: `module.exports = __k6modules[${JSON.stringify(args.path)}];`, loader: "js" }));
      // A remote module, and what it imports relative to its own URL, as k6 resolves them.
      b.onResolve({ filter: /^https?:\/\// }, (args) => ({ path: args.path, namespace: REMOTE }));
      b.onResolve({ filter: /^\.\.?\//, namespace: REMOTE }, (args) => ({ path: new URL(args.path, args.importer).href, namespace: REMOTE }));
      b.onLoad({ filter: /.*/, namespace: REMOTE }, async (args) => {
        if (!remote) {
          refused.push(`${shownPath(args.path)}: import of remote module ${args.path}: modules are fetched by the CLI (edgeload run or plan)`);
          return { contents: "", loader: "js" };
        }
        const loaded = await remote.load(args.path);
        if (!loaded.ok) {
          refused.push(`import of remote module ${loaded.reason}`);
          return { contents: "", loader: "js" };
        }
        if (HTML_USE.test(loaded.contents)) notes.usesHtml = true;
        return { contents: loaded.contents, loader: "js" };
      });
      // k6 resolves open() against the calling module's directory: each module that calls
      // it gets its own `open`, which tells the runtime where it sits (hoisted, appended so
      // line numbers stay the script's).
      b.onLoad({ filter: /\.(m?js|cjs|m?ts)$/, namespace: "file" }, async (args) => {
        const contents = await readFile(args.path, "utf8");
        if (HTML_USE.test(contents)) notes.usesHtml = true;
        notes.browserCalls.push(...unbuiltBrowserCalls(contents, shownPath(args.path)));
        const loader = /ts$/.test(args.path) ? "ts" : "js";
        if (!/\bopen\s*\(/.test(contents) || /(function\s+open\s*\(|(const|let|var)\s+open\b)/.test(contents)) return { contents, loader };
        const dir = relative(entryDir, dirname(args.path)) || ".";
        return { contents: `${contents}\nfunction open(path, mode) { return __k6open(path, mode, ${JSON.stringify(dir)}); }\n`, loader };
      });
      b.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => {
        if (args.path === "k6/html") return { contents: HTML_MODULE, loader: "js", resolveDir: RUNTIME_DIR };
        return { contents: isSupportedModule(args.path) ? virtualModuleSource(args.path) : "export default {};", loader: "js" };
      });
    },
  };
}

/** A path as messages name it: relative to where the CLI runs. */
function shownPath(path: string): string {
  return relative(process.cwd(), path) || path;
}

/**
 * The per-VU factory: the bundle in a function of the compat layer's inputs. `__ITER` is
 * the VU's iteration number, set by the runtime before each iteration; `console` is the
 * VU's (runtime/script-console.ts), and so are the timer globals (runtime/timers.ts). Two
 * lines before the code: see LINES_BEFORE_CODE.
 */
function wrapFactory(code: string): string {
  return [
    "(function (__k6modules, __ENV, __VU, __k6open, __k6seq) {",
    // k6's timer globals are k6/timers' (the VU's event loop waits for them), not the isolate's.
    // `Math` is the VU's own, so that randomSeed seeds this VU's Math.random alone (runtime/vu-modules/vu-math.ts).
    'let __ITER = 0; const console = __k6modules.console, Math = __k6modules.Math; const { setTimeout, clearTimeout, setInterval, clearInterval } = __k6modules["k6/timers"];',
    code,
    `return { exports: ${EXPORTS}, setIteration(n) { __ITER = n; } };`,
    "})",
  ].join("\n");
}

function formatMessage(m: Message): string {
  const at = m.location ? `${m.location.file}:${m.location.line}:${m.location.column}: ` : "";
  // A named import a compat module lacks: esbuild names the virtual module; say what it is.
  const missing = /^No matching export in "k6-compat:(k6(?:\/[^"]*)?)" for import "([^"]+)"$/.exec(m.text);
  return `${at}${missing ? missingExport(missing[1]!, missing[2]!) : m.text}`;
}

/** The runtime that runs the factory in a shard's loaded isolate, bundled from runtime/entry.ts. */
export async function bundleRuntime(): Promise<string> {
  const entry = resolve(dirname(fileURLToPath(import.meta.url)), "runtime/entry.ts");
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    external: ["cloudflare:workers", "node:*", "./script.js"],
    keepNames: false,
    logLevel: "silent",
  });
  return result.outputFiles[0]!.text;
}

/** Content address of a bundle: the hex SHA-256 of exactly the bytes uploaded. */
export const bundleId = (body: string) => createHash("sha256").update(body).digest("hex");
