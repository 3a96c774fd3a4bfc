/**
 * Built-in scenarios through the coordinator and real shards: the seed set is checked when
 * the run is created and read from R2 once per shard; custom metrics reach the summary
 * and D1 (`windows.custom_json`, custom trends in `histograms`), and the SQL documented in
 * SCHEMA.md reads them. The scenarios against a provisioned Authrim-style target are in
 * test/e2e/scenarios.test.ts; here the target answers the made-up tokens, signed by a key
 * it does not have, with 500 "no public key available" (as Authrim v0.1.15 does), which is
 * exactly what userinfo must count as failures.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import schemaDoc from "../../coordinator/migrations/SCHEMA.md?raw";
import { api, waitForStatus } from "./helpers.ts";

const shardOf = (runId: string, index: number) => env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`${runId}/${index}`));
const jwt = (n: number) => `eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1${n}In0.c2ln${n}`;

async function upload(name: string, doc: unknown): Promise<void> {
  const response = await api(`/v1/seeds/${name}`, { method: "PUT", body: JSON.stringify(doc) });
  expect(response.status).toBe(201);
}

function userinfoSpec(seed: string, overrides: Record<string, unknown> = {}) {
  return {
    name: "userinfo scenario",
    target: env.TARGET_URL,
    scenario: { name: "userinfo", seed },
    executor: "constant-arrival-rate",
    rate: 80,
    duration: "3s",
    shards: 2,
    regions: ["wnam", "weur"],
    timeout: "2s",
    thresholds: { userinfo_success: ["rate>0.9"] },
    ...overrides,
  };
}

describe("scenario runs", () => {
  it("refuses a run whose seed set is missing or of the wrong kind, naming scenario.seed", async () => {
    const missing = await api("/v1/runs", { method: "POST", body: JSON.stringify(userinfoSpec("no-such-seed")) });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(await missing.json())).toMatch(/scenario\.seed.*no seed set named no-such-seed/);

    await upload("some-sessions", { sessions: [{ session_id: "s1", user_id: "u1" }] });
    const wrongKind = await api("/v1/runs", { method: "POST", body: JSON.stringify(userinfoSpec("some-sessions")) });
    expect(wrongKind.status).toBe(400);
    expect(JSON.stringify(await wrongKind.json())).toMatch(/holds sessions; the userinfo scenario reads access-tokens/);
  });

  it("reads the seed once per shard, counts refused tokens as failures, and stores custom metrics in D1", async () => {
    await upload(
      "made-up-tokens",
      Array.from({ length: 50 }, (_, i) => jwt(i)),
    );
    const created = await api("/v1/runs", { method: "POST", body: JSON.stringify(userinfoSpec("made-up-tokens")) });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const view = await waitForStatus(id);
    expect(view.status).toBe("failed"); // userinfo_success is 0: every token is refused

    // 120 iterations per shard at 100 per invocation: two invocations, one R2 read.
    for (const i of [0, 1]) {
      const state = await shardOf(id, i).inspect();
      expect(state.invocations).toBe(2);
      expect(state.seedLoads).toBe(1);
    }

    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    expect(summary.metrics.userinfo_success).toMatchObject({ type: "rate", passes: 0, fails: 240, thresholds: { "rate>0.9": true } });
    expect(summary.metrics.http_req_failed.passes).toBe(240);
    expect(summary.edgeload.totals.statuses).toEqual({ 500: 240 });
    expect(summary.edgeload.scenario).toMatchObject({ name: "userinfo", seed: "made-up-tokens" });

    const sql = /```sql id=custom-metrics\n([\s\S]*?)```/.exec(schemaDoc)![1]!;
    const { results } = await env.DB.prepare(sql).bind(id).all<{ metric: string; kind: string; passes: number; total: number }>();
    expect(results).toEqual([{ metric: "userinfo_success", kind: "rate", passes: 0, total: 240 }]);
    const trend = await env.DB.prepare("SELECT SUM(count) AS n FROM histograms WHERE run_id = ? AND metric = 'userinfo_duration'")
      .bind(id)
      .first<{ n: number }>();
    expect(trend!.n).toBe(240);
  });
});
