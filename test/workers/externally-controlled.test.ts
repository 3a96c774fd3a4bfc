/**
 * An externally-controlled run (k6's `scale`, `pause`, `resume`) through the real API,
 * RunCoordinator and LoadShards in workerd: PATCH /v1/runs/:id/control changes the level, the
 * coordinator keeps it through its own eviction and tells both shards, each keeps it in its
 * storage, and the requests the shards recorded per second follow it (1 VU, then 3, paused,
 * resumed). The refusals name their reason: above maxVUs, a bad body, a run of another
 * executor, an ended run; an unknown run is 404.
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, coordinatorOf, createRun, shardOf, sleep, waitForStatus } from "./helpers.ts";

// An iteration: a 5 ms request and 200 ms think, so a VU sends about 4.5 requests a second.
const controlled = (overrides: Record<string, unknown> = {}) => ({
  executor: "externally-controlled",
  vus: 1,
  maxVUs: 4,
  duration: "8s",
  rate: undefined,
  shards: 2,
  regions: ["wnam", "weur"],
  steps: [{ path: "/delay?ms=5", think: "200ms" }],
  ...overrides,
});

const control = (id: string, body: unknown) => api(`/v1/runs/${id}/control`, { method: "PATCH", body: JSON.stringify(body) });

/** Requests the shards recorded in each second of the run (both shards' windows summed). */
async function requestsPerSecond(runId: string): Promise<Map<number, number>> {
  const { results } = await env.DB.prepare("SELECT window_s AS s, SUM(requests) AS n FROM windows WHERE run_id = ? GROUP BY window_s")
    .bind(runId)
    .all<{ s: number; n: number }>();
  return new Map(results.map((r) => [r.s, r.n]));
}

/** Waits until `t0 + atMs`. */
const until = (t0: number, atMs: number) => sleep(Math.max(0, t0 + atMs - Date.now()));

async function problemsOf(response: Response): Promise<{ status: number; fields: string[]; details: string }> {
  const body = (await response.json()) as { problems?: Array<{ field: string; detail: string }> };
  return { status: response.status, fields: (body.problems ?? []).map((p) => p.field), details: (body.problems ?? []).map((p) => p.detail).join("; ") };
}

describe("externally-controlled runs", () => {
  it("follow PATCH /v1/runs/:id/control: 1 VU, scaled to 3, paused, resumed; the level survives the coordinator's eviction", { timeout: 60_000 }, async () => {
    const { id, startsAt } = await createRun(controlled());
    const t0 = Date.parse(startsAt);
    await waitForStatus(id, ["running"]);
    // Above maxVUs, a negative count, a bad body: refused, naming the field.
    expect(await problemsOf(await control(id, { vus: 5 }))).toMatchObject({ status: 400, fields: ["vus"], details: expect.stringMatching(/maxVUs \(4\)/) });
    expect(await problemsOf(await control(id, { vus: -1 }))).toMatchObject({ status: 400, fields: ["vus"] });
    expect(await problemsOf(await control(id, { paused: "yes" }))).toMatchObject({ status: 400, fields: ["paused"] });

    await until(t0, 2_000);
    const scaled = await control(id, { vus: 3 });
    expect(scaled.status).toBe(200);
    expect(await scaled.json()).toMatchObject({ vus: 3, paused: false, maxVUs: 4, shardsTold: 2, shards: 2 });
    // Kept durably: an evicted coordinator still shows it, and each shard holds it in its storage.
    await evictDurableObject(coordinatorOf(id));
    const view = (await (await api(`/v1/runs/${id}`)).json()) as Record<string, any>;
    expect(view.control).toEqual({ vus: 3, paused: false, maxVUs: 4 });
    expect(view.live.targetVUs).toBe(3);
    for (const i of [0, 1]) {
      expect(await runInDurableObject(shardOf(id, i), (_o, state) => state.storage.kv.get("control"))).toMatchObject({ vus: 3, paused: false });
    }

    // The Prometheus gauge of active VUs is the level too, not the plan's maxVUs.
    expect(await (await api(`/v1/runs/${id}/metrics`)).text()).toMatch(/^edgeload_vus\{[^}]*\} 3$/m);

    await until(t0, 4_500);
    expect(await (await control(id, { paused: true })).json()).toMatchObject({ vus: 3, paused: true });
    expect(((await (await api(`/v1/runs/${id}`)).json()) as Record<string, any>).live.targetVUs).toBe(0);
    await until(t0, 6_000);
    expect(await (await control(id, { paused: false })).json()).toMatchObject({ vus: 3, paused: false });

    const ended = await waitForStatus(id);
    expect(ended.status).toBe("passed");
    const perSecond = await requestsPerSecond(id);
    const at = (s: number) => perSecond.get(s) ?? 0;
    // 1 VU: ~4.5 a second. 3 VUs: ~14. Paused (4.5 s – 6 s): nothing starts, so second 5 is empty.
    // Bounds are loose: the machine is shared, and a slow second only lowers the counts.
    expect(at(1)).toBeGreaterThanOrEqual(2);
    expect(at(1)).toBeLessThanOrEqual(6);
    expect(at(3)).toBeGreaterThanOrEqual(at(1) + 4);
    expect(at(3)).toBeLessThanOrEqual(16);
    expect(at(5)).toBe(0);
    expect(at(7)).toBeGreaterThanOrEqual(at(1) + 4);
    // Ended: nothing to control.
    expect(await problemsOf(await control(id, { vus: 1 }))).toMatchObject({ status: 400, fields: ["status"], details: expect.stringMatching(/ended/) });
  });

  it("a shard killed mid-run resumes at the current level, not the run's start level", { timeout: 60_000 }, async () => {
    // 3 VUs over two shards of equal weight: shard 0 runs VUs 1 and 3, shard 1 VU 2. Back at
    // the start level shard 0 would run one VU, as many as shard 1.
    const { id, startsAt } = await createRun(controlled({ duration: "9s", maxNotSentShare: 0.5 }));
    const t0 = Date.parse(startsAt);
    await waitForStatus(id, ["running"]);
    await until(t0, 1_000);
    expect((await control(id, { vus: 3 })).status).toBe(200);
    await until(t0, 2_500);
    // Killed mid-invocation: its alarm comes again, to a new instance that knows only its storage.
    await runInDurableObject(shardOf(id, 0), (_o, state) => state.abort("fault: killed mid-run")).catch(() => {});
    expect((await waitForStatus(id)).status).toBe("passed");
    expect((await shardOf(id, 0).inspect()).restarts).toBe(1);
    const { results } = await env.DB.prepare(
      "SELECT region, SUM(requests) AS n FROM windows WHERE run_id = ? AND window_s >= 6 AND window_s < 9 GROUP BY region ORDER BY n DESC",
    )
      .bind(id)
      .all<{ region: string; n: number }>();
    expect(results).toHaveLength(2);
    // Two VUs against one once it has restarted (the runtime retries its alarm after a backoff of
    // seconds): about twice the requests (a slow machine lowers both).
    expect(results[0]!.n).toBeGreaterThanOrEqual(1.5 * results[1]!.n);
    expect(results[1]!.n).toBeGreaterThan(0);
  });

  it("refuses to control a run of another executor, and answers 404 for an unknown run", async () => {
    const { id } = await createRun({ duration: "1s" });
    expect(await problemsOf(await control(id, { vus: 2 }))).toMatchObject({
      status: 400,
      fields: ["executor"],
      details: expect.stringMatching(/not externally-controlled/),
    });
    expect((await control("r-mk0abc12-0000dead", { vus: 2 })).status).toBe(404);
    await waitForStatus(id);
  });
});
