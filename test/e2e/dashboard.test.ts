/**
 * The live dashboard in real Chromium (Debian's, through playwright-core) against the local
 * stack: a page refused without a session, a run drawn live (its series grow while it goes,
 * a page opened mid-run starts from the history) whose final figures equal the summary
 * API's, and Abort ending a run within 5 s.
 *
 * Screenshots go to .cache/e2e-artifacts/; EDGELOAD_UPDATE_SCREENSHOT=1 also refreshes the
 * README's (dashboard/screenshot.png).
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../cli/paths.ts";
import { describeWithChromium, launchChromium } from "./chromium.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

const ARTIFACTS = join(PROJECT_ROOT, ".cache/e2e-artifacts");
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

interface DashboardState {
  points: Array<{ t: number; regions: Record<string, { p95: number | null }>; p95: number | null }>;
  status: { status: string } | null;
  summary: unknown;
  region: string;
  charts: Record<string, { data: Array<Array<number | null>> }>;
}
declare global {
  interface Window {
    edgeloadDashboard: DashboardState;
  }
}

/** A screenshot that is a real, non-empty PNG. */
async function screenshot(page: Page, name: string): Promise<Buffer> {
  await mkdir(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, name);
  await page.screenshot({ path, fullPage: true });
  const png = await readFile(path);
  expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
  expect(png.length).toBeGreaterThan(10_000);
  return png;
}

