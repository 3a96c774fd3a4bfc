/**
 * `edgeload plan` of a run over the deployment's caps: the whole plan is printed all the
 * same (planned without the caps), then each cap it needs with the command that raises it;
 * the same caps given as `--var` plan it within them, and every platform limit.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_LIMITS, planRun } from "../core/plan/plan.ts";
import { ArrivalSchedule } from "../core/schedule/arrival-schedule.ts";
import { parseRunSpec } from "../core/spec/run-spec.ts";
import { edgeloadInProcess } from "../test/support/cli-in-process.ts";
import { capsNeeded } from "./plan-command.ts";

const edgeload = edgeloadInProcess();
// No deployment named: nothing is contacted.
beforeEach(() => vi.stubEnv("EDGELOAD_URL", ""));
afterEach(() => vi.unstubAllEnvs());

describe("edgeload plan over the deployment's caps", () => {
  it("prints the whole plan, then each cap it needs and the command that raises it, and exits 104", async () => {
    const { code, stdout, stderr } = await edgeload("plan", "examples/edge-1m.json");
    expect(code).toBe(104);
    expect(stdout).toContain("shards: 7,146 (wnam 1,191,");
    expect(stdout).toContain("tree: 7,146 shards → 72 aggregators (≤ 100 children each) → 6 region roots → coordinator");
    expect(stdout).toContain("estimated cost");
    expect(stdout).toMatch(/MAX_RATE_PER_S +needs 1,000,000, the deployment allows 40,000/);
    expect(stdout).toMatch(/MAX_SHARDS +needs 7,146, the deployment allows 256/);
    expect(stdout).toContain("echo 1000000 | npx wrangler secret put MAX_RATE_PER_S");
    expect(stdout).toContain("echo 7146 | npx wrangler secret put MAX_SHARDS");
    expect(stdout).toContain("echo 240000000 | npx wrangler secret put MAX_TOTAL_REQUESTS");
    expect(stdout).toContain("--var MAX_RATE_PER_S=1000000 --var MAX_SHARDS=7146 --var MAX_TOTAL_REQUESTS=240000000");
    expect(stderr).toContain("the run needs 3 of the deployment's caps raised: MAX_RATE_PER_S, MAX_SHARDS, MAX_TOTAL_REQUESTS");
  });

  it("plans under the caps given as --var, within every platform limit and its budget: exit 0", async () => {
    const { code, stdout, stderr } = await edgeload(
      "plan",
      "examples/edge-1m.json",
      "--var",
      "MAX_RATE_PER_S=1000000",
      "--var",
      "MAX_SHARDS=8000",
      "--var",
      "MAX_TOTAL_REQUESTS=240000000",
    );
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).not.toContain("OVER");
    expect(stdout).not.toContain("deployment caps");
  });

  it("refuses a cap --var that is not a number above 0", async () => {
    const { code, stderr } = await edgeload("plan", "examples/edge-1m.json", "--var", "MAX_SHARDS=lots");
    expect(code).toBe(104);
    expect(stderr).toContain('--var MAX_SHARDS: a deployment cap, a number above 0, not "lots"');
  });
});

describe("capsNeeded", () => {
  const spec = (raw: Record<string, unknown>) => {
    const r = parseRunSpec({ target: "http://127.0.0.1:9", steps: [{ path: "/" }], ...raw });
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    return r.spec;
  };
  const uncapped = { ...DEFAULT_LIMITS, maxRatePerS: Infinity, maxShards: Infinity, maxTotalRequests: Infinity, maxDurationMs: Infinity, maxVUs: Infinity };

  it.each([
    // Within every cap: nothing to raise.
    [{ executor: "constant-arrival-rate", rate: 100, duration: "1m" }, []],
    // 50,000/s for a minute: the rate, 3,000,000 requests (within), and 360 shards at 30 ms (over 256).
    [{ executor: "constant-arrival-rate", rate: 50_000, duration: "1m", expectedLatency: "30ms" }, ["MAX_RATE_PER_S", "MAX_SHARDS"]],
    // Two hours: the duration only.
    [{ executor: "constant-arrival-rate", rate: 10, duration: "2h" }, ["MAX_DURATION_S"]],
    // 6,000 VUs: the VU cap of a closed model, never its rate; and the shards its estimated rate needs.
    [{ executor: "constant-vus", vus: 6_000, duration: "1m" }, ["MAX_VUS", "MAX_SHARDS"]],
  ])("%j → %j", (raw, settings) => {
    const s = spec(raw);
    const r = planRun(s, new ArrivalSchedule(s.stages).total, uncapped);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(capsNeeded(s, r.plan, DEFAULT_LIMITS).map((c) => c.setting)).toEqual(settings);
  });
});
