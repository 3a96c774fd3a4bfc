/**
 * What else a run leaves behind (issue 49), past RESULTS_RETENTION_DAYS, swept by the cron
 * tick: its scraped series thinned to a sample a minute, its shards' histograms dropped,
 * delivery attempts as old deleted, and its R2 objects — a k6/browser script's screenshots and
 * a script bundle no recent run or schedule names — deleted. A run within the retention keeps
 * all of it. The runs are written straight into D1 as an ended run leaves them, a hundred days
 * ago: a real run of that age cannot be made.
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../coordinator/index.ts";
import { screenshotKey } from "../../workers/shard/browser-host.ts";

const DAY_MS = 86_400_000;

/** Drives the Worker's cron tick at `scheduledTime`, to the end of what it hands to waitUntil. */
async function tick(scheduledTime: number): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime, cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

/** A SHA-256-shaped bundle id, different for each name. */
const bundleId = (name: string) => name.padEnd(64, "0").replace(/[^0-9a-f]/g, "a");

/** An ended run as D1 holds it, `endedAgoMs` ago, naming `spec`'s bundles; its objects already cleaned up. */
async function endedRun(id: string, endedAgoMs: number, spec: Record<string, unknown>): Promise<void> {
  const endedAt = Date.now() - endedAgoMs;
  await env.DB.prepare(
    `INSERT INTO runs (id, name, status, target, created_at, t0, ended_at, duration_ms, spec_json, plan_json, summary_json, cleaned_at)
     VALUES (?, ?, 'passed', 'https://example.com', ?, ?, ?, 180000, ?, '{"shards":[]}', '{}', ?)`,
  )
    .bind(id, id, endedAt - 200_000, endedAt - 190_000, endedAt, JSON.stringify(spec), endedAt)
    .run();
}

/** A per-second window row of `runId` (its rollup runs the series' thinning). */
const windowRow = (runId: string, windowS: number) =>
  env.DB.prepare(
    `INSERT INTO windows (run_id, window_s, region, step, sent, requests, failed, dropped, timeouts, connection_errors, status_4xx, status_5xx,
       checks_passed, checks_failed, bytes_received, statuses_json) VALUES (?, ?, 'wnam', 's', 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 10, '{"200":1}')`,
  ).bind(runId, windowS);

/** A scraped sample of series `name` by `shard` at `windowS`. */
const sample = (runId: string, name: string, shard: number, windowS: number, value: number) =>
  env.DB.prepare("INSERT INTO series (run_id, name, labels, t_ms, window_s, value, shard) VALUES (?, ?, '{}', ?, ?, ?, ?)").bind(
    runId,
    name,
    1_000_000 + windowS * 1000,
    windowS,
    value,
    shard,
  );

async function seriesOf(runId: string): Promise<Array<[string, number, number, number]>> {
  const { results } = await env.DB.prepare("SELECT name, shard, window_s, value FROM series WHERE run_id = ? ORDER BY name, shard, window_s")
    .bind(runId)
    .all<{ name: string; shard: number; window_s: number; value: number }>();
  return results.map((r) => [r.name, r.shard, r.window_s, r.value]);
}

const keysUnder = async (prefix: string) => (await env.SEEDS.list({ prefix })).objects.map((o) => o.key).sort();

