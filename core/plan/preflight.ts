/**
 * Everything known about a run before any load: its plan's usage of the platform, whether
 * that stays within every documented limit, its estimated cost, and whether the cost is
 * within the spec's budget (`maxCost`). The API refuses a run over budget with this; the
 * CLI's `edgeload plan` prints it. Both price a run's browser scenarios here, from its spec
 * (browser-plan.ts browserScenariosOf), so the two cannot disagree.
 */
import type { Plan } from "./plan.ts";
import type { Problem } from "../spec/input-problem.ts";
import { estimateCost, formatUsd, type RunCost } from "./run-cost.ts";
import { checkPlatformLimits, type LimitCheck } from "./limit-checks.ts";
import { estimateUsage, type RunUsage, type UsageOptions } from "./run-usage.ts";
import type { RunSpec } from "../spec/types.ts";
import { browserChecks, browserCostLines, withBrowserCost } from "./browser-plan.ts";
import { browserScenariosOf, planBrowsers, type BrowserPlan } from "./browser-sessions.ts";

export interface Preflight {
  readonly usage: RunUsage;
  readonly limits: readonly LimitCheck[];
  readonly cost: RunCost;
  /** Set when the estimate is above the spec's `maxCost`. */
  readonly overBudget: Problem | null;
  /** The Browser Run sessions of its browser scenarios (browserScenariosOf); null when it has none. */
  readonly browsers: BrowserPlan | null;
}

export function preflight(spec: RunSpec, plan: Plan, options: UsageOptions = {}): Preflight {
  const usage = estimateUsage(spec, plan, options);
  const names = browserScenariosOf(spec);
  const browsers = names.length ? planBrowsers(spec, plan, names) : null;
  const cost = browsers ? withBrowserCost(estimateCost(usage, spec), browsers, usage.requests) : estimateCost(usage, spec);
  const budget = spec.maxCostUsd ?? null;
  const overBudget = budget !== null && cost.totalUsd > budget ? { field: "maxCost", detail: overBudgetDetail(cost, budget, browsers) } : null;
  const limits = [...checkPlatformLimits(spec, plan, usage), ...(browsers ? browserChecks(browsers) : [])];
  return { usage, limits, cost, overBudget, browsers };
}

/** Why the run is over its budget, naming its browsers' part of the cost when it has browsers. */
function overBudgetDetail(cost: RunCost, budgetUsd: number, browsers: BrowserPlan | null): string {
  const browserUsd = browsers ? browserCostLines(browsers).reduce((a, l) => a + l.usd, 0) : 0;
  const ofWhich = browsers
    ? `, of which Browser Run ${formatUsd(browserUsd)} (${browsers.sessions.length} browsers, ${browsers.browserHours.toFixed(2)} browser-hours, ${browsers.peakConcurrent} at once)`
    : "";
  return `the run's estimated cost is ${formatUsd(cost.totalUsd)}${ofWhich} (prices of ${cost.pricingDate}), above its budget of ${formatUsd(budgetUsd)}; raise maxCost or make the run smaller`;
}
