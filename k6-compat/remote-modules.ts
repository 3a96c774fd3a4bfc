/**
 * Remote module imports (`import { textSummary } from "https://jslib.k6.io/…"`), loaded as k6
 * loads them: when the script is prepared, not in the shards, which cannot download code
 * at run time. They are bundled with the script (bundle.ts), so every shard runs exactly
 * the code that was fetched here.
 *
 * Where a module comes from, first that has it:
 *   1. `modulesDir` (the CLI's --modules-dir): a folder laid out as the URLs are,
 *      `<dir>/jslib.k6.io/k6-utils/1.4.0/index.js`, for machines with no network at all;
 *   2. the cache (`<cacheDir>/<sha256 of the URL>.js`), filled by earlier fetches;
 *   3. the network, with a timeout; what arrives is cached.
 * Each module's sha256 is recorded in a lock file beside the script (`<script>.modules.json`,
 * URL → sha256). A module whose content no longer matches its recorded hash is refused, as
 * a lock file is meant to: the code a run executes changed under it. Delete its line to
 * accept the new content.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface RemoteModuleOptions {
  /** Where fetched modules are kept (the CLI uses `.cache/k6-modules` under the working directory). */
  readonly cacheDir: string;
  /** A folder laid out as the URLs (host/path), read before the cache and the network. */
  readonly modulesDir?: string | null;
  /** The lock file: URL → sha256 of each module; null for none. */
  readonly lockFile: string | null;
  readonly fetch?: typeof fetch;
  readonly timeoutMs?: number;
}

export type RemoteLoad = { readonly ok: true; readonly contents: string } | { readonly ok: false; readonly reason: string };

const DEFAULT_TIMEOUT_MS = 30_000;

export class RemoteModules {
  readonly #o: RemoteModuleOptions;
  readonly #loaded = new Map<string, string>();
  #lock: Record<string, string> | null = null;

  constructor(options: RemoteModuleOptions) {
    this.#o = options;
  }

  /** Every module loaded so far, URL → sha256 (what the lock file records). */
  get hashes(): Readonly<Record<string, string>> {
    return Object.fromEntries(this.#loaded);
  }

  /** The module at `url`, or why it cannot be had (naming the URL). */
  async load(url: string): Promise<RemoteLoad> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { ok: false, reason: `${url}: not a URL` };
    }
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return { ok: false, reason: `${url}: only http(s) modules can be imported` };
    const found = (await this.#fromDir(parsed)) ?? (await this.#fromCache(url));
    const got = found !== null ? { ok: true as const, contents: found } : await this.#fetch(url);
    if (!got.ok) return got;
    const hash = sha256(got.contents);
    const recorded = (await this.#lockEntries())[url];
    if (recorded !== undefined && recorded !== hash) {
      return {
        ok: false,
        reason: `${url}: its content changed (sha256 ${hash}, ${this.#o.lockFile} records ${recorded}); delete its line there to accept the new code`,
      };
    }
    if (found === null) await this.#cache(url, got.contents);
    this.#loaded.set(url, hash);
    return got;
  }

  /** Writes the lock file: what it recorded, plus every module loaded now. */
  async writeLock(): Promise<void> {
    if (!this.#o.lockFile || this.#loaded.size === 0) return;
    const entries = { ...(await this.#lockEntries()), ...this.hashes };
    const sorted = Object.fromEntries(Object.entries(entries).sort(([a], [b]) => a.localeCompare(b)));
    await writeFile(this.#o.lockFile, `${JSON.stringify(sorted, null, 2)}\n`);
  }

  async #lockEntries(): Promise<Record<string, string>> {
    if (this.#lock) return this.#lock;
    if (!this.#o.lockFile) return (this.#lock = {});
    try {
      this.#lock = JSON.parse(await readFile(this.#o.lockFile, "utf8")) as Record<string, string>;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw new Error(`${this.#o.lockFile}: not a module lock file (${(error as Error).message})`);
      this.#lock = {};
    }
    return this.#lock;
  }

  async #fromDir(url: URL): Promise<string | null> {
    if (!this.#o.modulesDir) return null;
    return readIfThere(join(this.#o.modulesDir, url.host, decodeURIComponent(url.pathname)));
  }

  #cachePath(url: string): string {
    return join(this.#o.cacheDir, `${sha256(url)}.js`);
  }

  async #fromCache(url: string): Promise<string | null> {
    return readIfThere(this.#cachePath(url));
  }

  async #cache(url: string, contents: string): Promise<void> {
    await mkdir(this.#o.cacheDir, { recursive: true });
    await writeFile(this.#cachePath(url), contents);
  }

  async #fetch(url: string): Promise<RemoteLoad> {
    const fetcher = this.#o.fetch ?? fetch;
    try {
      const response = await fetcher(url, { signal: AbortSignal.timeout(this.#o.timeoutMs ?? DEFAULT_TIMEOUT_MS), redirect: "follow" });
      if (!response.ok) return { ok: false, reason: `${url}: HTTP ${response.status} ${response.statusText}`.trimEnd() };
      return { ok: true, contents: await response.text() };
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (error as Error).message;
      const offline = this.#o.modulesDir ? "" : " (offline: put it under --modules-dir, laid out as host/path)";
      return { ok: false, reason: `${url}: could not be fetched: ${why}${offline}` };
    }
  }
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

async function readIfThere(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "EISDIR") return null;
    throw error;
  }
}

/** The lock file of a script: `load.js` → `load.modules.json` beside it. */
export function lockFileOf(scriptPath: string): string {
  return scriptPath.replace(/\.(m?[jt]s|cjs)$/, "") + ".modules.json";
}
