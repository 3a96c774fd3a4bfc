/**
 * `https://` imports fetched as k6 fetches them, when the script is prepared: served here
 * from a loopback server laid out as jslib.k6.io is (plain http to loopback needs no flag,
 * see module-url-policy.ts), bundled with the script, cached, locked by sha256 beside the
 * script, and refused — naming the URL and why — when they cannot be had, changed under
 * their lock, come over plain http from elsewhere, or sit outside --modules-dir.
 */
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
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

  it("bundles from the cache without asking the network again when the lock pins what is cached", async () => {
    const path = await script("cached.js", `${base}/k6-utils/1.4.0/index.js`);
    await copyFile(lockFileOf(join(dir, "uses-utils.js")), lockFileOf(path)); // the first test's pins
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

type Route = { readonly status: number; readonly body?: string; readonly location?: string };

/** A fetch that answers from `route` (a network error where it has none) and records each URL asked. */
function stubFetch(route: (url: string) => Route | undefined): { fetcher: typeof fetch; asked: string[] } {
  const asked: string[] = [];
  const fetcher = (async (input: string | URL | Request) => {
    const url = String(input);
    asked.push(url);
    const answer = route(url);
    if (!answer) throw new TypeError("fetch failed", { cause: { code: "ENOTFOUND" } });
    return new Response(answer.body ?? "", { status: answer.status, headers: answer.location ? { location: answer.location } : {} });
  }) as typeof fetch;
  return { fetcher, asked };
}

const MODULE_TEXT = "export const fromTheNetwork = 1;\n";
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
/** Where the cache keeps a URL's module (remote-modules.ts: `<cacheDir>/<sha256 of the URL>.js`). */
const cachedAt = (cacheDir: string, url: string) => join(cacheDir, `${sha256(url)}.js`);

describe("which module URLs are fetched", () => {
  it.each([
    // Loopback never leaves the machine: no one on a network path can change the code.
    ["http://127.0.0.1:9/lib.js", true],
    ["http://[::1]:9/lib.js", true],
    ["http://localhost:9/lib.js", true],
    // Names that only look like loopback resolve wherever their DNS says.
    ["http://127.0.0.1.nip.io/lib.js", false],
    ["http://localhost.example/lib.js", false],
    // Any other host over plain http: refused without --allow-http-modules.
    ["http://jslib.k6.io/k6-utils/1.4.0/index.js", false],
    // Not http(s) at all: never fetched, flag or not.
    ["file:///etc/passwd", false],
  ])("%s is fetched without --allow-http-modules: %s", async (url, fetched) => {
    const { fetcher, asked } = stubFetch(() => ({ status: 200, body: MODULE_TEXT }));
    const loaded = await new RemoteModules({ cacheDir: join(dir, "policy-cache"), lockFile: null, fetch: fetcher }).load(url);
    if (fetched) expect(loaded).toEqual({ ok: true, contents: MODULE_TEXT });
    else expect(loaded).toEqual({ ok: false, reason: expect.stringContaining(url) });
    expect(asked).toEqual(fetched ? [url] : []);
  });

  it("refuses a plain http:// module from elsewhere naming the URL and the flag, and fetches it with allowHttp", async () => {
    const url = "http://jslib.example/k6-utils/1.4.0/index.js";
    const { fetcher, asked } = stubFetch(() => ({ status: 200, body: MODULE_TEXT }));
    const options = { cacheDir: join(dir, "http-cache"), lockFile: null, fetch: fetcher };
    const refused = await new RemoteModules(options).load(url);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.reason).toMatch(new RegExp(`^${url}: .*--allow-http-modules`));
    expect(await new RemoteModules({ ...options, allowHttp: true }).load(url)).toEqual({ ok: true, contents: MODULE_TEXT });
    expect(asked).toEqual([url]); // only the allowed load asked the network
  });

  it("refuses an https:// module that redirects to plain http://, before asking the http URL", async () => {
    const url = "https://jslib.example/lib.js";
    const downgraded = "http://mirror.example/lib.js";
    const routes: Record<string, Route> = { [url]: { status: 302, location: downgraded }, [downgraded]: { status: 200, body: MODULE_TEXT } };
    const { fetcher, asked } = stubFetch((u) => routes[u]);
    const options = { cacheDir: join(dir, "redirect-cache"), lockFile: null, fetch: fetcher };
    const refused = await new RemoteModules(options).load(url);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.reason).toMatch(new RegExp(`^${url}: redirected to ${downgraded}: .*--allow-http-modules`));
    expect(asked).toEqual([url]);
    expect(await new RemoteModules({ ...options, allowHttp: true }).load(url)).toEqual({ ok: true, contents: MODULE_TEXT });
  });
});

