/**
 * Nothing left behind (issue 49): a run's Durable Objects delete their storage once the run is
 * final and its results are in D1 — a spec run and a k6 script run (a hand-made runtime in its
 * bundle: the real one needs the bundler, which is Node) — and everything a user reads of the
 * run afterwards (status, summary, report, live feed) comes from D1 unchanged. A run whose
 * clean-up was interrupted is swept by the next cron tick.
 */
import { createExecutionContext, createScheduledController, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../coordinator/index.ts";
import { sha256Hex } from "../../core/data/web-crypto.ts";
import queriesDoc from "../../QUERIES.md?raw";
import { api, coordinatorOf, createRun, shardOf, storageOf, waitForStatus } from "./helpers.ts";

/** The storage of an object never used: what "nothing left" looks like. */
async function emptyStorage(): Promise<Awaited<ReturnType<typeof storageOf>>> {
  return storageOf(shardOf(`r-never-${crypto.randomUUID().slice(0, 8)}`, 0));
}

/** The live feed's events, by name, as a page reads them. */
async function liveEvents(id: string): Promise<Record<string, any>> {
  const text = await (await api(`/v1/runs/${id}/live`)).text();
  const events: Record<string, any> = {};
  for (const block of text.split("\n\n")) {
    const event = /^event: (\w+)$/m.exec(block)?.[1];
    const data = /^data: (.*)$/m.exec(block)?.[1];
    if (event && data) events[event] = JSON.parse(data);
  }
  return events;
}

/** What a user reads of an ended run: status, summary, report, live feed. */
async function reads(id: string) {
  return {
    view: (await (await api(`/v1/runs/${id}`)).json()) as Record<string, any>,
    summary: await (await api(`/v1/runs/${id}/summary`)).json(),
    report: await (await api(`/v1/runs/${id}/report?format=json`)).json(),
    live: await liveEvents(id),
  };
}

/** Drives the Worker's cron tick at `scheduledTime`, to the end of what it hands to waitUntil. */
async function tick(scheduledTime: number): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime, cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

const cleanedAt = async (id: string) =>
  (await env.DB.prepare("SELECT cleaned_at FROM runs WHERE id = ?").bind(id).first<{ cleaned_at: number | null }>())!.cleaned_at;

/** Runs a run to its end and its clean-up (the alarm its end set), checking that nothing is left and that it reads the same. */
async function expectCleanedUp(id: string, shards: number): Promise<Awaited<ReturnType<typeof reads>>> {
  const before = await reads(id);
  expect(before.live.history.length).toBeGreaterThan(0);
  // Its shards let go of everything but a tombstone as soon as their done was acknowledged.
  for (let i = 0; i < shards; i++) expect((await storageOf(shardOf(id, i))).keys).toEqual(["ended"]);
  expect(await runDurableObjectAlarm(coordinatorOf(id))).toBe(true); // the clean-up, CLEAN_UP_AFTER_MS after the end
  const empty = await emptyStorage();
  for (const stub of [coordinatorOf(id), ...Array.from({ length: shards }, (_, i) => shardOf(id, i))]) expect(await storageOf(stub)).toEqual(empty);
  expect(await cleanedAt(id)).toEqual(expect.any(Number));
  const after = await reads(id);
  expect(after.view).toEqual(before.view);
  expect(after.summary).toEqual(before.summary);
  expect(after.report).toEqual(before.report);
  expect(after.live.summary).toEqual(before.live.summary);
  expect(after.live.end).toEqual(before.live.end);
  // Drawn from D1, the history has every window with the counts and percentiles the coordinator drew.
  const figures = (points: any[]) => points.map((p) => [p.t, p.requests, p.iterations, p.failed, p.dropped, p.p50, p.p95, p.p99, p.targetRate]);
  expect(figures(after.live.history)).toEqual(figures(before.live.history));
  // Reading it created nothing again.
  expect(await storageOf(coordinatorOf(id))).toEqual(empty);
  return after;
}

describe("a run's objects once it is over", () => {
  it("keep nothing once a spec run is final and in D1, and the run reads the same from D1", async () => {
    const { id } = await createRun({ rate: 20, duration: "2s", shards: 2 });
    expect((await waitForStatus(id)).status).toBe("passed");
    const after = await expectCleanedUp(id, 2);
    expect(after.view.live.requests).toBe(40);
  });

  it("keep nothing once a k6 script run is final and in D1", async () => {
    // A hand-made runtime for the script's isolate: each iteration sends one GET through its shard.
    const main = `import { RpcTarget, WorkerEntrypoint } from "cloudflare:workers";
      class Session extends RpcTarget {
        prepare() {}
        async iteration(host) {
          await host.send([], { method: "GET", url: ${JSON.stringify(`${env.TARGET_URL}/delay?ms=5`)}, headers: {}, expect: null, readBody: true });
          return { samples: [], error: null };
        }
      }
      export default class extends WorkerEntrypoint {
        session() { return new Session(); }
        async phase() { return { samples: [], error: null, data: null }; }
      }`;
    const bundle = JSON.stringify({ "main.js": main, "script.js": "export const files = {};" });
    const bundleId = await sha256Hex(bundle);
    expect((await api(`/v1/scripts/${bundleId}`, { method: "PUT", body: bundle })).status).toBe(201);
    const { id } = await createRun({
      script: { bundle: bundleId, exec: "default" },
      steps: [{ name: "default", path: "/" }],
      rate: 10,
      duration: "1s",
      shards: 1,
      regions: ["wnam"],
    });
    const view = await waitForStatus(id, undefined, 60_000);
    expect(view.live.requests).toBe(10);
    await expectCleanedUp(id, 1);
  });

  it("recreate nothing when a shard is started again after its run ended", async () => {
    const { id } = await createRun({ rate: 10, duration: "1s", shards: 1, regions: ["wnam"] });
    await waitForStatus(id);
    const assignment = { runId: id, shard: { index: 0 }, t0Ms: Date.now() + 60_000, deadlineMs: Date.now() + 120_000, flushGraceMs: 1_000 };
    // Its tombstone says which run it served: a late start of that run stores nothing and arms no alarm.
    await shardOf(id, 0).start(assignment as never);
    expect(await storageOf(shardOf(id, 0))).toMatchObject({ keys: ["ended"], alarm: null });
    // Once cleaned up, a start past its deadline and grace stores nothing either.
    await runDurableObjectAlarm(coordinatorOf(id));
    await shardOf(id, 0).start({ ...assignment, t0Ms: Date.now() - 60_000, deadlineMs: Date.now() - 30_000 } as never);
    expect(await storageOf(shardOf(id, 0))).toEqual(await emptyStorage());
  });
});

describe("the cron tick's sweep", () => {
  it("finishes a clean-up that was interrupted: a shard's storage put back is deleted, cleaned_at set again", async () => {
    const { id } = await createRun({ rate: 10, duration: "1s", shards: 2 });
    await waitForStatus(id);
    await runDurableObjectAlarm(coordinatorOf(id));
    // Interrupted: shard 1 still holds something, and D1 does not say the run is clean.
    await runInDurableObject(shardOf(id, 1), (_instance, state) => state.storage.kv.put("state", { phase: "done", left: "behind" }));
    await env.DB.prepare("UPDATE runs SET cleaned_at = NULL WHERE id = ?").bind(id).run();
    const endedAt = (await env.DB.prepare("SELECT ended_at FROM runs WHERE id = ?").bind(id).first<{ ended_at: number }>())!.ended_at;
    // Within ten minutes of its end the run is its coordinator's to clean up: the tick leaves it.
    await tick(endedAt + 5 * 60_000);
    expect((await storageOf(shardOf(id, 1))).keys).toEqual(["state"]);
    await tick(endedAt + 11 * 60_000);
    expect(await storageOf(shardOf(id, 1))).toEqual(await emptyStorage());
    expect(await cleanedAt(id)).toEqual(expect.any(Number));
    // The run still reads from D1.
    expect((await (await api(`/v1/runs/${id}`)).json()) as Record<string, unknown>).toMatchObject({ id, status: "passed" });
  });

  it("rolls up the seconds of a run past RESULTS_RETENTION_DAYS into minutes, its figures read the same", async () => {
    const { id } = await createRun({ rate: 20, duration: "2s", shards: 1, regions: ["wnam"] });
    await waitForStatus(id);
    const query = async (every: string) => (await api(`/v1/runs/${id}/query?by=region&every=${every}&metrics=requests,failed,p50,p95,p99`)).json();
    // QUERIES.md's block for a run of any age, through the read-only SQL route.
    const anyAge = /```sql id=p95-p99-by-region-minute-any-age\n([\s\S]*?)```/.exec(queriesDoc)![1]!;
    const sql = async () => {
      const response = await api("/v1/sql", { method: "POST", body: JSON.stringify({ sql: anyAge, params: [id] }) });
      expect(response.status, await response.clone().text()).toBe(200);
      return ((await response.json()) as { rows: unknown[] }).rows;
    };
    const [whole, perMinute, documented] = [await query("run"), await query("1m"), await sql()];
    const endedAt = (await env.DB.prepare("SELECT ended_at FROM runs WHERE id = ?").bind(id).first<{ ended_at: number }>())!.ended_at;
    const count = async (table: string) => (await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE run_id = ?`).bind(id).first<{ n: number }>())!.n;
    // A few batches a tick, oldest runs first (this file's earlier runs too): a few ticks at most.
    for (let ticks = 0; ticks < 10 && (await count("windows")) > 0; ticks++) await tick(endedAt + 91 * 86_400_000);
    expect([await count("windows"), await count("histograms")]).toEqual([0, 0]);
    expect(await count("windows_minute")).toBeGreaterThan(0);
    expect(await query("run")).toEqual(whole);
    expect(await query("1m")).toEqual(perMinute);
    expect(await sql()).toEqual(documented);
    // Per second is gone: asking for it says why.
    const refused = await api(`/v1/runs/${id}/query?every=1s`);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("rolled up into minutes");
  });
});
