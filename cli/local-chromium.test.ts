/**
 * The shim that stands in for Miniflare's Chrome download (local-chromium.ts): written where
 * Miniflare looks for the version it pins, running the Chromium it is given, or saying what is
 * missing when there is none; XDG_CACHE_HOME set to the project-local cache.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { chromeShimPath, chromiumProblem, localCacheHome, pinnedChromeVersions, useLocalChromium } from "./local-chromium.ts";

const root = () => mkdtempSync(join(tmpdir(), "local-chromium-"));

describe.runIf(process.platform === "linux")("local Chromium for the browser binding", () => {
  it("reads the Chrome version each installed Miniflare pins", () => {
    const versions = pinnedChromeVersions();
    expect(versions.length).toBeGreaterThan(0);
    for (const v of versions) expect(v).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  });

  it("lays the shim out as @puppeteer/browsers does: chrome/linux-<version>/chrome-linux64/chrome under .wrangler", () => {
    // x64 and arm64 Linux (Miniflare's "linux" and "linux_arm") both use the linux64 folder.
    expect(chromeShimPath("/c", "126.0.6478.182", "x64")).toBe("/c/.wrangler/chrome/linux-126.0.6478.182/chrome-linux64/chrome");
    expect(chromeShimPath("/c", "126.0.6478.182", "arm64")).toBe("/c/.wrangler/chrome/linux_arm-126.0.6478.182/chrome-linux64/chrome");
  });

  it("writes an executable that runs the given Chromium without its sandbox, marked installed, and sets XDG_CACHE_HOME", () => {
    const dir = root();
    const fake = join(dir, "fake-chromium");
    writeFileSync(fake, '#!/bin/sh\necho "args: $*"\n');
    chmodSync(fake, 0o755);
    const env: NodeJS.ProcessEnv = {};
    const result = useLocalChromium({ root: dir, chromium: fake, env, versions: ["1.2.3.4"] });
    expect(result).toEqual({ cacheHome: localCacheHome(dir), shims: [chromeShimPath(localCacheHome(dir), "1.2.3.4")], missing: null });
    expect(env.XDG_CACHE_HOME).toBe(join(dir, ".cache", "xdg"));
    const shim = result.shims[0]!;
    expect(statSync(shim).mode & 0o111).not.toBe(0);
    expect(execFileSync(shim, ["--headless=new", "about:blank"], { encoding: "utf8" })).toBe("args: --no-sandbox --headless=new about:blank\n");
    // Miniflare's mark of an install it launched from: a failed launch is reported, not re-downloaded.
    expect(existsSync(join(dirname(dirname(shim)), ".miniflare-install-complete"))).toBe(true);
  });

  it("without Chromium, writes a shim that fails naming what is missing and how to install it", () => {
    const dir = root();
    const absent = join(dir, "no-such-chromium");
    const result = useLocalChromium({ root: dir, chromium: absent, env: {}, versions: ["1.2.3.4"] });
    expect(result.missing).toBe(chromiumProblem(absent));
    expect(result.missing).toMatch(/no-such-chromium, which is missing: install it \(apt-get install chromium\)/);
    const run = spawnSync(result.shims[0]!, [], { encoding: "utf8" });
    expect(run.status).toBe(127);
    expect(run.stderr).toContain(`edgeload: local browser sessions run Debian's Chromium at ${absent}, which is missing`);
  });

  it("rewrites the shim once Chromium is there", () => {
    const dir = root();
    const path = join(dir, "chromium-later");
    useLocalChromium({ root: dir, chromium: path, env: {}, versions: ["1.2.3.4"] });
    writeFileSync(path, "#!/bin/sh\necho ok\n");
    chmodSync(path, 0o755);
    const [shim] = useLocalChromium({ root: dir, chromium: path, env: {}, versions: ["1.2.3.4"] }).shims;
    expect(readFileSync(shim!, "utf8")).toContain(`exec ${path} --no-sandbox`);
  });
});
