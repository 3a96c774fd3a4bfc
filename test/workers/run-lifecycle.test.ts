/**
 * RunCoordinator and LoadShard inside workerd with real D1, Durable Object storage and
 * alarms, sending real requests to the local target Worker.
 */
import { abortAllDurableObjects, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import schemaDoc from "../../coordinator/migrations/SCHEMA.md?raw";
import { ArrivalSchedule } from "../../core/schedule/arrival-schedule.ts";
import { parseRunSpec } from "../../core/spec/run-spec.ts";
import { MetricStats } from "../../core/metrics/metric-stats.ts";
import type { ShardAssignment } from "../../core/run/protocol.ts";
import { api, createRun, sleep, spec, waitForStatus, simulateShardCrash } from "./helpers.ts";
import { shardSliceOf } from "../../core/schedule/shard-slice.ts";

const shardOf = (runId: string, index: number) => env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`${runId}/${index}`));
const coordinatorOf = (runId: string) => env.RUN_COORDINATOR.get(env.RUN_COORDINATOR.idFromName(runId));

async function windowTotals(runId: string) {
  const row = await env.DB.prepare(
    "SELECT COALESCE(SUM(sent), 0) AS sent, COALESCE(SUM(requests), 0) AS requests, COALESCE(SUM(dropped), 0) AS dropped, COUNT(*) AS rows FROM windows WHERE run_id = ?",
  )
    .bind(runId)
    .first<{ sent: number; requests: number; dropped: number; rows: number }>();
  return row!;
}

describe("a run from start to summary", () => {
  it("goes pending → running → passed, with every iteration in D1 exactly once and no secret stored", async () => {
    const { id } = await createRun({
      secrets: { key: "very-secret-value" },
      steps: [{ path: "/delay?ms=5", headers: { "x-key": "{{secrets.key}}" }, checks: [{ status: 200 }] }],
      thresholds: { http_req_duration: ["p(95)<1000"], http_req_failed: ["rate<0.01"] },
    });
    const running = (await (await api(`/v1/runs/${id}`)).json()) as Record<string, any>;
    expect(running.status).toMatch(/pending|running/);
    const final = await waitForStatus(id);
    expect(final.status).toBe("passed");
    // The live p95 is shown no finer than the shards' clock: workerd's moves in whole ms.
    expect(final.live.clockResolutionMs).toBe(1);
    // Ended: the whole run's mean rates, not the last instant of the schedule against 0/s.
    expect(final.live.targetRatePerS).toBe(40);
    expect(final.live.achievedRatePerS).toBeCloseTo(40, 0);
    expect(Number.isInteger(final.live.p95Ms)).toBe(true);

    const totals = await windowTotals(id);
    expect(totals.sent + totals.dropped).toBe(80); // 40/s × 2 s
    expect(totals.requests).toBe(80);

    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    expect(summary.metrics.http_reqs.count).toBe(80);
    expect(Object.keys(summary.edgeload.regions).sort()).toEqual(["weur", "wnam"]);
    expect(summary.edgeload.shards.map((s: any) => [s.colo, s.requests])).toEqual([
      ["local", 40],
      ["local", 40],
    ]);
    // workerd's clock moves in whole milliseconds: that is what the shards detect, and the
    // local target is no Cloudflare zone.
    expect(summary.edgeload.clock.resolutionMs).toBe(1);
    expect(summary.edgeload.path.targetBehindCloudflare).toBe(false);

    const run = await env.DB.prepare("SELECT status, spec_json, summary_json, thresholds_ok FROM runs WHERE id = ?")
      .bind(id)
      .first<Record<string, string | number>>();
    expect(run).toMatchObject({ status: "passed", thresholds_ok: 1 });
    // Once the run is over the secret is nowhere: not in D1, responses, or DO storage.
    const stored = async (stub: DurableObjectStub, keys: string[]) =>
      runInDurableObject(stub, (_instance, state) => JSON.stringify(keys.map((k) => state.storage.kv.get(k))));
    const texts = [
      run!.spec_json,
      run!.summary_json,
      JSON.stringify(summary),
      // Its done acknowledged, the shard keeps only its tombstone (workers/shard/shard-end.ts).
      await stored(shardOf(id, 0), ["ended"]),
      await stored(coordinatorOf(id), ["run", "summary"]),
    ];
    expect(texts[3]).toContain(id); // the shard's record is really there, just without the secret
    for (const text of texts) expect(String(text)).not.toContain("very-secret-value");
    const shards = await env.DB.prepare("SELECT shard, region, colo, requests FROM shards WHERE run_id = ? ORDER BY shard").bind(id).all();
    expect(shards.results).toEqual([
      { shard: 0, region: "wnam", colo: "local", requests: 40 },
      { shard: 1, region: "weur", colo: "local", requests: 40 },
    ]);

    const series = (await (await api(`/v1/runs/${id}/timeseries`)).json()) as { points: Array<Record<string, any>> };
    expect(series.points.filter((p) => p.region === "all").reduce((a, p) => a + p.requests, 0)).toBe(80);
  });

  it("answers the documented percentile SQL exactly as the summary does", async () => {
    const { id } = await createRun({ rate: 60 });
    await waitForStatus(id);
    const sql = /```sql id=p95-by-region-minute\n([\s\S]*?)```/.exec(schemaDoc)![1]!;
    const { results } = await env.DB.prepare(sql).bind(id).all<{ region: string; minute: number; requests: number; p95_ms: number }>();
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    expect(results.map((r) => r.region)).toEqual(["weur", "wnam"]);
    for (const row of results) {
      expect(row.minute).toBe(0);
      expect(row.requests).toBe(summary.edgeload.regions[row.region].requests);
      // Identical up to the summary's rounding to 1 µs.
      expect(Math.abs(row.p95_ms - summary.edgeload.regions[row.region].http_req_duration["p(95)"])).toBeLessThanOrEqual(0.0005 + 1e-9);
    }
  });
});

