/**
 * A k6/browser script under `edgeload run` on the local stack, as a user runs one: its shard
 * drives a real Chromium (Debian's, through the local Browser Run binding and the shim
 * cli/local-chromium.ts writes) on the local target's sign-in page (workers/target/
 * sign-in-page.ts): goto, fill, type, click, wait for a text, check it, a screenshot, an
 * evaluate. Its checks pass, k6's web vitals are in the summary, and a threshold on
 * browser_web_vital_lcp passes; the same page held 2.5 s (`?ms=`) fails it, exit 99.
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { describeWithChromium } from "./chromium.ts";
import { runCli } from "./cli-process.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

const SCRIPT = `
import { browser } from "k6/browser";
import { check } from "k6";

export const options = {
  scenarios: {
    ui: { executor: "shared-iterations", vus: 1, iterations: 2, maxDuration: "60s", options: { browser: { type: "chromium" } } },
  },
  thresholds: { checks: ["rate==1"], browser_web_vital_lcp: ["p(95)<2000"] },
};

export default async function () {
  const page = await browser.newPage();
  try {
    const res = await page.goto(__ENV.BASE_URL + "/app/sign-in?ms=" + (__ENV.HOLD_MS || 0));
    check(res, { "the page answered 200": (r) => r.status() === 200 });
    await page.locator("#email").fill("vu@example.com");
    await page.locator("#password").type("secret");
    await page.locator("#submit").click();
    await page.waitForSelector("#status:not(:empty)");
    check(await page.locator("#status").textContent(), { "signed in": (t) => t === "Signed in as vu@example.com" });
    check(await page.evaluate(() => document.title), { "the page's title": (t) => t === "Sign in" });
    const shot = await page.screenshot();
    check(new Uint8Array(shot), { "a PNG screenshot": (b) => b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 });
  } finally {
    await page.close();
  }
}
`;

type Trend = {
  count?: number;
  avg?: number;
  min?: number;
  max?: number;
  "p(95)"?: number;
  passes?: number;
  fails?: number;
  thresholds?: Record<string, boolean>;
};
type Exported = { metrics: Record<string, Trend> };

describeWithChromium("a k6/browser script under edgeload run", () => {
  const fixture = useLocalStack("edgeload-browser-script-");
  let script: string;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "edgeload-browser-script-"));
    script = join(dir, "sign-in.js");
    await writeFile(script, SCRIPT);
  });

  let runs = 0;
  async function underEdgeload(env: Record<string, string>): Promise<{ code: number; metrics: Exported["metrics"]; output: string }> {
    const out = join(dir, `summary-${++runs}.json`);
    const vars = { BASE_URL: fixture.stack.targetUrl, ...env };
    const r = await runCli(["run", script, "--quiet", "--summary-export", out, ...Object.entries(vars).flatMap(([k, v]) => ["-e", `${k}=${v}`])], {
      EDGELOAD_URL: fixture.stack.apiUrl,
      EDGELOAD_TOKEN: fixture.stack.token,
    });
    const output = r.stdout + r.stderr;
    const summary = await readFile(out, "utf8").catch(() => {
      throw new Error(`edgeload exited ${r.code} without its summary:\n${output}`);
    });
    return { code: r.code, metrics: (JSON.parse(summary) as Exported).metrics, output };
  }

  it("fills and submits the sign-in form in Chromium, with its checks passed and web vitals in the summary", async () => {
    const run = await underEdgeload({});
    expect(run.code, run.output).toBe(0);
    const m = run.metrics;
    // 2 iterations × 4 checks.
    expect({ passes: m.checks?.passes, fails: m.checks?.fails }, run.output).toEqual({ passes: 8, fails: 0 });
    // Each vital measured in the page, as trends (k6's export gives a trend's figures, not its count).
    for (const vital of ["browser_web_vital_ttfb", "browser_web_vital_fcp", "browser_web_vital_lcp"]) {
      expect(m[vital]?.min, vital).toBeGreaterThan(0);
      expect(m[vital]?.max, vital).toBeLessThan(2000);
    }
    // The first paint and the largest come after the first byte.
    expect(m.browser_web_vital_lcp!.min).toBeGreaterThanOrEqual(m.browser_web_vital_ttfb!.min!);
    expect(m.browser_web_vital_lcp!.thresholds).toEqual({ "p(95)<2000": false });
    // The page's own request (one per iteration) was timed, and none failed (a Rate's passes are its trues).
    expect(m.browser_http_req_duration?.avg).toBeGreaterThan(0);
    expect({ failed: m.browser_http_req_failed?.passes, succeeded: m.browser_http_req_failed?.fails }).toEqual({ failed: 0, succeeded: 2 });
  }, 120_000);

  it("fails the LCP threshold when the sign-in page is slow, exit 99", async () => {
    const run = await underEdgeload({ HOLD_MS: "2500" });
    expect(run.code, run.output).toBe(99);
    const m = run.metrics;
    expect(m.browser_web_vital_lcp!.thresholds).toEqual({ "p(95)<2000": true });
    expect(m.browser_web_vital_lcp!["p(95)"]).toBeGreaterThanOrEqual(2500);
    expect(m.checks?.fails).toBe(0);
  }, 120_000);
});
