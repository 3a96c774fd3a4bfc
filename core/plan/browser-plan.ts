/**
 * What a run's Browser Run sessions (browser-sessions.ts) cost, and the account limits they
 * meet: browser-hours and concurrency as bill lines, the concurrent and new-browser limits and
 * a browser's memory as rows of the limits table.
 */
import { BROWSER_RUN_PRICES, DAYS_PER_BILLED_MONTH } from "./cloudflare-pricing.ts";
import { BROWSER_RUN_LIMITS } from "./platform-limits.ts";
import { VUS_PER_BROWSER, type BrowserPlan } from "./browser-sessions.ts";
import type { CostLine, RunCost } from "./run-cost.ts";
import type { LimitCheck } from "./limit-checks.ts";

/** The account's Browser Run limits and a browser's memory, against the plan's sessions. */
export function browserChecks(b: BrowserPlan): LimitCheck[] {
  const check = (limit: string, value: number, max: number, note: string): LimitCheck => ({ level: "Browser Run", limit, value, max, ok: value <= max, note });
  const last = Math.max(0, ...b.sessions.map((s) => s.startsAtMs - s.wantedAtMs)) / 1000;
  return [
    check(
      "concurrent browsers (account)",
      b.peakConcurrent,
      BROWSER_RUN_LIMITS.concurrentBrowsersPerAccount,
      "one session per shard of a browser scenario; fewer shards hold more VUs each (up to the VUs per browser below)",
    ),
    check(
      "new browsers in any second (account)",
      b.mostNewPerS,
      BROWSER_RUN_LIMITS.newBrowsersPerS,
      `shards start their sessions at least ${1000 / BROWSER_RUN_LIMITS.newBrowsersPerS} ms apart; the last waits ${last} s for its turn`,
    ),
    check(
      "VUs per browser (contexts)",
      b.mostVusPerBrowser,
      VUS_PER_BROWSER,
      `each VU keeps a context open in its shard's one session; give the scenario at least ${b.shardsNeeded} shards (core/plan/browser-sessions.ts VUS_PER_BROWSER)`,
    ),
  ];
}

/**
 * Browser hours at their price, and the run's peak of concurrent browsers as the part of the
 * month's average of daily peaks one day adds (peak / 30), at the concurrency price.
 */
export function browserCostLines(b: BrowserPlan): CostLine[] {
  return [
    { item: "Browser Run browser hours", quantity: b.browserHours, unit: "browser-hours", usd: b.browserHours * BROWSER_RUN_PRICES.browserHour },
    {
      item: "Browser Run concurrent browsers",
      quantity: b.peakConcurrent,
      unit: `browsers (a day's peak, 1/${DAYS_PER_BILLED_MONTH} of the monthly average)`,
      usd: (b.peakConcurrent * BROWSER_RUN_PRICES.concurrentBrowserMonth) / DAYS_PER_BILLED_MONTH,
    },
  ];
}

/** A run's cost with its browser lines added, per million requests recounted as estimateCost counts it. */
export function withBrowserCost(cost: RunCost, b: BrowserPlan, requests: number): RunCost {
  const lines = [...cost.lines, ...browserCostLines(b)];
  const totalUsd = lines.reduce((a, l) => a + l.usd, 0);
  return { ...cost, lines, totalUsd, usdPerMillionRequests: totalUsd / (Math.max(1, requests) / 1e6) };
}
