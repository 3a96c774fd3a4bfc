/**
 * Closed-model runs end to end: the auth user lifecycle example (examples/), shortened to
 * seconds and a few VUs, against the demo app of the real local target. What a user would
 * check: the logout used the login's token (the target revoked exactly the tokens the
 * logins issued, and no logout was refused), VU concurrency held at the stage target
 * (summed over shards), per-step trends and custom metrics in the summary, thresholds
 * evaluated. Load goes only to the loopback target.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EdgeloadClient } from "../../cli/client.ts";
import type { LocalStack } from "../../cli/local-stack.ts";
import { runCli } from "./cli-process.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

const fixture = useLocalStack("edgeload-closed-model-");
let stack: LocalStack;
let client: EdgeloadClient;

beforeAll(() => {
  ({ stack, client } = fixture);
});

interface AppStats {
  users: number;
  liveTokens: number;
  revokedTokens: number;
}
const appStats = async (): Promise<AppStats> => (await fetch(`${stack.targetUrl}/app/stats`)).json() as Promise<AppStats>;

describe("closed-model executors against the local target", () => {
  it("runs a shortened auth user lifecycle: captures flow from login to logout, VUs held, trends and thresholds", async () => {
    const example = JSON.parse(await readFile(new URL("../../examples/auth-user-lifecycle.json", import.meta.url), "utf8"));
    // Seconds instead of minutes: 0→4 VUs in 1 s, hold 4 s, 4→0 in 1 s; think times ×0.1.
    const steps = example.steps.map((s: { think: string }) => ({ ...s, think: s.think === "2s" ? "200ms" : "100ms" }));
    const before = await appStats();
    const run = await client.createRun({
      ...example,
      name: "e2e auth lifecycle",
      target: stack.targetUrl,
      steps,
      stages: [
        { target: 4, duration: "1s" },
        { target: 4, duration: "4s" },
        { target: 0, duration: "1s" },
      ],
      gracefulRampDown: "2s",
      shards: 2,
      regions: ["wnam", "weur"],
      timeout: "5s",
    });
    const view = await client.waitForEnd(run.id, () => {}, 250);
    const summary = await client.summary(run.id);
    const after = await appStats();
    const m = summary.metrics as Record<string, any>;
    const e = summary.edgeload;
    expect(view.status).toBe("passed");

    // Every login's token went to GET /user and to logout: all answered, none refused.
    const step = (name: string) => e.steps[name]!;
    expect(step("login").requests).toBeGreaterThanOrEqual(8);
    expect(step("get_user").failed).toBe(0);
    expect(step("logout").failed).toBe(0);
    expect(m.checks.fails).toBe(0);
    // The target revoked one token per logout, and each was a token a login issued.
    expect(after.revokedTokens - before.revokedTokens).toBe(step("logout").requests);
    expect(after.users - before.users).toBe(step("create_user").requests);
    // Logins the run's end cut before their logout left their token live; nothing else.
    expect(after.liveTokens - before.liveTokens).toBe(step("login").requests - step("logout").requests);

    // Closed model: VUs instead of a rate; 4 VUs split 2 + 2 over the shards, held.
    expect(e.targetRatePerS).toBeNull();
    expect(e.vus).toMatchObject({ peak: 4, startVUs: 0 });
    expect(e.shards.map((s) => s.telemetry?.peakInFlight)).toEqual([2, 2]);
    // One iteration takes 4 requests + 0.5 s of think: 4 VUs over ~5 s complete a few dozen
    // at most (back to back, never more than the VUs allow), plus the one each VU may finish
    // within its gracefulRampDown once the ramp-down stops it (counted, as in k6).
    expect(m.iterations.count).toBeGreaterThanOrEqual(8);
    expect(m.iterations.count).toBeLessThanOrEqual(Math.ceil((4 * 5) / 0.5) + 4);

    // Per-step trends and the spec's custom metrics.
    for (const name of ["create_user", "login", "get_user", "logout"]) {
      expect(step(name).http_req_duration, name).not.toBeNull();
      expect(m[`${name}_duration`], name).toMatchObject({ type: "trend" });
      expect(m[`${name}_success_rate`], name).toMatchObject({ type: "rate", value: 1 });
    }
    // Thresholds evaluated with observed values.
    expect(e.thresholds.map((t) => [t.metric, t.threshold, t.ok])).toEqual([
      ["login_duration", "p(95)<300", true],
      ["http_req_failed", "rate<0.05", true],
      ["http_reqs", "rate>10", true],
    ]);
    expect(e.thresholds.every((t) => t.observed !== null)).toBe(true);
  });

  it("runs the messaging SLA example with `edgeload run`: VUs in the summary, no target rate, thresholds passed", async () => {
    const example = JSON.parse(await readFile(new URL("../../examples/messaging-sla.json", import.meta.url), "utf8"));
    // The example's three stages in seconds (0→3 VUs, hold, 3→0), its think time ×0.2.
    const spec = {
      ...example,
      target: stack.targetUrl,
      stages: [
        { target: 3, duration: "1s" },
        { target: 3, duration: "3s" },
        { target: 0, duration: "1s" },
      ],
      steps: example.steps.map((s: object) => ({ ...s, think: { min: "100ms", max: "300ms" } })),
    };
    const file = join(fixture.stateDir, "messaging.json");
    await writeFile(file, JSON.stringify(spec));
    const result = await runCli(["run", file], { EDGELOAD_URL: stack.apiUrl, EDGELOAD_TOKEN: stack.token });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/vus\.+: peak 3 · from 0: 3 for 1s, 3 for 3s, 0 for 1s/);
    expect(result.stdout).toMatch(/send_success_rate\.+: 100\.00%/);
    expect(result.stdout).toContain("✓ http_reqs 'rate>5'");
    expect(result.stdout).not.toContain("target vs achieved");
    expect(result.stdout).not.toMatch(/NaN|undefined|null\/s/);
  });
});
