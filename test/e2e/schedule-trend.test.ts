/**
 * A schedule's trend page in real Chromium against the local stack: two scheduled runs
 * (the cron trigger fired through Miniflare), the second against a target made slower in
 * between, drawn as points with their verdicts, a row opening its run's dashboard, and the
 * regressed run's charts laid over its baseline's (the compare page).
 *
 * The screenshot goes to .cache/e2e-artifacts/; EDGELOAD_UPDATE_SCREENSHOT=1 also refreshes
 * docs/schedules.md's (dashboard/schedule-trend.png).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../cli/paths.ts";
import type { RunView } from "../../core/run/protocol.ts";
import { describeWithChromium, launchChromium } from "./chromium.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

describeWithChromium("a schedule's trend page in Chromium", (chromiumPath) => {
  const fixture = useLocalStack("edgeload-trend-");
  let browser: Browser;
  // A loopback target whose delay the test raises: a release that got slower.
  let delayMs = 5;
  const target = createServer((_request, response) => {
    setTimeout(() => response.end(JSON.stringify({ ok: true })), delayMs);
  });

  beforeAll(async () => {
    browser = await launchChromium(chromiumPath);
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    await browser?.close();
    target.closeAllConnections();
    await new Promise((resolve) => target.close(resolve));
  });

  it("draws each run with its figures and verdict, and opens a run from its row", async () => {
    const { client, stack } = fixture;
    const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    const created = await client.schedules<{ id: string; nextDueAt: string }>("POST", "", "", {
      name: "checkout nightly",
      cron: "* * * * *",
      spec: {
        name: "checkout",
        target: targetUrl,
        steps: [{ path: "/checkout" }],
        executor: "constant-arrival-rate",
        rate: 30,
        duration: "3s",
        shards: 1,
        regions: ["weur"],
      },
    });
    const dueMs = Date.parse(created.nextDueAt);
    const ended = async () => {
      const { turns } = await client.schedules<{ turns: { runId: string | null }[] }>("GET", created.id);
      const runId = turns.find((t) => t.runId)!.runId!;
      let view: RunView;
      do {
        await new Promise((r) => setTimeout(r, 250));
        view = await client.getRun(runId);
      } while (!["passed", "failed", "inconclusive", "aborted", "error"].includes(view.status));
      return runId;
    };
    await stack.tick(dueMs);
    const first = await ended();
    delayMs = 40;
    await stack.tick(dueMs + 60_000);
    const second = await ended();
    expect(second).not.toBe(first);
    await client.schedules("POST", created.id, "pause");
    await stack.tick(dueMs + 120_000);

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      await page.goto((await client.dashboardLink({ schedule: created.id })).url);
      await page.waitForSelector('#schedule-meta[data-runs="2"]', { timeout: 15_000 });
      expect(await page.textContent("#schedule-name")).toBe("checkout nightly");
      expect(await page.textContent('[data-testid="state"]')).toBe("paused");
      // Newest first: the slower run regressed against the first, which passed.
      expect(await page.$$eval('[data-testid="verdict"]', (els) => els.map((e) => e.textContent))).toEqual(["regressed", "passed"]);
      const p95s = await page.$$eval("#turns tbody tr", (rows) => rows.map((r) => Number.parseFloat((r as HTMLTableRowElement).cells[4]!.textContent!)));
      expect(p95s[0]!).toBeGreaterThan(p95s[1]! + 30);
      // Three charts drawn, one point per run each.
      expect(await page.$$eval(".charts canvas", (els) => els.length)).toBe(3);

      await mkdir(join(PROJECT_ROOT, ".cache/e2e-artifacts"), { recursive: true });
      const png = await page.screenshot({ path: join(PROJECT_ROOT, ".cache/e2e-artifacts/schedule-trend.png"), fullPage: true });
      expect(png.length).toBeGreaterThan(10_000);
      if (process.env.EDGELOAD_UPDATE_SCREENSHOT === "1") await writeFile(join(PROJECT_ROOT, "dashboard/schedule-trend.png"), png);

      // The regressed run against its baseline: the row links the overlay, a page with a link of its own.
      await page.click('[data-testid="compare"]');
      await page.waitForURL(`${stack.apiUrl}/v1/runs/${first}/compare/${second}/dashboard`);
      await expect(page.getByTestId("denied").textContent()).resolves.toContain("this page needs its own link");
      await page.goto((await client.dashboardLink({ compare: [first, second] })).url);
      await page.waitForSelector('#metrics tr[data-metric="p95"]', { timeout: 15_000 });
      expect(await page.textContent('[data-testid="verdict"]')).toBe("regressed");
      expect(await page.$eval('#metrics tr[data-metric="p50"]', (r) => (r as HTMLTableRowElement).cells[5]!.textContent)).toBe("regressed");
      expect(await page.$$eval(".charts canvas", (els) => els.length)).toBe(3);
      const overlayPng = await page.screenshot({ path: join(PROJECT_ROOT, ".cache/e2e-artifacts/compare-overlay.png"), fullPage: true });
      expect(overlayPng.length).toBeGreaterThan(10_000);

      // A run's row links to its page; the overlay's session reads both of its runs' pages, so it opens.
      await page.goto(`${stack.apiUrl}/v1/schedules/${created.id}/dashboard`);
      await page.click(`#turns a[href="/v1/runs/${second}/dashboard"]`);
      await page.waitForURL(`${stack.apiUrl}/v1/runs/${second}/dashboard`);
      await page.waitForSelector(`body[data-run-id="${second}"]`, { timeout: 10_000 });
    } finally {
      await context.close();
    }
  });
});
