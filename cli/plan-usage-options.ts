/**
 * What `edgeload plan` prices from the deployment's wrangler.toml besides its caps (issue 49):
 * the share of invocations Workers Logs keeps (`[observability] head_sampling_rate`; none when
 * observability is off, every invocation when it is on without a rate) and how long D1 keeps a
 * run's rows (`[vars] RESULTS_RETENTION_DAYS`, else DEFAULT_RESULTS_RETENTION_DAYS,
 * core/plan/cloudflare-pricing.ts); and what the command is told of a browser script's
 * screenshots (`--screenshots`).
 */
import { DEFAULT_RESULTS_RETENTION_DAYS } from "../core/plan/cloudflare-pricing.ts";
import type { UsageOptions } from "../core/plan/run-usage.ts";
import { CliError, EXIT } from "./connection.ts";

/** The parts of a wrangler config the price reads (read loosely: wrangler-config.ts types the rest). */
interface PricedConfig {
  readonly observability?: { readonly enabled?: unknown; readonly head_sampling_rate?: unknown };
  readonly vars?: Readonly<Record<string, string>>;
}

/** The Workers Logs sampling and results retention `config` sets; `configPath` names it in an error. */
export function usageOptionsOf(config: PricedConfig, configPath: string): Pick<UsageOptions, "logsSamplingRate" | "resultsRetentionDays"> {
  return { logsSamplingRate: logsSamplingOf(config, configPath), resultsRetentionDays: retentionDaysOf(config, configPath) };
}

function logsSamplingOf(config: PricedConfig, configPath: string): number {
  const o = config.observability;
  if (!o || o.enabled === false) return 0; // no Workers Logs, no events
  if (o.head_sampling_rate === undefined) return 1; // Cloudflare's default: every invocation
  const rate = o.head_sampling_rate;
  if (typeof rate !== "number" || !(rate >= 0 && rate <= 1))
    throw new CliError(`${configPath}: [observability] head_sampling_rate must be a number from 0 to 1, not ${JSON.stringify(rate)}`, EXIT.invalidConfig);
  return rate;
}

function retentionDaysOf(config: PricedConfig, configPath: string): number {
  const raw = config.vars?.RESULTS_RETENTION_DAYS;
  if (raw === undefined) return DEFAULT_RESULTS_RETENTION_DAYS;
  const days = Number(raw);
  if (!Number.isInteger(days) || days < 1)
    throw new CliError(`${configPath}: RESULTS_RETENTION_DAYS must be a whole number of days above 0, not "${raw}"`, EXIT.invalidConfig);
  return days;
}

/**
 * `--screenshots N`: the screenshots a k6/browser script takes over the run, priced as R2
 * writes and storage for the retention (the script decides how many; absent, none).
 */
export function screenshotsOption(text: string | undefined): number {
  if (text === undefined) return 0;
  const n = Number(text);
  if (text.trim() === "" || !Number.isInteger(n) || n < 0)
    throw new CliError(`--screenshots: a whole number of screenshots, 0 or more, not "${text}"`, EXIT.invalidConfig);
  return n;
}
