/**
 * The README's price table is the planner's answer for a spec in examples/: each row links
 * its spec, and its edgeload and k6 Cloud figures are what `edgeload plan` prices it at
 * (caps raised as a deployment running it would), so the table cannot drift from the model.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { parseRunSpec } from "../spec/run-spec.ts";
import { DEFAULT_LIMITS, planRun } from "./plan.ts";
import { preflight } from "./preflight.ts";
import { formatUsd } from "./run-cost.ts";

const ROOT = join(import.meta.dirname, "../..");
const RAISED = { ...DEFAULT_LIMITS, maxRatePerS: 1_000_000, maxShards: 8_000, maxTotalRequests: 600_000_000 };

/** The rows of the README's table under "Why, next to k6 Cloud": [spec file, edgeload, k6 Cloud]. */
function priceRows(): Array<[string, string, string]> {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const table = readme.slice(readme.indexOf("| run | edgeload | k6 Cloud |"));
  const lines = table.split("\n").slice(2);
  const end = lines.findIndex((line) => !line.trim().startsWith("|"));
  return lines.slice(0, end < 0 ? lines.length : end).map((line) => {
    const cells = line.split("|").map((c) => c.trim());
    const spec = /\((examples\/[^)]+\.json)\)/.exec(cells[1]!)?.[1];
    if (!spec) throw new Error(`README price row names no spec in examples/: ${line}`);
    return [spec, cells[2]!, cells[3]!];
  });
}

describe("the README's price table", () => {
  const rows = priceRows();

  it("has a row per priced example", () => {
    expect(rows.map(([spec]) => spec)).toEqual(["examples/userinfo-rps500.json", "examples/api-2k-1h.json", "examples/edge-35k.json", "examples/edge-1m.json"]);
  });

  it.each(rows)("%s: edgeload %s, k6 Cloud %s, as the planner prices it", (file, edgeload, k6Cloud) => {
    const parsed = parseRunSpec(JSON.parse(readFileSync(join(ROOT, file), "utf8")));
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const planned = planRun(parsed.spec, new ArrivalSchedule(parsed.spec.stages).total, RAISED);
    if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
    const { cost } = preflight(parsed.spec, planned.plan);
    expect(formatUsd(cost.totalUsd)).toBe(edgeload);
    expect(formatUsd(cost.k6Cloud.usd)).toBe(k6Cloud);
  });
});
