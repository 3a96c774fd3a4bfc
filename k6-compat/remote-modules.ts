/**
 * Remote module imports (`import { textSummary } from "https://jslib.k6.io/…"`), loaded as k6
 * loads them: when the script is prepared, not in the shards, which cannot download code
 * at run time. They are bundled with the script (bundle.ts), so every shard runs exactly
 * the code that was fetched here.
 *
 * Which URLs may be fetched: https, and plain http only from loopback or with allowHttp (the
 * CLI's --allow-http-modules), redirects included (module-url-policy.ts).
 *
 * Where a module comes from, first that has it:
 *   1. `modulesDir` (the CLI's --modules-dir): a folder laid out as the URLs are,
 *      `<dir>/jslib.k6.io/k6-utils/1.4.0/index.js`, for machines with no network at all;
 *      a URL that points outside the folder is refused (module-dir.ts);
 *   2. the cache (`<cacheDir>/<sha256 of the URL>.js`), filled by earlier fetches, but only
 *      a copy the lock pins: the cache is a plain folder anyone can write to, the lock is
 *      the record the user keeps (and may commit), so a cached copy is used only when its
 *      sha256 is the one the lock records for that URL; any other is fetched again;
 *   3. the network, with a timeout; what arrives is cached.
 * Each module's sha256 is recorded in a lock file beside the script (`<script>.modules.json`,
 * URL → sha256). A module whose content no longer matches its recorded hash is refused, as
 * a lock file is meant to: the code a run executes changed under it. Delete its line to
 * accept the new content.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { readFromModulesDir } from "./module-dir.ts";
import { moduleUrlRefusal } from "./module-url-policy.ts";

export interface RemoteModuleOptions {
  /** Where fetched modules are kept (the CLI uses `.cache/k6-modules` under the working directory). */
  readonly cacheDir: string;
  /** A folder laid out as the URLs (host/path), read before the cache and the network. */
  readonly modulesDir?: string | null;
  /** The lock file: URL → sha256 of each module; null for none (then no cached copy is trusted but this session's). */
  readonly lockFile: string | null;
  /** Plain http:// modules from hosts other than loopback (the CLI's --allow-http-modules). */
  readonly allowHttp?: boolean;
  readonly fetch?: typeof fetch;
  readonly timeoutMs?: number;
}

export type RemoteLoad = { readonly ok: true; readonly contents: string } | { readonly ok: false; readonly reason: string };

const DEFAULT_TIMEOUT_MS = 30_000;
/** As many as browsers follow before giving up. */
const MAX_REDIRECTS = 20;
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** A cached copy the lock pins, or why the cache was not used (null when it holds nothing). */
type CacheRead = { readonly contents: string } | { readonly unused: string | null };

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
    const refusal = moduleUrlRefusal(parsed, this.#o.allowHttp ?? false);
    if (refusal) return { ok: false, reason: `${url}: ${refusal}` };
    // This session's loads pin too: bundle.ts may bundle twice, before the lock is written.
    const pin = this.#loaded.get(url) ?? (await this.#lockEntries())[url];
    const fromDir = this.#o.modulesDir ? await readFromModulesDir(this.#o.modulesDir, parsed) : null;
    if (fromDir?.kind === "refused") return { ok: false, reason: `${url}: ${fromDir.reason}` };
    const local = fromDir?.kind === "found" ? fromDir : await this.#fromCache(url, pin);
    const fetched = !("contents" in local);
    const got = "contents" in local ? { ok: true as const, contents: local.contents } : await this.#fetch(url, local.unused);
    if (!got.ok) return got;
    const hash = sha256(got.contents);
    if (pin !== undefined && pin !== hash) {
      return {
        ok: false,
        reason: `${url}: its content changed (sha256 ${hash}, ${this.#o.lockFile ?? "an earlier load"} records ${pin}); delete its line there to accept the new code`,
      };
    }
    // Fetched again over a stale or unpinned copy: the cache now holds what the lock pins.
    if (fetched) await this.#cache(url, got.contents);
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
    let text: string;
    try {
      text = await readFile(this.#o.lockFile, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      return (this.#lock = {});
    }
    this.#lock = parseLock(this.#o.lockFile, text);
    return this.#lock;
  }

  #cachePath(url: string): string {
    return join(this.#o.cacheDir, `${sha256(url)}.js`);
  }

  /** The cached copy of `url` when `pin` (the lock's sha256 for it) is its hash. */
  async #fromCache(url: string, pin: string | undefined): Promise<CacheRead> {
    const contents = await readIfThere(this.#cachePath(url));
    if (contents === null) return { unused: null };
    if (pin === undefined) return { unused: `${this.#o.lockFile ?? "no lock file"} does not pin it` };
    if (sha256(contents) !== pin) return { unused: `its sha256 is not the one ${this.#o.lockFile ?? "an earlier load"} records` };
    return { contents };
  }

  async #cache(url: string, contents: string): Promise<void> {
    await mkdir(this.#o.cacheDir, { recursive: true });
    await writeFile(this.#cachePath(url), contents);
  }

  /**
   * `url` from the network. Redirects are followed here, not by fetch, so that each hop is
   * held to the same URL rule: an https module that redirects to plain http is refused.
   */
  async #fetch(url: string, cacheUnused: string | null): Promise<RemoteLoad> {
    const fetcher = this.#o.fetch ?? fetch;
    const signal = AbortSignal.timeout(this.#o.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    try {
      let at = url;
      for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
        const response = await fetcher(at, { signal, redirect: "manual" });
        if (!REDIRECT_STATUSES.has(response.status)) {
          if (!response.ok) return { ok: false, reason: `${url}: HTTP ${response.status} ${response.statusText}`.trimEnd() };
          return { ok: true, contents: await response.text() };
        }
        await response.body?.cancel();
        const location = response.headers.get("location");
        if (!location) return { ok: false, reason: `${url}: HTTP ${response.status} with no Location to follow` };
        const next = new URL(location, at);
        const refusal = moduleUrlRefusal(next, this.#o.allowHttp ?? false);
        if (refusal) return { ok: false, reason: `${url}: redirected to ${next.href}: ${refusal}` };
        at = next.href;
      }
      return { ok: false, reason: `${url}: more than ${MAX_REDIRECTS} redirects` };
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (error as Error).message;
      const offline = this.#o.modulesDir ? "" : " (offline: put it under --modules-dir, laid out as host/path)";
      const cached = cacheUnused ? `; its cached copy is not used: ${cacheUnused}` : "";
      return { ok: false, reason: `${url}: could not be fetched: ${why}${offline}${cached}` };
    }
  }
}

/**
 * A lock file's pins: a JSON object of URL → sha256 (64 lowercase hex digits). Anything else
 * is refused, naming the file and the first entry that is wrong: a pin that cannot be
 * compared would let any cached copy through or refuse every one.
 */
function parseLock(file: string, text: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file}: not a module lock file (${(error as Error).message})`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new Error(`${file}: not a module lock file (not a JSON object of URL → sha256)`);
  for (const [url, hash] of Object.entries(parsed)) {
    if (typeof hash !== "string" || !/^[0-9a-f]{64}$/.test(hash))
      throw new Error(`${file}: not a module lock file (${url}: ${JSON.stringify(hash)} is not a sha256 in hex)`);
  }
  return parsed as Record<string, string>;
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
