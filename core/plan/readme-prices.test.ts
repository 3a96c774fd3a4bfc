/**
 * The README's price table is the planner's answer for a spec in examples/: each row links
 * its spec and states the target latency it assumes, and its edgeload and k6 Cloud figures
 * are what `edgeload plan` prices it at, at that latency (caps raised as a deployment running
 * it would), so the table cannot drift from the model, nor hide the latency it depends on.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { parseRunSpec } from "../spec/run-spec.ts";
import { DEFAULT_LIMITS, planRun } from "./plan.ts";
import { preflight } from "./preflight.ts";
import { formatUsd } from "./run-cost.ts";
import { atLatency } from "./latency-costs.ts";

const ROOT = join(import.meta.dirname, "../..");
const RAISED = { ...DEFAULT_LIMITS, maxRatePerS: 1_000_000, maxShards: 30_000, maxTotalRequests: 600_000_000 };

/** The rows of the README's table under "Why, next to k6 Cloud": [spec file, latency ms, edgeload, k6 Cloud]. */
function priceRows(): Array<[string, number, string, string]> {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const table = readme.slice(readme.indexOf("| run | latency assumed | edgeload | k6 Cloud |"));
  const lines = table.split("\n").slice(2);
  const end = lines.findIndex((line) => !line.trim().startsWith("|"));
  return lines.slice(0, end < 0 ? lines.length : end).map((line) => {
    const cells = line.split("|").map((c) => c.trim());
    const spec = /\((examples\/[^)]+\.json)\)/.exec(cells[1]!)?.[1];
    if (!spec) throw new Error(`README price row names no spec in examples/: ${line}`);
    const latency = /^(\d+) ms$/.exec(cells[2]!)?.[1];
    if (!latency) throw new Error(`README price row states no latency ("30 ms"): ${line}`);
    return [spec, Number(latency), cells[3]!, cells[4]!];
  });
}

describe("the README's price table", () => {
  const rows = priceRows();

  it("has a row per priced example, the 1,000,000/s one at three latencies", () => {
    expect(rows.map(([spec, ms]) => `${spec} ${ms}`)).toEqual([
      "examples/userinfo-rps500.json 30",
      "examples/api-2k-1h.json 30",
      "examples/edge-35k.json 30",
      "examples/edge-1m.json 30",
      "examples/edge-1m.json 50",
      "examples/edge-1m.json 100",
    ]);
  });

  it.each(rows)("%s at %d ms: edgeload %s, k6 Cloud %s, as the planner prices it", (file, latencyMs, edgeload, k6Cloud) => {
    const parsed = parseRunSpec(JSON.parse(readFileSync(join(ROOT, file), "utf8")));
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const spec = atLatency(parsed.spec, latencyMs);
    const planned = planRun(spec, new ArrivalSchedule(spec.stages).total, RAISED);
    if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
    const { cost } = preflight(spec, planned.plan);
    expect(formatUsd(cost.totalUsd)).toBe(edgeload);
    expect(formatUsd(cost.k6Cloud.usd)).toBe(k6Cloud);
  });
});
