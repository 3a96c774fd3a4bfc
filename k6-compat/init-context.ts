/**
 * The script's init context, evaluated once in Node before anything is uploaded, as k6
 * evaluates it before a test: it yields the `options`, the custom metrics the script
 * creates, the functions it exports, and the files it `open()`s, which are bundled with it
 * (a shard has no disk). An exception here stops the run before any load, like k6's.
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import vm from "node:vm";
import { fileKey } from "./runtime/file-key.ts";
import { defineGlobal } from "./runtime/script-global.ts";
import { CookieJar } from "./runtime/cookie-jar.ts";
import { createVuModules, sequence, type MetricType, type VuContext } from "./runtime/vu-modules.ts";
import type { ScriptLines } from "./runtime/script-failure.ts";

export type EmbeddedFile = { readonly text: string } | { readonly base64: string };

export interface InitContext {
  readonly options: Record<string, unknown>;
  readonly metrics: Record<string, MetricType>;
  /** Trends created with isTime (k6 shows them as durations). */
  readonly timeTrends: string[];
  readonly exports: string[];
  readonly files: Record<string, EmbeddedFile>;
}

/**
 * `exception`: the script threw (k6's ScriptException, exit 107), rather than asked for what
 * cannot run; `aborted`: it called exec.test.abort() (k6's ScriptAborted, exit 108).
 */
export type InitResult = { ok: true; init: InitContext } | { ok: false; problems: string[]; exception?: true; aborted?: true };

/** exec.test.abort() called in the init context. */
class InitAborted extends Error {
  override readonly name = "InitAborted";
}

export function evaluateInitContext(factory: string, scriptPath: string, env: Readonly<Record<string, string>>): InitResult {
  const metrics: Record<string, MetricType> = {};
  const timeTrends: string[] = [];
  const problems: string[] = [];
  const files: Record<string, EmbeddedFile> = {};
  const open = (path: string, mode?: string, moduleDir = ".") => {
    const key = fileKey(moduleDir, String(path));
    const bytes = readFileSync(resolve(dirname(scriptPath), key));
    files[key] = mode === "b" ? { base64: bytes.toString("base64") } : { text: bytes.toString("utf8") };
    return mode === "b" ? bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) : bytes.toString("utf8");
  };
  const declare = (name: string, type: MetricType, isTime: boolean) => {
    // k6 takes isTime for a Trend or a Gauge: its values are times, shown with a unit.
    if (isTime && (type === "trend" || type === "gauge")) timeTrends.push(name);
    if (metrics[name] && metrics[name] !== type) problems.push(`metric ${name} is created as both a ${metrics[name]} and a ${type}`);
    metrics[name] = type;
  };
  try {
    const { exports } = nodeVu(factory, scriptPath, env, open, declare);
    if (problems.length) return { ok: false, problems };
    const options = exports.options === undefined ? {} : JSON.parse(JSON.stringify(exports.options));
    const functions = Object.keys(exports).filter((k) => typeof exports[k] === "function");
    return { ok: true, init: { options, metrics, timeTrends, exports: functions, files } };
  } catch (error) {
    if (error instanceof InitAborted) return { ok: false, aborted: true, problems: [`the script's init context called exec.test.abort(): ${error.message}`] };
    return { ok: false, exception: true, problems: [`the script's init context threw: ${error instanceof Error ? error.message : String(error)}`] };
  }
}

/**
 * Calls the script's handleSummary(data) in a VU of its own, in Node, after the run (it
 * may not send requests: the run is over). Returns what it returned.
 */
export async function runHandleSummary(factory: string, scriptPath: string, env: Readonly<Record<string, string>>, data: unknown): Promise<unknown> {
  const open = (path: string, _mode?: string, moduleDir = ".") => readFileSync(resolve(dirname(scriptPath), fileKey(moduleDir, String(path))), "utf8");
  const { exports, context } = nodeVu(factory, scriptPath, env, open);
  if (typeof exports.handleSummary !== "function") return undefined;
  // Data from this realm: the script's realm sees plain objects either way.
  return await (exports.handleSummary as (d: unknown) => unknown)(vm.runInContext(`(${JSON.stringify(data)})`, context));
}

/**
 * VU 0 of the script in a Node realm of its own, with no host (it cannot send): the script's
 * factory instantiated against the k6 modules, as the init context and handleSummary need it.
 */
function nodeVu(
  factory: string,
  scriptPath: string,
  env: Readonly<Record<string, string>>,
  open: (path: string, mode?: string, moduleDir?: string) => unknown,
  declare?: (name: string, type: MetricType, isTime: boolean) => void,
): { exports: Record<string, unknown>; context: vm.Context } {
  const context = vm.createContext({ console, URL, URLSearchParams, TextEncoder, TextDecoder, atob, btoa, structuredClone });
  defineGlobal(vm.runInContext("globalThis", context) as object);
  const instantiate = vm.runInContext(factory, context, { filename: scriptPath }) as (...args: unknown[]) => { exports: Record<string, unknown> };
  const vu: VuContext = {
    id: 0,
    iteration: 0,
    iterationInTest: 0,
    scenario: { name: "", executor: "", startTimeMs: 0 },
    samples: [],
    host: null,
    ...(declare ? { declare } : {}),
    jar: new CookieJar(),
    shared: new Map(),
  };
  const modules = createVuModules(vu);
  let exports: Record<string, unknown> = {};
  try {
    exports = instantiate(modules, { ...env }, 0, open, sequence).exports;
  } catch (error) {
    if (vu.aborted === undefined) throw error;
  }
  // An abort the script caught still aborts, as in k6 (vu.aborted is kept).
  if (vu.aborted !== undefined) throw new InitAborted(vu.aborted || "test aborted");
  return { exports, context };
}

/**
 * The module the shard's loaded isolate imports as `./script.js` (runtime/entry.ts): the
 * files, the factory from its second line on (bundle.ts LINES_BEFORE_CODE), the table
 * from its lines back to the script's, and exec.test.options (test-options.ts; null: the
 * VUs show an empty object).
 */
export function scriptModule(
  factory: string,
  files: Readonly<Record<string, EmbeddedFile>>,
  lines: ScriptLines,
  testOptions: Readonly<Record<string, unknown>> | null = null,
): string {
  return [
    `export const files = ${JSON.stringify(files)};`,
    `export const instantiate = ${factory};`,
    `export const lines = ${JSON.stringify(lines)};`,
    `export const testOptions = ${JSON.stringify(testOptions)};`,
    "",
  ].join("\n");
}
