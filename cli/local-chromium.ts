/**
 * Local Chromium for the Browser Run binding, with no network. Under wrangler dev, Miniflare
 * and the vitest plugin, a Worker's `browser` binding starts a real local Chrome per session,
 * which Miniflare downloads (Chrome for Testing) into `$XDG_CACHE_HOME/.wrangler/chrome/` the
 * first time: offline that fails. An executable already at the path Miniflare looks for, which
 * runs Debian's Chromium, stands in for the download.
 *
 * The shim lives under a project-local XDG_CACHE_HOME (.cache/xdg), which this module sets in
 * the process that runs Miniflare: Miniflare launches the browser from that process (its
 * loopback's `/browser/launch`), reading the variable at each launch. A launch failure with
 * the shim in place is reported, never "repaired" by a download: the install is marked
 * verified as Miniflare marks its own.
 *
 * Where Chromium is missing, the shim is still written and prints what is missing, so the
 * first browser session of a run fails with that sentence instead of a download error.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { PROJECT_ROOT } from "./paths.ts";

/** Debian's Chromium (`apt-get install chromium`): the browser local sessions run. */
export const SYSTEM_CHROMIUM = "/usr/bin/chromium";

/** Miniflare's marker of an install it has launched from (a failed launch then is reported, not re-downloaded). */
const INSTALL_COMPLETE_MARKER = ".miniflare-install-complete";

/** What was set up: the XDG_CACHE_HOME Miniflare must see, the shims written, and why Chromium cannot run if it cannot. */
export interface LocalChromium {
  readonly cacheHome: string;
  readonly shims: readonly string[];
  /** Null when Chromium is there; else the sentence the shim prints at each launch. */
  readonly missing: string | null;
}

/** The project-local XDG_CACHE_HOME (under .cache/, which git ignores). */
export const localCacheHome = (root = PROJECT_ROOT) => join(root, ".cache", "xdg");

/** Why local browser sessions cannot run, or null when `chromium` is an executable file. */
export function chromiumProblem(chromium = SYSTEM_CHROMIUM): string | null {
  if (existsSync(chromium)) return null;
  return (
    `local browser sessions run Debian's Chromium at ${chromium}, which is missing: install it ` +
    "(apt-get install chromium); Miniflare's own Chrome download needs a network this machine may not have"
  );
}

/**
 * The Chrome version each Miniflare in the project pins (`BROWSER_VERSION`): the vitest
 * plugin's and wrangler's own may differ, and each looks for its own folder.
 */
export function pinnedChromeVersions(root = PROJECT_ROOT): string[] {
  const require = createRequire(join(root, "package.json"));
  const entries = new Set<string>();
  const add = (resolve: () => string) => {
    try {
      entries.add(resolve());
    } catch {
      // Not installed this way: the other copy answers.
    }
  };
  add(() => require.resolve("miniflare"));
  add(() => createRequire(require.resolve("wrangler/package.json")).resolve("miniflare"));
  if (entries.size === 0) throw new Error(`no miniflare under ${root}/node_modules: run npm install`);
  const versions = new Set<string>();
  for (const entry of entries) {
    const match = /\bBROWSER_VERSION = "([0-9.]+)"/.exec(readFileSync(entry, "utf8"));
    if (!match) throw new Error(`${entry} pins no Chrome version (BROWSER_VERSION): this Miniflare finds its browser another way`);
    versions.add(match[1]!);
  }
  return [...versions];
}

/** Miniflare's platform name (@puppeteer/browsers' detectBrowserPlatform) for Linux. */
function linuxPlatform(arch: string): string {
  return arch === "arm64" ? "linux_arm" : "linux";
}

/** Where Miniflare looks for Chrome `version` under `cacheHome` (@puppeteer/browsers' layout). */
export function chromeShimPath(cacheHome: string, version: string, arch = process.arch): string {
  return join(cacheHome, ".wrangler", "chrome", `${linuxPlatform(arch)}-${version}`, "chrome-linux64", "chrome");
}

/** The shim's text: Chromium without its sandbox (these machines run as root), or the reason it cannot run. */
export function shimScript(chromium: string, missing: string | null): string {
  if (missing !== null) return `#!/bin/sh\necho ${JSON.stringify(`edgeload: ${missing}`)} >&2\nexit 127\n`;
  return `#!/bin/sh\nexec ${chromium} --no-sandbox "$@"\n`;
}

/**
 * Writes the shims under `cacheHome` for every pinned version and sets `env.XDG_CACHE_HOME`
 * to it. Idempotent; rewritten each time, so a Chromium installed since is picked up.
 */
export function useLocalChromium(options: { root?: string; chromium?: string; env?: NodeJS.ProcessEnv; versions?: readonly string[] } = {}): LocalChromium {
  const root = options.root ?? PROJECT_ROOT;
  const chromium = options.chromium ?? SYSTEM_CHROMIUM;
  const cacheHome = localCacheHome(root);
  // Elsewhere Miniflare's own download is left to work (it needs the network).
  if (process.platform !== "linux") return { cacheHome, shims: [], missing: `local Chromium is set up on Linux only (this is ${process.platform})` };
  const missing = chromiumProblem(chromium);
  const shims = (options.versions ?? pinnedChromeVersions(root)).map((version) => {
    const path = chromeShimPath(cacheHome, version);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, shimScript(chromium, missing));
    chmodSync(path, 0o755);
    writeFileSync(join(dirname(dirname(path)), INSTALL_COMPLETE_MARKER), "");
    return path;
  });
  (options.env ?? process.env).XDG_CACHE_HOME = cacheHome;
  return { cacheHome, shims, missing };
}
