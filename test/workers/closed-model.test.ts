/**
 * Closed-model (VU) runs through the real RunCoordinator and LoadShard in workerd: the
 * subrequest budget hands over between invocations (and survives eviction there), and an
 * unplanned restart restarts the VU loops from the schedule at the current time.
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
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

  it("restarts the VU loops from the schedule after a crash, without replaying, counting one iteration lost per VU it had running", async () => {
    const { id, startsAt } = await createRun(vus({ duration: "2s" }));
    const shard = shardOf(id, 0);
    const t0 = Date.parse(startsAt);
    await simulateShardCrash(shard, t0 + 1_000); // its alarm re-delivered 1 s after T0
    const view = await waitForStatus(id);
    expect((await shard.inspect()).restarts).toBe(1);
    const totals = await windowTotals(id);
    expect(totals.first).toBeGreaterThanOrEqual(1); // nothing sent in the lost second, nothing replayed
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    // Its 5 VUs were running when it died (it stored no window: it is known to have run at T0).
    expect(summary.edgeload.totals.interrupted).toBe(5);
    const iterations = summary.metrics.iterations.count;
    expect(summary.edgeload.totals.notSent).toMatchObject({ count: 5, restarts: 5, scheduled: iterations + 5 });
    expect(summary.metrics.http_reqs.count).toBeGreaterThan(20);
    // A second of 5 VUs at ~25 ms an iteration: a few hundred at most, so 5 is over 1 % of the schedule.
    expect(view.status).toBe("inconclusive");
    expect(summary.edgeload.verdict.reasons).toEqual([expect.stringMatching(/^edgeload did not send .* \(5 of \d+ iterations: shard restarts\)/)]);
  });

  it("counts the VUs a shard killed mid-run had running, and lets maxNotSentShare allow the loss", async () => {
    // 200 ms of think time: 5 VUs send ~25 requests a second, so no handoff (95) comes before the kill.
    const { id, startsAt } = await createRun(vus({ steps: [{ path: "/delay?ms=5", think: "200ms" }], maxNotSentShare: 0.5 }));
    await sleep(Date.parse(startsAt) + 1_500 - Date.now());
    expect((await shardOf(id, 0).inspect()).handoff).toBe(false);
    // Killed mid-invocation: its alarm is delivered again, to a new instance that knows only its storage.
    await runInDurableObject(shardOf(id, 0), (_instance, state) => state.abort("fault: killed mid-run")).catch(() => {});
    const view = await waitForStatus(id);
    expect((await shardOf(id, 0).inspect()).restarts).toBe(1);
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    expect(summary.edgeload.totals.interrupted).toBe(5);
    expect(summary.edgeload.totals.notSent).toMatchObject({ count: 5, bound: 0.5 });
    expect(view.status).toBe("passed");
  });
});
