/**
 * `edgeload plan` of a k6/browser script (issue 52): a 50-VU, 10-minute browser scenario is
 * planned with its Browser Run sessions, their cost lines and the account's limits, as text
 * and as JSON; the same script without the browser option has none of them.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { edgeloadInProcess } from "../test/support/cli-in-process.ts";

const edgeload = edgeloadInProcess();
// No deployment named: nothing is contacted.
beforeEach(() => vi.stubEnv("EDGELOAD_URL", ""));
afterEach(() => vi.unstubAllEnvs());

/** A script of one 50-VU, 10-minute scenario `ui`, a browser one when `browser`. */
function script(browser: boolean): string {
  const option = browser ? `, options: { browser: { type: "chromium" } }` : "";
  const file = join(mkdtempSync(join(tmpdir(), "edgeload-plan-browser-")), "browser50.js");
  writeFileSync(
    file,
    `import { browser } from "k6/browser";
export const options = { scenarios: { ui: { executor: "constant-vus", vus: 50, duration: "10m"${option} } } };
export default async function () {
  const page = await browser.newPage();
  try { await page.goto(__ENV.BASE_URL); } finally { await page.close(); }
}
`,
  );
  return file;
}

describe("edgeload plan of a k6/browser script", () => {
  it("prints the browsers, their two cost lines and the account's Browser Run limits", async () => {
    const { code, stdout } = await edgeload("plan", script(true), "-e", "BASE_URL=http://127.0.0.1:9");
    expect(code).toBe(0);
    // 12 shards at the default 50 ms: 12 sessions 1 s apart, Σ (600 − i) s for i = 0…11 = 7,134 s = 1.98 h.
    expect(stdout).toContain(
      "browsers: 12 Browser Run sessions (one per shard of a browser scenario, up to 5 VUs' contexts each), started at least 1000 ms apart (the last at 11 s), 1.98 browser-hours, 12 at once at the peak",
    );
    expect(stdout).toMatch(/Browser Run browser hours +2\.0 browser-hours +\$0\.18/);
    expect(stdout).toMatch(/Browser Run concurrent browsers +12 browsers .* +\$0\.80/);
    expect(stdout).toMatch(/concurrent browsers \(account\) +12 +120 +ok/);
    expect(stdout).toMatch(/new browsers in any second \(account\) +1 +1 +ok/);
  });

  it("gives the same figures in --format json", async () => {
    const { code, stdout } = await edgeload("plan", script(true), "-e", "BASE_URL=http://127.0.0.1:9", "--format", "json");
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out.browsers.peakConcurrent).toBe(12);
    expect(out.browsers.browserHours).toBeCloseTo(7134 / 3600, 9);
    const usd = (item: string) => out.cost.lines.find((l: { item: string }) => l.item === item).usd;
    expect(usd("Browser Run concurrent browsers")).toBeCloseTo((12 * 2) / 30, 9);
  });

  it("has no browser lines for the same load without the browser option", async () => {
    const { code, stdout } = await edgeload("plan", script(false), "-e", "BASE_URL=http://127.0.0.1:9");
    expect(code).toBe(0);
    expect(stdout).not.toContain("Browser Run");
  });
});
