/**
 * k6-utils' check() (jslib.k6.io/k6-utils 1.5.0, which grafana/k6's browser examples use for
 * async checks) adds to `new Rate("checks")`. k6 hands back its own checks metric for that
 * name, so those samples are checks: counted in the summary's checks, by name. edgeload did
 * declare a custom metric named checks, which the run spec refuses (a built-in name).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundleScript } from "./bundle.ts";
import { evaluateInitContext } from "./init-context.ts";
import { CookieJar } from "./runtime/cookie-jar.ts";
import { createVuModules, type VuContext } from "./runtime/vu-modules.ts";
import type { IterationHost } from "./runtime/wire.ts";
import { noSockets } from "../test/support/no-sockets.ts";

describe('new Rate("checks"), as k6-utils\' check() makes it', () => {
  it("declares no custom metric in the init context, where another Rate is declared", async () => {
    const dir = mkdtempSync(join(tmpdir(), "k6-utils-check-"));
    const path = join(dir, "script.js");
    writeFileSync(path, 'import { Rate } from "k6/metrics";\nconst checks = new Rate("checks");\nconst ok = new Rate("ok");\nexport default function () {}\n');
    const bundled = await bundleScript(path);
    if (!bundled.ok) throw new Error(bundled.problems.join("\n"));
    const init = evaluateInitContext(bundled.factory, path, {});
    expect(init.ok && init.init.metrics).toEqual({ ok: "rate" });
  });

  it("records each add() as a check named by its check tag, passed when the value is truthy", () => {
    const declared: string[] = [];
    const host: IterationHost = { send: () => Promise.reject(new Error("no requests")), sleep: async () => {}, ...noSockets };
    const vu: VuContext = {
      id: 1,
      iteration: 0,
      iterationInTest: 0,
      scenario: { name: "ui", executor: "shared-iterations", startTimeMs: 0 },
      samples: [],
      host,
      jar: new CookieJar(),
      shared: new Map(),
      declare: (name) => declared.push(name),
    };
    const { Rate } = (createVuModules(vu) as Record<string, any>)["k6/metrics"];
    const checks = new Rate("checks");
    checks.add(1, { check: "result should be 210" });
    checks.add(false, { check: "is hidden", page: "home" });
    expect(vu.samples).toEqual([
      { type: "check", name: "result should be 210", passed: true, tags: { check: "result should be 210" } },
      { type: "check", name: "is hidden", passed: false, tags: { check: "is hidden", page: "home" } },
    ]);
    expect(declared).toEqual([]);
  });
});
