/**
 * Everything known about a run before any load: its plan's usage of the platform, whether
 * that stays within every documented limit, its estimated cost, and whether the cost is
 * within the spec's budget (`maxCost`). The API refuses a run over budget with this; the
 * CLI's `edgeload plan` prints it.
 */
import type { Plan } from "./plan.ts";
import type { Problem } from "../spec/input-problem.ts";
import { estimateCost, formatUsd, type RunCost } from "./run-cost.ts";
import { checkPlatformLimits, type LimitCheck } from "./limit-checks.ts";
import { estimateUsage, type RunUsage, type UsageOptions } from "./run-usage.ts";
import type { RunSpec } from "../spec/types.ts";
import { browserChecks, planBrowsers, withBrowserCost, type BrowserPlan } from "./browser-plan.ts";

export interface Preflight {
  readonly usage: RunUsage;
  readonly limits: readonly LimitCheck[];
  readonly cost: RunCost;
  /** Set when the estimate is above the spec's `maxCost`. */
  readonly overBudget: Problem | null;
  /** The Browser Run sessions of its browser scenarios (UsageOptions.browserScenarios); null when it has none. */
  readonly browsers: BrowserPlan | null;
}

export function preflight(spec: RunSpec, plan: Plan, options: UsageOptions = {}): Preflight {
  const usage = estimateUsage(spec, plan, options);
  const browsers = options.browserScenarios?.length ? planBrowsers(spec, plan, options.browserScenarios) : null;
  const cost = browsers ? withBrowserCost(estimateCost(usage, spec), browsers, usage.requests) : estimateCost(usage, spec);
  const budget = spec.maxCostUsd ?? null;
  const overBudget =
    budget !== null && cost.totalUsd > budget
      ? {
          field: "maxCost",
          detail: `the run's estimated cost is ${formatUsd(cost.totalUsd)} (prices of ${cost.pricingDate}), above its budget of ${formatUsd(budget)}; raise maxCost or make the run smaller`,
        }
      : null;
  const limits = [...checkPlatformLimits(spec, plan, usage), ...(browsers ? browserChecks(browsers) : [])];
  return { usage, limits, cost, overBudget, browsers };
}
