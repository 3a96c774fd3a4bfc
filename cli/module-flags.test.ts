/**
 * The CLI's flags for a script's remote imports reach the loader (k6-compat/remote-modules.ts,
 * tested there in depth): without --allow-http-modules a plain http:// import from a host
 * other than loopback stops `edgeload plan` before anything is fetched, naming the URL and
 * the flag; with it the import is fetched. 0.0.0.0:1 is not loopback by name, and fetch
 * refuses port 1 before connecting, so what the flag changes shows in the refusal without
 * any network.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { edgeloadInProcess } from "../test/support/cli-in-process.ts";

const edgeload = edgeloadInProcess();
let dir: string;

beforeAll(async () => {
  vi.stubEnv("EDGELOAD_URL", "");
  dir = await mkdtemp(join(tmpdir(), "edgeload-module-flags-"));
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await rm(dir, { recursive: true, force: true });
});

async function scriptImporting(name: string, url: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, `import { x } from "${url}";\nexport default function () { x(); }\n`);
  return path;
}

describe("edgeload plan of a script with remote imports", () => {
  const plainHttp = "http://0.0.0.0:1/lib.js";

  it("refuses a plain http:// import without --allow-http-modules, naming the URL and the flag (exit 104)", async () => {
    const path = await scriptImporting("plain.js", plainHttp);
    const { code, stderr } = await edgeload("plan", path, "-e", "BASE_URL=http://127.0.0.1:9");
    expect(code).toBe(104);
    expect(stderr).toMatch(new RegExp(`import of remote module ${plainHttp}: plain http:// .*--allow-http-modules`));
  });

  it("fetches it with --allow-http-modules (the refusal is then the connection's)", async () => {
    const path = await scriptImporting("plain-allowed.js", plainHttp);
    const { code, stderr } = await edgeload("plan", path, "-e", "BASE_URL=http://127.0.0.1:9", "--allow-http-modules");
    expect(code).toBe(104);
    expect(stderr).toContain(`import of remote module ${plainHttp}: could not be fetched: `);
    expect(stderr).not.toContain("--allow-http-modules");
  });

  it("refuses an import that reaches outside --modules-dir, naming the module and the folder (exit 104)", async () => {
    const modulesDir = join(dir, "modules");
    await mkdir(modulesDir, { recursive: true });
    await writeFile(join(dir, "secret.js"), "export const x = () => {};\n");
    const outsideUrl = "https://jslib.k6.io/..%2f..%2fsecret.js";
    const path = await scriptImporting("escape.js", outsideUrl);
    const { code, stderr } = await edgeload("plan", path, "-e", "BASE_URL=http://127.0.0.1:9", "--modules-dir", modulesDir);
    expect(code).toBe(104);
    expect(stderr).toContain(`import of remote module ${outsideUrl}: `);
    expect(stderr).toContain(`outside --modules-dir ${modulesDir}`);
  });
});
