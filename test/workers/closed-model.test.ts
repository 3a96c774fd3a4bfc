/**
 * Closed-model (VU) runs through the real RunCoordinator and LoadShard in workerd: the
 * subrequest budget hands over between invocations (and survives eviction there), and an
 * unplanned restart restarts the VU loops from the schedule at the current time.
 */
import { evictDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createRun, sleep, waitForStatus, simulateShardCrash } from "./helpers.ts";

const shardOf = (runId: string, index: number) => env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`${runId}/${index}`));

async function windowTotals(runId: string) {
  return (await env.DB.prepare(
    "SELECT COALESCE(SUM(sent), 0) AS sent, COALESCE(SUM(requests), 0) AS requests, MIN(window_s) AS first FROM windows WHERE run_id = ? AND requests > 0",
  )
    .bind(runId)
    .first<{ sent: number; requests: number; first: number | null }>())!;
}

const vus = (overrides: Record<string, unknown> = {}) => ({
  executor: "constant-vus",
  vus: 5,
  duration: "3s",
  rate: undefined,
  shards: 1,
  regions: ["weur"],
  steps: [{ path: "/delay?ms=5", checks: [{ status: 200 }], think: "20ms" }],
  ...overrides,
});

describe("closed-model runs in Durable Objects", () => {
  it("hands over at the request budget, survives eviction between invocations, and counts every request once", async () => {
    // Invocations of 600 − 500 reserved − 5 VUs × 1 step = 95 requests (see vitest config).
    const { id } = await createRun(vus());
    const shard = shardOf(id, 0);
    for (let i = 0; i < 150; i++) {
      const state = await shard.inspect();
      if (state.invocations >= 1 && state.handoff) break;
      await sleep(20);
    }
    await evictDurableObject(shard);
    const view = await waitForStatus(id);
    expect(view.status).toBe("passed");
    const state = await shard.inspect();
    expect(state.invocations).toBeGreaterThanOrEqual(3);
    expect(state.restarts).toBe(0);
    expect(state.peakInFlight).toBe(5); // the 5 VUs, never more
    const totals = await windowTotals(id);
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    expect(summary.metrics.http_reqs.count).toBe(totals.requests);
    expect(state.subrequests).toBe(totals.sent);
    expect(summary.metrics.iterations.count).toBeGreaterThan(100);
    expect(summary.edgeload.targetRatePerS).toBeNull();
    expect(summary.edgeload.vus.peak).toBe(5);
    expect(summary.edgeload.saturated).toBe(false);
  });

  it("restarts the VU loops from the schedule after a crash, without replaying or counting a loss", async () => {
    const { id, startsAt } = await createRun(vus({ duration: "2s" }));
    const shard = shardOf(id, 0);
    const t0 = Date.parse(startsAt);
    await simulateShardCrash(shard, t0 + 1_000); // its alarm re-delivered 1 s after T0
    const view = await waitForStatus(id);
    expect(view.status).toBe("passed");
    expect((await shard.inspect()).restarts).toBe(1);
    const totals = await windowTotals(id);
    expect(totals.first).toBeGreaterThanOrEqual(1); // nothing sent in the lost second, nothing replayed
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    expect(summary.edgeload.totals.interrupted).toBe(0);
    expect(summary.metrics.http_reqs.count).toBeGreaterThan(20);
  });
});
