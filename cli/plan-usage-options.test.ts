/**
 * What `edgeload plan` prices from the deployment's wrangler.toml (issue 49): Workers Logs'
 * sampling and D1's results retention, each refused with the config's name when it is not a
 * value Cloudflare or the coordinator would take. The project's own wrangler.toml samples as
 * the planner's default does, so the API's estimate (which has no config) prices the same.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_RESULTS_RETENTION_DAYS, WORKERS_LOGS_HEAD_SAMPLING_RATE } from "../core/plan/cloudflare-pricing.ts";
import { CliError } from "./connection.ts";
import { PROJECT_ROOT } from "./paths.ts";
import { screenshotsOption, usageOptionsOf } from "./plan-usage-options.ts";
import { readWranglerConfig } from "./wrangler-config.ts";

describe("usageOptionsOf", () => {
  it("the project's wrangler.toml samples Workers Logs at the planner's default, and keeps results the default 90 days", () => {
    const path = join(PROJECT_ROOT, "wrangler.toml");
    expect(usageOptionsOf(readWranglerConfig(path), path)).toEqual({
      logsSamplingRate: WORKERS_LOGS_HEAD_SAMPLING_RATE,
      resultsRetentionDays: DEFAULT_RESULTS_RETENTION_DAYS,
    });
    expect(WORKERS_LOGS_HEAD_SAMPLING_RATE).toBe(0.01);
  });

  it.each([
    // [config, logs sampling priced, retention days priced]
    // No [observability]: Workers Logs is off, no events.
    [{}, 0, 90],
    // On without a rate: Cloudflare logs every invocation.
    [{ observability: { enabled: true } }, 1, 90],
    [{ observability: { enabled: false, head_sampling_rate: 0.5 } }, 0, 90],
    [{ observability: { enabled: true, head_sampling_rate: 0.1 } }, 0.1, 90],
    // The deployment keeps results a week.
    [{ vars: { RESULTS_RETENTION_DAYS: "7" } }, 0, 7],
  ])("%j → logs %d, %d days", (config, logs, days) => {
    expect(usageOptionsOf(config, "w.toml")).toEqual({ logsSamplingRate: logs, resultsRetentionDays: days });
  });

  it.each([
    [{ observability: { enabled: true, head_sampling_rate: 2 } }, "w.toml: [observability] head_sampling_rate must be a number from 0 to 1, not 2"],
    [{ observability: { enabled: true, head_sampling_rate: "all" } }, 'w.toml: [observability] head_sampling_rate must be a number from 0 to 1, not "all"'],
    [{ vars: { RESULTS_RETENTION_DAYS: "0" } }, 'w.toml: RESULTS_RETENTION_DAYS must be a whole number of days above 0, not "0"'],
    [{ vars: { RESULTS_RETENTION_DAYS: "ninety" } }, 'w.toml: RESULTS_RETENTION_DAYS must be a whole number of days above 0, not "ninety"'],
  ])("refuses %j naming the setting", (config, message) => {
    expect(() => usageOptionsOf(config, "w.toml")).toThrow(CliError);
    expect(() => usageOptionsOf(config, "w.toml")).toThrow(message);
  });
});

describe("--screenshots", () => {
  it.each([
    // [flag, screenshots priced]
    // Absent: the plan counts none.
    [undefined, 0],
    ["0", 0],
    // A browser script taking one screenshot an iteration, 2,000 iterations.
    ["2000", 2_000],
  ])("%j → %d", (text, n) => {
    expect(screenshotsOption(text)).toBe(n);
  });

  it.each(["-1", "1.5", "many", ""])("refuses %j naming the flag", (text) => {
    expect(() => screenshotsOption(text)).toThrow(`--screenshots: a whole number of screenshots, 0 or more, not "${text}"`);
  });
});