describe("the cron tick past RESULTS_RETENTION_DAYS", () => {
  it("thins an old run's series to a sample a minute and drops its shards' histograms; a recent run keeps them", async () => {
    const [old, recent] = ["r-leftover-rows-old", "r-leftover-rows-new"];
    await endedRun(old, 100 * DAY_MS, {});
    await endedRun(recent, DAY_MS, {});
    const statements = [];
    for (const run of [old, recent]) {
      statements.push(windowRow(run, 0), windowRow(run, 61));
      // mem by shard 0: three samples in minute 0, two in minute 1; reqs by shard 1: two in minute 0.
      for (const [s, v] of [
        [0, 10],
        [1, 11],
        [2, 12],
        [61, 20],
        [62, 21],
      ])
        statements.push(sample(run, "mem", 0, s!, v!));
      for (const [s, v] of [
        [5, 100],
        [6, 106],
      ])
        statements.push(sample(run, "reqs_total", 1, s!, v!));
      statements.push(
        env.DB.prepare("INSERT INTO shards (run_id, shard, region, segment, histograms_json) VALUES (?, 0, 'wnam', '0:1', '{\"http_req_duration\":{}}')").bind(
          run,
        ),
      );
    }
    await env.DB.batch(statements);
    for (let ticks = 0; ticks < 5; ticks++) await tick(Date.now());

    // Each minute's last sample, per series and shard.
    expect(await seriesOf(old)).toEqual([
      ["mem", 0, 2, 12],
      ["mem", 0, 62, 21],
      ["reqs_total", 1, 6, 106],
    ]);
    expect(await seriesOf(recent)).toHaveLength(7);
    const histograms = async (run: string) =>
      (await env.DB.prepare("SELECT histograms_json FROM shards WHERE run_id = ?").bind(run).first<{ histograms_json: string | null }>())!.histograms_json;
    expect(await histograms(old)).toBeNull();
    expect(await histograms(recent)).not.toBeNull();
    // Its per-second rows are rolled up and it is marked so.
    const rolled = await env.DB.prepare("SELECT rolled_up_at FROM runs WHERE id = ?").bind(old).first<{ rolled_up_at: number | null }>();
    expect(rolled!.rolled_up_at).toEqual(expect.any(Number));
  });

  it("deletes delivery attempts older than the retention, and keeps the recent ones", async () => {
    const attempt = (hook: number, atMs: number) =>
      env.DB.prepare(
        "INSERT INTO webhook_attempts (schedule_id, run_id, hook, attempt, at_ms, status, delivery_id, kind) VALUES ('s-left', NULL, ?, 1, ?, 200, ?, 'failed')",
      ).bind(hook, atMs, `d-${hook}`);
    await env.DB.batch([attempt(0, Date.now() - 100 * DAY_MS), attempt(1, Date.now() - DAY_MS)]);
    await tick(Date.now());
    const { results } = await env.DB.prepare("SELECT hook FROM webhook_attempts WHERE schedule_id = 's-left'").all<{ hook: number }>();
    expect(results.map((r) => r.hook)).toEqual([1]);
  });

  it("deletes an old run's screenshots and the bundles no recent run or schedule names; a recent run keeps its screenshots", async () => {
    const [onlyOld, alsoRecent, scheduled] = [bundleId("a1"), bundleId("b2"), bundleId("c3")];
    const scriptOf = (bundle: string) => ({ bundle, exec: "default" });
    const [old, recent] = ["r-leftover-r2-old", "r-leftover-r2-new"];
    await endedRun(old, 100 * DAY_MS, {
      script: scriptOf(onlyOld),
      scenarios: [
        { name: "b", spec: { script: scriptOf(alsoRecent) } },
        { name: "c", spec: { script: scriptOf(scheduled) } },
      ],
    });
    await endedRun(recent, DAY_MS, { script: scriptOf(alsoRecent) });
    await env.DB.prepare(
      "INSERT INTO schedules (id, name, cron, spec_json, webhooks_json, paused, created_at) VALUES ('s-r2', 'nightly', '0 3 * * *', ?, '[]', 1, ?)",
    )
      .bind(JSON.stringify({ script: scriptOf(scheduled) }), Date.now())
      .run();
    for (const bundle of [onlyOld, alsoRecent, scheduled]) await env.SEEDS.put(`scripts/${bundle}.json`, "{}");
    for (const key of [screenshotKey(old, 0, "vu1-iter0-1.png"), screenshotKey(old, 1, "vu2-iter0-1.png"), screenshotKey(recent, 0, "vu1-iter0-1.png")])
      await env.SEEDS.put(key, new Uint8Array([137, 80, 78, 71]));

    for (let ticks = 0; ticks < 3; ticks++) await tick(Date.now());

    expect(await keysUnder(`screenshots/${old}/`)).toEqual([]);
    expect(await keysUnder(`screenshots/${recent}/`)).toEqual([screenshotKey(recent, 0, "vu1-iter0-1.png")]);
    expect(await keysUnder("scripts/")).toEqual([`scripts/${alsoRecent}.json`, `scripts/${scheduled}.json`]);
    const swept = async (run: string) =>
      (await env.DB.prepare("SELECT artifacts_swept_at FROM runs WHERE id = ?").bind(run).first<{ artifacts_swept_at: number | null }>())!.artifacts_swept_at;
    expect(await swept(old)).toEqual(expect.any(Number));
    expect(await swept(recent)).toBeNull();
  });
});
