/**
 * What a script that imports something edgeload cannot run is told (issue 36, point 7): the
 * documented "import of …: reason" naming the module, before any load, whether the import
 * is a default, a namespace or a named one (esbuild alone would say "No matching export in
 * k6-compat:…" for a named one), and when the script uses top-level await too.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundleScript } from "./bundle.ts";
import { RemoteModules } from "./remote-modules.ts";

const dir = mkdtempSync(join(tmpdir(), "k6-refusals-"));
let n = 0;
function script(source: string): string {
  const path = join(dir, `script-${++n}.js`);
  writeFileSync(path, source);
  return path;
}

/** A loader whose network is down and whose cache and modules folder are empty. */
const offline = new RemoteModules({ cacheDir: join(dir, "empty-cache"), lockFile: null, fetch: () => Promise.reject(new Error("network down")) });

const REFUSED = [
  ["k6/experimental/browser", "browser", /import of k6\/experimental\/browser: k6's experimental browser module/],
  ["k6/net/grpc", "Client", /import of k6\/net\/grpc: gRPC is not available/],
  ["k6/x/kafka", "Writer", /import of k6\/x\/kafka: xk6 extensions are Go code/],
  ["https://127.0.0.1:9/lib.js", "helper", /import of remote module https:\/\/127\.0\.0\.1:9\/lib\.js: .*network down/],
] as const;

describe("a refused import", () => {
  it.each(
    REFUSED.flatMap(([module, name, message]) => [
      [module, `import { ${name} } from "${module}";\nexport default function () { ${name}; }\n`, "named", message],
      [module, `import * as m from "${module}";\nexport default function () { m.${name}; }\n`, "namespace", message],
      [
        module,
        `import { ${name} } from "${module}";\nconst ready = await Promise.resolve(true);\nexport default function () { ${name}(ready); }\n`,
        "named, with top-level await",
        message,
      ],
    ]),
  )("%s (%s import) is named with its reason", async (_module, source, _kind, message) => {
    const bundled = await bundleScript(script(source), offline);
    expect(bundled.ok).toBe(false);
    if (bundled.ok) return;
    expect(bundled.problems).toEqual([expect.stringMatching(message)]);
    expect(bundled.problems.join("\n")).not.toMatch(/No matching export|Top-level await/);
  });

  it("names every refused import of a script, not only the first", async () => {
    const bundled = await bundleScript(
      script('import { Client } from "k6/net/grpc";\nimport { browser } from "k6/experimental/browser";\nexport default function () { Client; browser; }\n'),
    );
    expect(bundled.ok ? [] : bundled.problems).toEqual([expect.stringMatching(/k6\/net\/grpc/), expect.stringMatching(/k6\/experimental\/browser/)]);
  });
});

describe("a named import a compat module does not export", () => {
  it("says what k6 says when k6 has it not either; k6/browser's networkProfiles is built (issue 52)", async () => {
    const bundled = await bundleScript(
      script(
        'import { browser, networkProfiles } from "k6/browser";\nimport { foo } from "k6/http";\nexport default function () { browser; networkProfiles; foo; }\n',
      ),
    );
    expect(bundled.ok ? [] : bundled.problems).toEqual([expect.stringMatching(/:2:9: k6\/http does not provide an export named `foo`/)]);
  });
});
