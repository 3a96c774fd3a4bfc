/**
 * Where a k6 script threw, as a user reads it: the script's own file and line, found from a
 * real stack of the bundled, rewritten script (bundle.ts, source-lines.ts,
 * runtime/script-failure.ts), and what the VU's console and exec.test.abort() leave.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { bundleScript, LINES_BEFORE_CODE } from "./bundle.ts";
import { scriptModule } from "./init-context.ts";
import { scriptFailure, scriptLocation } from "./runtime/script-failure.ts";
import { createVuModules, sequence } from "./runtime/vu-modules.ts";
import type { IterationHost, WireResponse } from "./runtime/wire.ts";
import { sourceLines } from "./source-lines.ts";
import { noSockets } from "../test/support/no-sockets.ts";
import { vuContext } from "../test/support/vu-context.ts";

const dir = mkdtempSync(join(tmpdir(), "k6-failure-"));
function script(name: string, source: string): string {
  const path = join(dir, name);
  writeFileSync(path, source);
  return path;
}

const host: IterationHost = {
  send: async (): Promise<WireResponse> => ({ status: 200, error: null, headers: {}, setCookies: [], body: "", durationMs: 1 }),
  sleep: async () => {},
  ...noSockets,
};

/** A VU of the bundled script at `path`, evaluated as the isolate's `script.js` module would be. */
async function vuOf(path: string) {
  const bundled = await bundleScript(path);
  if (!bundled.ok) throw new Error(bundled.problems.join("\n"));
  const context = vuContext(host, { id: 3, scenario: { name: "default", executor: "constant-vus", startTimeMs: 0 } });
  // The factory starts on the module's second line (scriptModule), so its stack lines are the module's.
  const module = scriptModule(bundled.factory, {}, bundled.lines);
  expect(module.split("\n")[1]!.startsWith("export const instantiate = (function")).toBe(true);
  const factory = vm.runInNewContext(bundled.factory, { URL, JSON, Error, Promise }, { filename: "script.js", lineOffset: 1 });
  const instance = factory(createVuModules(context), {}, context.id, () => "", sequence) as { exports: Record<string, () => Promise<void>> };
  return { context, exports: instance.exports, lines: bundled.lines };
}

describe("where a script threw", () => {
  it("names the script's file and line, in the script and in a module it imports, after the async rewrite", async () => {
    script(
      "helpers.js",
      ["export function check(r) {", "  // the line below throws", '  if (r.status === 200) throw new Error("thrown in a helper");', "}"].join("\n"),
    );
    const path = script(
      "iteration.js",
      [
        'import http from "k6/http";',
        'import { check } from "./helpers.js";',
        'export const options = { vus: 1, duration: "1s" };',
        "export default function () {",
        '  const r = http.get("http://127.0.0.1:9/");',
        "  if (__ENV.HELPER) check(r);",
        "  const x = undefined;",
        '  if (r.status === 200) throw new TypeError("thrown in the script");',
        "}",
        "export function viaHelper() { check(http.get('http://127.0.0.1:9/')); }",
      ].join("\n"),
    );
    const { exports, lines } = await vuOf(path);
    const caught = async (fn: () => Promise<void>) => {
      try {
        await fn();
      } catch (error) {
        return scriptFailure(error, true, undefined, lines);
      }
      throw new Error("it did not throw");
    };
    expect(await caught(exports.default!)).toEqual({ error: "TypeError: thrown in the script", at: "iteration.js:8" });
    expect(await caught(exports.viaHelper!)).toEqual({ error: "Error: thrown in a helper", at: "helpers.js:3" });
  });

  it("reports exec.test.abort() as the run's abort, even when the script catches it", async () => {
    const path = script(
      "abort.js",
      [
        'import exec from "k6/execution";',
        "export default function () { exec.test.abort('why'); }",
        "export function caught() { try { exec.test.abort(); } catch (e) { console.log('caught', e.message); } }",
      ].join("\n"),
    );
    const vu = await vuOf(path);
    let thrown: unknown;
    // Not async (it makes no request): it throws at once, as the isolate's iteration() awaits it.
    await Promise.resolve()
      .then(() => vu.exports.default!())
      .catch((e: unknown) => (thrown = e));
    expect(scriptFailure(thrown, true, vu.context.aborted, vu.lines)).toEqual({ error: null, aborted: "why" });
    const other = await vuOf(path);
    await other.exports.caught!();
    expect(scriptFailure(null, false, other.context.aborted, other.lines)).toEqual({ error: null, aborted: "" });
    // The console line is the VU's, with k6's level: it travels with the iteration's samples.
    expect(other.context.samples).toEqual([{ type: "log", level: "info", message: "caught test aborted", vu: 3 }]);
  });

  it("gives no location for a stack without the script in it", () => {
    expect(scriptLocation("Error: x\n    at send (main.js:10:3)", { sources: ["a.js"], runs: [4, 0, 1] })).toBeNull();
    expect(scriptLocation(undefined, { sources: ["a.js"], runs: [4, 0, 1] })).toBeNull();
    // Above the script's first line: the module's own preamble.
    expect(scriptLocation("at script.js:2:1", { sources: ["a.js"], runs: [4, 0, 1] })).toBeNull();
  });
});

describe("sourceLines", () => {
  it.each([
    // Lines follow their source one for one: one run.
    ["AAAA;AACA;AACA", { sources: ["a.js"], runs: [4, 0, 1] }],
    // The second generated line is the source's third: a new run there.
    ["AAAA;AAEA", { sources: ["a.js"], runs: [4, 0, 1, 5, 0, 3] }],
    // A line without segments keeps the run; the next source starts its own.
    ["AAAA;;ACEA", { sources: ["a.js", "b.js"], runs: [4, 0, 1, 6, 1, 3] }],
  ])("maps %s", (mappings, expected) => {
    expect(sourceLines({ sources: expected.sources, mappings }, LINES_BEFORE_CODE + 1)).toEqual(expected);
  });
});
