/**
 * The browser the dashboard tests drive: Debian's chromium, never a downloaded one. When it
 * is missing and this process may install packages (root with apt-get), it is installed
 * once; otherwise the caller skips with the reason — unless EDGELOAD_REQUIRE_CHROMIUM=1
 * (as in CI), where a missing browser fails the tests instead.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { describeWithBinary } from "../support/required-binaries.ts";

export const CHROMIUM = "/usr/bin/chromium";

export function findChromium(): { path: string } | { path: null; reason: string } {
  if (existsSync(CHROMIUM)) return { path: CHROMIUM };
  if (process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")) {
    try {
      execFileSync("apt-get", ["install", "-y", "-qq", "chromium"], { stdio: "ignore", timeout: 240_000 });
    } catch {
      try {
        execFileSync("sh", ["-c", "apt-get update -qq && apt-get install -y -qq chromium"], { stdio: "ignore", timeout: 300_000 });
      } catch (error) {
        return { path: null, reason: `chromium is not installed and apt-get could not install it (${(error as Error).message.split("\n")[0]})` };
      }
    }
    if (existsSync(CHROMIUM)) return { path: CHROMIUM };
  }
  return { path: null, reason: `chromium is not installed at ${CHROMIUM} (apt-get install chromium)` };
}

export function launchChromium(path: string): Promise<Browser> {
  return chromium.launch({ executablePath: path, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
}

/**
 * A suite that needs chromium: `body` gets its path. Without it the suite is skipped (its
 * name says why), or fails with EDGELOAD_REQUIRE_CHROMIUM=1. Declare fixtures inside `body`.
 */
export function describeWithChromium(name: string, body: (path: string) => void): void {
  describeWithBinary("CHROMIUM", name, findChromium(), body);
}