describe("D1 write bound", () => {
  it("writes at most regions × steps × 7 rows per second of run, whatever the rate and shard count", async () => {
    // The most rows any one second got. Not the average: a last request that answers after
    // the end makes a sparse extra second, which would lower the small run's average.
    const rowsPerSecond = async (overrides: Record<string, unknown>) => {
      const { id } = await createRun({ duration: "2s", regions: ["wnam", "weur"], ...overrides });
      await waitForStatus(id);
      const row = await env.DB.prepare(
        `SELECT MAX(rows) AS rows FROM (SELECT window_s, COUNT(*) AS rows FROM (
           SELECT window_s FROM windows WHERE run_id = ?1 UNION ALL SELECT window_s FROM histograms WHERE run_id = ?1
         ) GROUP BY window_s)`,
      )
        .bind(id)
        .first<{ rows: number }>();
      return row!.rows;
    };
    const small = await rowsPerSecond({ rate: 10, shards: 2 });
    const large = await rowsPerSecond({ rate: 200, shards: 8 });
    const bound = 2 /* regions */ * 1 /* step */ * 7;
    expect(small).toBeLessThanOrEqual(bound);
    expect(large).toBeLessThanOrEqual(bound);
    // 20× the rate and 4× the shards: not one row more per second.
    expect(large).toBeLessThanOrEqual(small);
  });
});