describeWithChromium("dashboard in Chromium", (chromiumPath) => {
  const fixture = useLocalStack("edgeload-dashboard-");
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium(chromiumPath);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("refuses a page, its stream and its abort without a session", async () => {
    const { apiUrl } = fixture.stack;
    const page = await browser.newPage();
    try {
      const response = await page.goto(`${apiUrl}/v1/runs/r-abcdefgh-12345678/dashboard`);
      expect(response?.status()).toBe(401);
      await expect(page.getByTestId("denied").textContent()).resolves.toContain("needs a dashboard session");
      // A forged or tampered view link is refused the same way, and sets no cookie.
      const forged = await page.goto(`${apiUrl}/?view=all.9999999999.${"A".repeat(43)}`);
      expect(forged?.status()).toBe(401);
      expect(await page.context().cookies()).toEqual([]);
    } finally {
      await page.close();
    }
    expect((await fetch(`${apiUrl}/`)).status).toBe(401);
    expect((await fetch(`${apiUrl}/v1/runs/r-abcdefgh-12345678/live`)).status).toBe(401);
    expect((await fetch(`${apiUrl}/v1/runs/r-abcdefgh-12345678/abort`, { method: "POST" })).status).toBe(401);
  });

  it("draws a run live, opens mid-run from the history, and ends on the summary's figures", async () => {
    const { client, stack } = fixture;
    const run = await client.createRun({
      name: "dashboard e2e",
      target: stack.targetUrl,
      steps: [{ name: "delay", path: "/delay?ms=5", record: { delay_ms: "duration", delay_ok: "success" } }],
      metrics: { delay_ms: { type: "trend" }, delay_ok: { type: "rate" } },
      executor: "constant-arrival-rate",
      rate: 40,
      duration: "8s",
      shards: 2,
      regions: ["wnam", "enam"],
      thresholds: { http_req_duration: ["p(95)<2000"], delay_ok: ["rate>0.9"] },
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      const link = await client.dashboardLink({ run: run.id });
      await page.goto(link.url);
      // The grant was traded for a cookie and dropped from the address.
      expect(page.url()).toBe(`${stack.apiUrl}/v1/runs/${run.id}/dashboard`);
      expect((await context.cookies()).map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([[`edgeload_view_run_${run.id}`, true, "Strict"]]);

      await page.waitForFunction(() => window.edgeloadDashboard.points.length >= 2, undefined, { timeout: 20_000 });
      const before = await page.evaluate(() => window.edgeloadDashboard.charts.rate!.data[0]!.length);
      await page.waitForFunction((n) => window.edgeloadDashboard.charts.rate!.data[0]!.length > n, before, { timeout: 10_000 });
      const lengths = await page.evaluate(() => Object.values(window.edgeloadDashboard.charts).map((c) => c.data[0]!.length));
      expect(new Set(lengths).size).toBe(1); // every chart drew the same windows

      // A second page opened mid-run starts from the history, window 0 onwards.
      const late = await context.newPage();
      await late.goto(`${stack.apiUrl}/v1/runs/${run.id}/dashboard`);
      await late.waitForFunction(() => window.edgeloadDashboard.points.length > 0, undefined, { timeout: 10_000 });
      expect(await late.evaluate(() => window.edgeloadDashboard.points[0]!.t)).toBe(0);
      await late.close();

      // The region selector narrows the latency chart to that region's own percentiles.
      await page.waitForFunction(() => document.querySelectorAll("#region option").length === 3, undefined, { timeout: 10_000 });
      await page.selectOption("#region", "enam");
      const [p95Enam, shown] = await page.evaluate(() => [
        window.edgeloadDashboard.points.map((p) => p.regions.enam?.p95 ?? null),
        window.edgeloadDashboard.charts.latency!.data[2],
      ]);
      expect(shown).toEqual(p95Enam);
      await page.selectOption("#region", "");
      await screenshot(page, "dashboard-live.png");

      // After the run: the final figures, exactly the summary API's.
      await page.getByTestId("final").waitFor({ state: "visible", timeout: 40_000 });
      const summary = (await client.summary(run.id)) as unknown as {
        metrics: Record<string, Record<string, number>>;
        edgeload: { status: string; achievedRatePerS: number };
      };
      const shownValue = async (name: string) => page.getByTestId(`final-${name}`).getAttribute("data-value");
      expect(await shownValue("status")).toBe(summary.edgeload.status);
      expect(await shownValue("requests")).toBe(String(summary.metrics.http_reqs!.count));
      expect(await shownValue("failed-rate")).toBe(String(summary.metrics.http_req_failed!.value));
      expect(await shownValue("achieved-rate")).toBe(String(summary.edgeload.achievedRatePerS));
      expect(await shownValue("p50-ms")).toBe(String(summary.metrics.http_req_duration!.med));
      expect(await shownValue("p95-ms")).toBe(String(summary.metrics.http_req_duration!["p(95)"]));
      expect(await shownValue("p99-ms")).toBe(String(summary.metrics.http_req_duration!["p(99)"]));
      // Shown to the clock's step (workerd's whole milliseconds), never "142.848".
      expect(await page.getByTestId("final-p99-ms").textContent()).toBe(summary.metrics.http_req_duration!["p(99)"]!.toFixed(0));
      await expect(page.getByTestId("tile-p95").locator("strong").textContent()).resolves.toMatch(/^\d+ ms$/);
      expect(await shownValue("dropped")).toBe(String(summary.metrics.dropped_iterations!.count));
      expect(summary.metrics.http_reqs!.count).toBe(320);
      await expect(page.getByTestId("status").textContent()).resolves.toBe("passed");
      // Every window arrived, and they add up to the run's requests.
      const drawn = await page.evaluate(() => window.edgeloadDashboard.points.reduce((sum, p) => sum + (p as unknown as { requests: number }).requests, 0));
      expect(drawn).toBe(320);
      // Verdicts, custom metrics and shard health are on the page.
      const thresholds = await page.locator("#thresholds tbody tr").allTextContents();
      expect(thresholds).toHaveLength(2);
      expect(thresholds.every((row) => row.endsWith("pass"))).toBe(true);
      const custom = await page.locator("#custom tbody tr td:first-child").allTextContents();
      expect(custom).toEqual(["delay_ms", "delay_ok"]);
      expect(await page.locator("#shards tbody tr").count()).toBe(2);
      const png = await screenshot(page, "dashboard-final.png");
      if (process.env.EDGELOAD_UPDATE_SCREENSHOT === "1") await writeFile(join(PROJECT_ROOT, "dashboard/screenshot.png"), png);
    } finally {
      await context.close();
    }
  });

  it("Abort ends the run within 5 s; the runs list shows it", async () => {
    const { client, stack } = fixture;
    const run = await client.createRun({
      name: "dashboard abort",
      target: stack.targetUrl,
      steps: [{ path: "/delay?ms=5" }],
      executor: "constant-arrival-rate",
      rate: 20,
      duration: "60s",
      shards: 2,
      regions: ["wnam", "enam"],
    });
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto((await client.dashboardLink({ run: run.id, abort: true })).url);
      await page.waitForFunction(() => window.edgeloadDashboard.status?.status === "running", undefined, { timeout: 15_000 });
      const clicked = Date.now();
      await page.getByTestId("abort").click();
      await page.waitForFunction(() => window.edgeloadDashboard.status?.status === "aborted", undefined, { timeout: 5_000 });
      expect(Date.now() - clicked).toBeLessThan(5_000);
      expect((await client.getRun(run.id)).status).toBe("aborted");
      await expect(page.getByTestId("status").textContent()).resolves.toBe("aborted");

      // The run's session reads that run's page only: the runs list takes a link of its own.
      await page.goto(`${stack.apiUrl}/`);
      await expect(page.getByTestId("denied").textContent()).resolves.toContain("this page needs its own link");
      await page.goto((await client.dashboardLink()).url);
      const first = page.locator("#runs tbody tr").first();
      await first.waitFor({ timeout: 10_000 });
      await expect(first.locator("td").nth(2).textContent()).resolves.toBe("aborted");
      await expect(first.locator("a").getAttribute("href")).resolves.toBe(`/v1/runs/${run.id}/dashboard`);
    } finally {
      await context.close();
    }
  });
});
