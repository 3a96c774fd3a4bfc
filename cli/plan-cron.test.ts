/** `edgeload plan --cron`: a spec priced as a schedule, as POST /v1/schedules prices it. */
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { edgeloadInProcess } from "../test/support/cli-in-process.ts";

const edgeload = edgeloadInProcess();
beforeEach(() => vi.stubEnv("EDGELOAD_URL", ""));
afterEach(() => vi.unstubAllEnvs());

it("prices a spec per month on a cron: its runs in 30 days times one run's estimate", async () => {
  const json = await edgeload("plan", "examples/messaging-sla.json", "--cron", "0 */6 * * *", "--format", "json");
  expect(json.code).toBe(0);
  const { estimate, cost, schedule } = JSON.parse(json.stdout) as { estimate?: unknown; cost: { totalUsd: number }; schedule: Record<string, number | string> };
  expect(estimate).toBeUndefined();
  expect(schedule).toEqual({ cron: "0 */6 * * *", usdPerRun: cost.totalUsd, turnsPer30Days: 120, usdPer30Days: Math.round(cost.totalUsd * 120 * 100) / 100 });
  const table = await edgeload("plan", "examples/messaging-sla.json", "--cron", "0 */6 * * *");
  expect(table.stdout).toMatch(/scheduled 0 \*\/6 \* \* \* \(UTC\): 120 runs in 30 days, about \$\d+\.\d\d a month/);
});

it("refuses a bad cron with exit 104", async () => {
  const r = await edgeload("plan", "examples/messaging-sla.json", "--cron", "0 25 * * *");
  expect(r.code).toBe(104);
  expect(r.stderr).toContain('--cron: hour "25": 25 is outside 0-23');
});