describe("idempotence and recovery", () => {
  it("counts a retried flush once", async () => {
    const { id } = await createRun({ rate: 20 });
    const extra = new MetricStats();
    for (let i = 0; i < 7; i++) {
      extra.counters.sent++;
      extra.counters.completed++;
      extra.trends.duration.record(1000);
    }
    const flush = {
      runId: id,
      childIndex: 0,
      watermarkS: 0,
      done: false,
      windows: [{ windowS: 0, part: 99, steps: [[0, extra.toWire()] as const] }],
      telemetry: { region: "wnam", colo: "local", invocations: 1, restarts: 0, subrequests: 0, peakInFlight: 0 },
    };
    expect(await coordinatorOf(id).flush(flush)).toMatchObject({ accepted: 1, duplicates: 0 });
    expect(await coordinatorOf(id).flush(flush)).toMatchObject({ accepted: 0, duplicates: 1 });
    await waitForStatus(id);
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    expect(summary.metrics.http_reqs.count).toBe(40 + 7);
    expect((await windowTotals(id)).requests).toBe(40 + 7);
  });

  it("warms each shard up before t0 with one request to the target's origin, counted nowhere", async () => {
    const { id, startsAt } = await createRun({ rate: 20, duration: "2s", shards: 1, regions: ["weur"] });
    await waitForStatus(id);
    const { warmUp } = await shardOf(id, 0).inspect();
    expect(warmUp).toMatchObject({ url: `${new URL(env.TARGET_URL).origin}/` });
    expect(warmUp!.error).toBeUndefined();
    expect(warmUp!.status).toBeGreaterThan(0);
    expect(warmUp!.sentAtMs).toBeLessThan(Date.parse(startsAt));
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    expect(summary.metrics.http_reqs.count).toBe(40);
    expect((await windowTotals(id)).requests).toBe(40);
  });

  it("survives eviction between invocations: every iteration counted exactly once", async () => {
    // 50/s for 4 s on one shard = 200 iterations, in invocations of 100 (see vitest config).
    const { id } = await createRun({ rate: 50, duration: "4s", shards: 1, regions: ["weur"] });
    const shard = shardOf(id, 0);
    for (let i = 0; i < 100; i++) {
      const state = await shard.inspect();
      if (state.invocations >= 1 && state.handoff) break; // between two invocations
      await sleep(20);
    }
    await evictDurableObject(shard);
    await waitForStatus(id);
    const state = await shard.inspect();
    expect(state.invocations).toBeGreaterThanOrEqual(2);
    expect(state.restarts).toBe(0); // a planned handover, not a crash
    const totals = await windowTotals(id);
    expect(totals.sent + totals.dropped).toBe(200);
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    expect(summary.metrics.http_reqs.count).toBe(totals.requests);
  });

  it("resumes a crashed shard at the current time, counting what it missed as dropped, never replaying it, and ends the run inconclusive for edgeload's loss, not the target's", async () => {
    const { id, startsAt } = await createRun({ rate: 40, duration: "3s", shards: 1, regions: ["wnam"] });
    const shard = shardOf(id, 0);
    const t0 = Date.parse(startsAt);
    await simulateShardCrash(shard, t0 + 1_000); // its alarm re-delivered 1 s after T0
    await waitForStatus(id);
    const after = await shard.inspect();
    expect(after.restarts).toBe(1);
    const totals = await windowTotals(id);
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    expect(totals.sent + totals.dropped).toBe(120);
    // What fell due between T0 and the resume was missed: about one second of arrivals
    // (40, one every 25 ms), more if a busy host delivered the alarm late.
    const dueBeforeResume = Math.ceil((after.lastRestartMs! - t0) / 25);
    expect(dueBeforeResume).toBeGreaterThanOrEqual(40);
    expect(summary.edgeload.totals.interrupted).toBeGreaterThanOrEqual(dueBeforeResume - 1);
    expect(summary.edgeload.totals.interrupted).toBeLessThanOrEqual(dueBeforeResume + 1);
    expect(summary.edgeload.saturated).toBe(true);
    // About a third of the schedule, far over the 1 % bound: the run cannot pass, and says it was edgeload.
    const lost = summary.edgeload.totals.interrupted;
    expect(summary.edgeload.totals.notSent).toMatchObject({ count: lost, restarts: lost, unstarted: 0, scheduled: 120, bound: 0.01 });
    expect(summary.edgeload.status).toBe("inconclusive");
    expect(summary.edgeload.exitCode).toBe(75);
    expect(summary.edgeload.verdict.reasons).toEqual([
      expect.stringMatching(new RegExp(`^edgeload did not send \\d+ % of the schedule \\(${lost} of 120 iterations: shard restarts\\); above the 1 % bound`)),
    ]);
    // Its drops are the restart's: none is put down to the in-flight cap and the target's latency.
    expect(summary.edgeload.saturation).toContain(
      `${lost} iterations not sent by edgeload: ${lost} lost to shard restarts — edgeload's own failure, not the target's`,
    );
    expect(summary.edgeload.saturation.join("\n")).not.toMatch(/in-flight cap/);
  });

  it("never counts an iteration twice when every object is killed mid-invocation", async () => {
    // 40/s for 5 s on one shard: 200 iterations in invocations of 100. Kill everything
    // (shard and coordinator, no graceful eviction) 1.5 s in, after windows were flushed.
    // What the restart did not send is allowed here: the count, not the verdict, is under test.
    const { id, startsAt } = await createRun({ rate: 40, duration: "5s", shards: 1, regions: ["wnam"], maxNotSentShare: 1 });
    await sleep(Date.parse(startsAt) + 1_500 - Date.now()); // inside the first invocation (0–2.5 s)
    await abortAllDurableObjects();
    const final = await waitForStatus(id, undefined, 45_000);
    expect(final.status).toMatch(/passed|failed/);
    const totals = await windowTotals(id);
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    expect(totals.sent + totals.dropped).toBeLessThanOrEqual(200);
    // At most what was in flight or due around the kill goes missing: not the whole invocation.
    expect(totals.sent + totals.dropped).toBeGreaterThanOrEqual(185);
    expect(summary.metrics.http_reqs.count).toBe(totals.requests);
  });

  it("rebuilds an evicted coordinator's totals from its checkpoint and log", async () => {
    const { id } = await createRun({ rate: 50, duration: "4s" });
    await sleep(3_500);
    await evictDurableObject(coordinatorOf(id));
    await waitForStatus(id);
    const totals = await windowTotals(id);
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    expect(totals.sent + totals.dropped).toBe(200);
    expect(summary.metrics.http_reqs.count).toBe(totals.requests);
  });

  it("ignores a re-delivered alarm after the run has finished", async () => {
    const { id } = await createRun({ rate: 20 });
    await waitForStatus(id);
    const before = await windowTotals(id);
    await runDurableObjectAlarm(coordinatorOf(id));
    await runDurableObjectAlarm(shardOf(id, 0));
    expect(await windowTotals(id)).toEqual(before);
  });
});

