/**
 * `https://` imports fetched as k6 fetches them, when the script is prepared: served here
 * from a loopback server laid out as jslib.k6.io is, bundled with the script, cached, locked
 * by sha256 beside the script, and refused — naming the URL and why — when they cannot be
 * had or changed under their lock.
 */
import { createServer, type Server } from "node:http";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleScript } from "./bundle.ts";
import { evaluateInitContext } from "./init-context.ts";
import { lockFileOf, RemoteModules } from "./remote-modules.ts";

/** A jslib-like module that imports a sibling by a relative path, as jslib's do. */
const MODULES: Record<string, string> = {
  "/k6-utils/1.4.0/index.js": 'export { randomIntBetween } from "./random.js";\nexport const uuidLike = () => "0000";\n',
  "/k6-utils/1.4.0/random.js": "export function randomIntBetween(min, max) { return min + Math.floor(Math.random() * (max - min + 1)); }\n",
};

let server: Server;
let base: string;
let dir: string;
let served = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    const body = MODULES[req.url ?? ""];
    served++;
    res.writeHead(body ? 200 : 404, { "content-type": "application/javascript" }).end(body ?? "not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  dir = await mkdtemp(join(tmpdir(), "edgeload-remote-"));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

async function script(name: string, url: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(
    path,
    `import { randomIntBetween } from "${url}";\nexport const options = { vus: 1, iterations: 1 };\nexport const picked = randomIntBetween(3, 3);\nexport default function () {}\n`,
  );
  return path;
}

const remote = (path: string, over: Partial<ConstructorParameters<typeof RemoteModules>[0]> = {}) =>
  new RemoteModules({ cacheDir: join(dir, "cache"), lockFile: lockFileOf(path), ...over });

describe("remote modules", () => {
  it("fetches a module and its relative imports, bundles them, and records each sha256 beside the script", async () => {
    const path = await script("uses-utils.js", `${base}/k6-utils/1.4.0/index.js`);
    const modules = remote(path);
    const bundled = await bundleScript(path, modules);
    expect(bundled.ok, JSON.stringify(bundled)).toBe(true);
    if (!bundled.ok) return;
    const init = evaluateInitContext(bundled.factory, path, {});
    expect(init.ok).toBe(true);
    await modules.writeLock();
    const lock = JSON.parse(await readFile(lockFileOf(path), "utf8")) as Record<string, string>;
    expect(Object.keys(lock).sort()).toEqual([`${base}/k6-utils/1.4.0/index.js`, `${base}/k6-utils/1.4.0/random.js`]);
    expect(Object.values(lock).every((h) => /^[0-9a-f]{64}$/.test(h))).toBe(true);
  });

  it("bundles from the cache without asking the network again", async () => {
    const path = await script("cached.js", `${base}/k6-utils/1.4.0/index.js`);
    const before = served;
    const bundled = await bundleScript(path, remote(path));
    expect(bundled.ok).toBe(true);
    expect(served).toBe(before); // both modules came from the cache the first test filled
  });

  it("refuses a module it cannot fetch, naming the URL and why, before anything runs", async () => {
    const path = await script("missing.js", `${base}/k6-utils/9.9.9/index.js`);
    const bundled = await bundleScript(path, remote(path));
    expect(bundled).toEqual({ ok: false, problems: [`import of remote module ${base}/k6-utils/9.9.9/index.js: HTTP 404 Not Found`] });
    const closed = await script("unreachable.js", "http://127.0.0.1:1/lib/index.js");
    const offline = await bundleScript(closed, remote(closed, { cacheDir: join(dir, "empty-cache"), timeoutMs: 5_000 }));
    expect(offline.ok).toBe(false);
    if (!offline.ok)
      expect(offline.problems[0]).toMatch(
        /^import of remote module http:\/\/127\.0\.0\.1:1\/lib\/index\.js: could not be fetched: .+ \(offline: put it under --modules-dir/,
      );
  });

  it("refuses a module whose content no longer matches its lock", async () => {
    const path = await script("locked.js", `${base}/k6-utils/1.4.0/index.js`);
    await writeFile(lockFileOf(path), JSON.stringify({ [`${base}/k6-utils/1.4.0/index.js`]: "0".repeat(64) }));
    const bundled = await bundleScript(path, remote(path));
    expect(bundled.ok).toBe(false);
    if (!bundled.ok) expect(bundled.problems[0]).toContain(`${base}/k6-utils/1.4.0/index.js: its content changed`);
  });

  it("reads a --modules-dir laid out as host/path, with no network and no cache", async () => {
    const modulesDir = join(dir, "modules");
    await mkdir(join(modulesDir, "jslib.k6.io", "k6-utils", "1.4.0"), { recursive: true });
    for (const [file, text] of Object.entries(MODULES)) await writeFile(join(modulesDir, "jslib.k6.io", file), text);
    const path = await script("offline.js", "https://jslib.k6.io/k6-utils/1.4.0/index.js");
    const bundled = await bundleScript(
      path,
      remote(path, { modulesDir, cacheDir: join(dir, "unused-cache"), fetch: () => Promise.reject(new Error("no network")) }),
    );
    expect(bundled.ok, JSON.stringify(bundled)).toBe(true);
  });

  it("names the refused import, not esbuild's 'No matching export', for a named import of a module edgeload cannot run", async () => {
    const path = join(dir, "grpc.js");
    await writeFile(path, 'import { Client } from "k6/net/grpc";\nexport default function () { new Client(); }\n');
    const bundled = await bundleScript(path);
    expect(bundled.ok).toBe(false);
    if (!bundled.ok) expect(bundled.problems).toEqual([expect.stringMatching(/grpc\.js: import of k6\/net\/grpc: gRPC is not available/)]);
  });
});
