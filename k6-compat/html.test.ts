/**
 * k6/html's parseHTML gives k6's answers: test/fixtures/k6-html/probe.js asks a page what
 * scripts ask (find, each, map, attr with a default, get, filter, serialize, …) and
 * k6-v1.8.1.json holds what real k6 v1.8.1 answered (record.js beside it says how).
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundleScript } from "./bundle.ts";
import { evaluateInitContext } from "./init-context.ts";
import { parseHTML } from "./runtime/html.ts";
// @ts-expect-error: a k6 script's module, plain JavaScript without types.
import { probe } from "../test/fixtures/k6-html/probe.js";

describe("parseHTML", () => {
  it("answers probe.js as k6 v1.8.1 does", async () => {
    const k6 = JSON.parse(await readFile(new URL("../test/fixtures/k6-html/k6-v1.8.1.json", import.meta.url), "utf8")) as Record<string, unknown>;
    const ours = JSON.parse(JSON.stringify(probe(parseHTML))) as Record<string, unknown>;
    expect(ours).toEqual(k6);
  });

  it("refuses a source that is not a string, naming what it got", () => {
    expect(() => parseHTML(undefined)).toThrow(/parseHTML: HTML source must be a string, not undefined/);
  });
});

describe("HTML in a script's bundle", () => {
  it.each([
    // res.html() alone: the parser is added although k6/html is not imported.
    ["res-html.js", 'import http from "k6/http";\nexport default function () { http.get("http://127.0.0.1:9/").html("p").text(); }\n', true],
    [
      "parse-html.js",
      'import { parseHTML } from "k6/html";\nexport const title = parseHTML("<title>t</title>").find("title").text();\nexport default function () {}\n',
      true,
    ],
    // No HTML: no parser, so the isolate of every other script stays small.
    ["plain.js", 'import http from "k6/http";\nexport default function () { http.get("http://127.0.0.1:9/"); }\n', false],
  ])("%s carries the HTML parser: %s", async (name, source, carries) => {
    const dir = await mkdtemp(join(tmpdir(), "k6-html-"));
    const path = join(dir, name);
    await writeFile(path, source);
    const bundled = await bundleScript(path);
    if (!bundled.ok) throw new Error(bundled.problems.join("; "));
    expect(bundled.factory.includes('__k6modules["k6/html"]')).toBe(carries);
    expect(bundled.factory.length > 100_000).toBe(carries);
    expect(evaluateInitContext(bundled.factory, path, {}).ok).toBe(true);
  });
});