describe("--modules-dir is confined to its folder", () => {
  let modulesDir: string;
  beforeAll(async () => {
    const confined = join(dir, "confined");
    modulesDir = join(confined, "modules");
    await mkdir(join(modulesDir, "jslib.k6.io"), { recursive: true });
    await writeFile(join(confined, "secret.js"), "export const leaked = true;\n");
    await writeFile(join(modulesDir, "jslib.k6.io", "real.js"), "export const real = 1;\n");
    await symlink(join(confined, "secret.js"), join(modulesDir, "jslib.k6.io", "linked-out.js"));
    await symlink(confined, join(modulesDir, "linked-host.example"));
    await symlink(join(modulesDir, "jslib.k6.io", "real.js"), join(modulesDir, "jslib.k6.io", "alias.js"));
  });
  const offline = () =>
    remote(join(dir, "confined.js"), { modulesDir, cacheDir: join(dir, "confined-cache"), fetch: () => Promise.reject(new Error("no network")) });

  it.each([
    // An encoded slash the URL parser keeps, that a decoded path turns into `../`.
    ["https://jslib.k6.io/..%2f..%2fsecret.js"],
    // Encoded dots and slashes together: one segment to the URL, three levels to the disk.
    ["https://jslib.k6.io/%2e%2e%2f%2e%2e%2fsecret.js"],
    // An encoded backslash: a separator on Windows, so refused everywhere.
    ["https://jslib.k6.io/..%5c..%5csecret.js"],
    // An encoded slash that stays inside: no file name holds a slash, so it names no file here.
    ["https://jslib.k6.io/k6-utils%2f1.4.0%2findex.js"],
    // The host is a path segment too: `..` is the folder's parent.
    ["https://../secret.js"],
    // A file that is a symlink to one outside the folder.
    ["https://jslib.k6.io/linked-out.js"],
    // A host folder that is a symlink to a folder outside.
    ["https://linked-host.example/secret.js"],
  ])("%s is refused, naming the module and the folder", async (url) => {
    const loaded = await offline().load(url);
    expect(loaded.ok).toBe(false);
    if (!loaded.ok) {
      expect(loaded.reason.startsWith(`${url}: `), loaded.reason).toBe(true);
      expect(loaded.reason).toContain(`--modules-dir ${modulesDir}`);
    }
  });

  it("reads a symlink that stays inside the folder", async () => {
    expect(await offline().load("https://jslib.k6.io/alias.js")).toEqual({ ok: true, contents: "export const real = 1;\n" });
  });
});

describe("the cache is trusted only as far as the lock pins it", () => {
  const url = () => `${base}/k6-utils/1.4.0/random.js`;
  const genuine = MODULES["/k6-utils/1.4.0/random.js"] as string;
  const forged = "export function randomIntBetween() { return 666; }\n";
  /** A cache holding a forged copy of the module, and a lock file with `pins`. */
  async function forgedCache(name: string, pins: Record<string, string> | null) {
    const cacheDir = join(dir, `${name}-cache`);
    await mkdir(cacheDir, { recursive: true });
    await writeFile(cachedAt(cacheDir, url()), forged);
    const lockFile = join(dir, `${name}.modules.json`);
    if (pins) await writeFile(lockFile, JSON.stringify(pins));
    return { cacheDir, lockFile };
  }

  it("fetches again a cached module the lock does not pin, and replaces the cached copy", async () => {
    const where = await forgedCache("unpinned", null);
    const before = served;
    expect(await new RemoteModules(where).load(url())).toEqual({ ok: true, contents: genuine });
    expect(served).toBe(before + 1);
    expect(await readFile(cachedAt(where.cacheDir, url()), "utf8")).toBe(genuine);
  });

  it("says why an unpinned cached copy was not used when the network cannot be reached either", async () => {
    const where = await forgedCache("unpinned-offline", null);
    const loaded = await new RemoteModules({ ...where, fetch: () => Promise.reject(new Error("no network")) }).load(url());
    expect(loaded).toEqual({
      ok: false,
      reason: expect.stringMatching(/could not be fetched: no network.*its cached copy is not used: .*unpinned-offline\.modules\.json does not pin it/),
    });
  });

  it("fetches again a cached module whose bytes differ from the lock's pin, and refuses it when the network differs too", async () => {
    const pinned = await forgedCache("mismatched", { [url()]: sha256(genuine) });
    expect(await new RemoteModules(pinned).load(url())).toEqual({ ok: true, contents: genuine });
    const stale = await forgedCache("stale", { [url()]: "0".repeat(64) });
    const refused = await new RemoteModules(stale).load(url());
    expect(refused).toEqual({ ok: false, reason: expect.stringContaining(`${url()}: its content changed`) });
  });

  it.each([
    // JSON, but not an object of pins.
    ["null", /not a JSON object of URL → sha256/],
    // A pin that is not a sha256 could never match, or be compared.
    ['{"https://jslib.k6.io/x.js": "abc"}', /https:\/\/jslib\.k6\.io\/x\.js: "abc" is not a sha256 in hex/],
  ])("refuses a lock file holding %s, naming the file and what is wrong", async (text, wrong) => {
    const lockFile = join(dir, "malformed.modules.json");
    await writeFile(lockFile, text);
    const load = new RemoteModules({ cacheDir: join(dir, "malformed-cache"), lockFile }).load(url());
    await expect(load).rejects.toThrow(new RegExp(`^${lockFile}: not a module lock file \\(${wrong.source}`));
  });

  it("with no lock file, reads from the cache only what it fetched itself", async () => {
    const where = await forgedCache("no-lock", null);
    const modules = new RemoteModules({ cacheDir: where.cacheDir, lockFile: null });
    const before = served;
    expect(await modules.load(url())).toEqual({ ok: true, contents: genuine });
    expect(await modules.load(url())).toEqual({ ok: true, contents: genuine });
    expect(served).toBe(before + 1); // the second load is the cache's, pinned by the first
  });
});