describe("a run restarted during setup", () => {
  it("is ended in error by its alarm at its setup deadline, never left pending with its run slot held", async () => {
    // A real run's record, as a coordinator restarted in the middle of setup would find it:
    // still pending, created a minute ago, with only its alarm left to move it on.
    const { id } = await createRun({ rate: 10, duration: "1s" });
    await waitForStatus(id);
    const ended = await runInDurableObject(coordinatorOf(id), (_instance, state) => state.storage.kv.get<Record<string, unknown>>("run"));
    const runId = `r-setup-${crypto.randomUUID().slice(0, 8)}`;
    const { phases: _phases, verdict: _verdict, ...record } = ended!;
    const pending = { ...record, runId, status: "pending", endMs: null, createdMs: Date.now() - 60_000 };
    const coordinator = coordinatorOf(runId);
    await runInDurableObject(coordinator, async (_instance, state) => {
      state.storage.kv.put("run", pending);
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    await evictDurableObject(coordinator);
    expect(await runDurableObjectAlarm(coordinator)).toBe(true);
    const after = await runInDurableObject(coordinator, (_instance, state) => state.storage.kv.get<Record<string, unknown>>("run"));
    expect(after).toMatchObject({ status: "error", abortReason: expect.stringMatching(/^setup did not end within 30 s/) });
    // It never ran teardown: setup did not finish.
    expect(after!.phases).toEqual({ setup: { ok: false, steps: [] } });
  });
});

describe("stopping", () => {
  it("aborts every shard within 5 s", async () => {
    const { id } = await createRun({ rate: 40, duration: "30s" });
    await sleep(2_000);
    const response = await api(`/v1/runs/${id}/abort`, { method: "POST" });
    expect(response.status).toBe(202);
    const abortedAt = Date.now();
    for (;;) {
      const states = await Promise.all([0, 1].map((i) => shardOf(id, i).inspect()));
      if (states.every((s) => s.phase === "done" && s.alarm === null)) break;
      expect(Date.now() - abortedAt).toBeLessThan(5_000);
      await sleep(100);
    }
    const final = await waitForStatus(id);
    expect(final.status).toBe("aborted");
    expect(final.abortReason).toContain("aborted through the API");
    const sent = (await windowTotals(id)).sent;
    expect(sent).toBeGreaterThan(0); // what was measured before the abort is kept
    expect(sent).toBeLessThan(40 * 10);
  });

  it("fails and stops a run early when an abortOnFail threshold fails", async () => {
    const { id } = await createRun({
      duration: "20s",
      steps: [{ path: "/delay?ms=1&fail=0.5" }],
      thresholds: { http_req_failed: [{ threshold: "rate<0.1", abortOnFail: true, delayAbortEval: "1s" }] },
    });
    const final = await waitForStatus(id);
    expect(final.status).toBe("failed");
    expect(final.abortReason).toContain("abortOnFail");
    expect(final.progress.elapsedS).toBeLessThan(10);
  });

  it("stops a shard at its own deadline when its coordinator is gone", async () => {
    const parsed = parseRunSpec(spec({ rate: 20, duration: "30s" }));
    if (!parsed.ok) throw new Error();
    const t0Ms = Date.now() + 200;
    const assignment: ShardAssignment = {
      runId: "r-gone0000-00000000",
      slice: shardSliceOf([1], 0),
      iterationsPerInvocation: 10_000,
      t0Ms,
      deadlineMs: t0Ms + 1_500,
      flushGraceMs: 500,
      spec: parsed.spec,
      mode: "local",
      shard: { index: 0, region: "wnam", weight: 1, segment: "0/1:1/1", maxInFlight: 100 },
    };
    const shard = shardOf(assignment.runId, 0);
    await shard.start(assignment);
    await sleep(3_500);
    const state = await shard.inspect();
    expect(state.phase).toBe("done");
    expect(state.alarm).toBeNull();
    // It sent its share up to the deadline (1.5 s at 20/s ≈ 31) and not the 30 s schedule.
    expect(state.subrequests).toBeGreaterThan(20);
    expect(state.subrequests).toBeLessThanOrEqual(31);
    expect(state.pendingWindows).toBeGreaterThan(0); // never acknowledged, kept in storage
    expect(new ArrivalSchedule(parsed.spec.stages).total).toBe(600);
  });
});
