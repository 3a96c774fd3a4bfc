/**
 * What a k6 script finds in its realm as k6 gives it: `global`, the global object under k6's
 * second name (runtime/script-global.ts; k6chaijs 4.3.4.3 reads it in its init context), and
 * exec.test.options, the consolidated options frozen, refused in the init context with k6's
 * words (runtime/vu-modules/execution.ts over test-options.ts).
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
import { k6TestOptions } from "./test-options.ts";

async function initOf(source: string) {
  const dir = mkdtempSync(join(tmpdir(), "edgeload-realm-"));
  const path = join(dir, "script.js");
  writeFileSync(path, source);
  const bundled = await bundleScript(path);
  if (!bundled.ok) throw new Error(bundled.problems.join("\n"));
  return evaluateInitContext(bundled.factory, path, {});
}

function execOf(host: IterationHost | null, testOptions: Record<string, unknown> | null) {
  const context: VuContext = {
    id: 1,
    iteration: 0,
    iterationInTest: 0,
    scenario: { name: "default", executor: "ramping-vus", startTimeMs: 0 },
    samples: [],
    host,
    jar: new CookieJar(),
    shared: new Map(),
    testOptions,
  };
  return (createVuModules(context) as Record<string, any>)["k6/execution"];
}

const NO_HOST_CALLS = {} as IterationHost;

describe("a script's realm", () => {
  it("has `global`, the global object, in the init context (as the UMD builds of jslibs read it)", async () => {
    const init = await initOf(
      [
        "const root = typeof self === 'object' ? self : global;",
        "if (root !== globalThis || global.JSON !== JSON) throw new Error('global is not the global object');",
        "export default function () {}",
      ].join("\n"),
    );
    expect(init).toMatchObject({ ok: true });
  });

  it("gives exec.test.options in VU code: the consolidated options, frozen", () => {
    const exec = execOf(NO_HOST_CALLS, k6TestOptions({ stages: [{ duration: "10s", target: 5 }] }));
    const options = exec.test.options;
    expect(options.scenarios.default.stages).toEqual([{ duration: "10s", target: 5 }]);
    expect(options.scenarios.default.executor).toBe("ramping-vus");
    // The shortcut itself is gone, as in k6.
    expect(options.stages).toBeUndefined();
    expect(Object.isFrozen(options.scenarios.default.stages[0])).toBe(true);
    expect(exec.test.options).toBe(options);
  });

  it("refuses exec.test.options in the init context with k6's words (exit 107 when the script does not catch it)", async () => {
    expect(() => execOf(null, k6TestOptions({})).test.options).toThrow("getting test options in the init context is not supported");
    const init = await initOf('import exec from "k6/execution";\nconst o = exec.test.options;\nexport default function () {}\n');
    expect(init).toMatchObject({ ok: false, exception: true });
  });
});
