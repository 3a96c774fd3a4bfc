/**
 * Runs through an aggregation tree (core/plan/aggregation-tree.ts), in workerd with an
 * aggregator fan-in of 2: six shards in two regions report to level-1 aggregators, those
 * to one root per region, the roots to the coordinator. What the target received, what D1
 * holds and what the summary says must be the same count — with the tree's own faults too:
 * an aggregator restarted mid-window, windows delivered to it twice, an aggregator
 * unreachable until its shards' deadline. Start and abort travel down the tree.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AggregationTree } from "../../core/plan/aggregation-tree.ts";
import { aggregatorName, type FlushAck, type ChildFlush } from "../../core/run/protocol.ts";
import { FlushLog } from "../../coordinator/merge/flush-log.ts";
import { api, createRun, sleep, waitForStatus } from "../workers/helpers.ts";

const RATE = 60;
const DURATION_MS = 3_000;
const SCHEDULED = (RATE * DURATION_MS) / 1000;
const TREE_RUN = { rate: RATE, duration: `${DURATION_MS / 1000}s`, shards: 6, regions: ["wnam", "weur"], timeout: "2s" };

const shardOf = (runId: string, index: number) => env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`${runId}/${index}`));
const aggregatorOf = (runId: string, index: number) => env.RUN_AGGREGATOR.get(env.RUN_AGGREGATOR.idFromName(aggregatorName(runId, index)));
const until = (atMs: number) => sleep(Math.max(0, atMs - Date.now()));

async function treeOf(runId: string): Promise<AggregationTree> {
  const run = (await (await api(`/v1/runs/${runId}`)).json()) as { plan?: { tree?: AggregationTree } };
  if (run.plan?.tree) return run.plan.tree;
  const row = await env.DB.prepare("SELECT plan_json FROM runs WHERE id = ?").bind(runId).first<{ plan_json: string }>();
  return (JSON.parse(row!.plan_json) as { tree: AggregationTree }).tree;
}

/** What the target received of the run (its request ledger). */
async function received(runId: string): Promise<number> {
  const response = await fetch(`${env.TARGET_URL}/api/admin/test/request-ledger?run=${runId}`, {
    headers: { authorization: `Bearer ${env.TARGET_ADMIN_SECRET}` },
  });
  const body = (await response.json()) as { rows: Array<{ count: number }> };
  return body.rows.reduce((a, r) => a + r.count, 0);
}

/** Requests sent and measured as D1 holds them: the merged windows, and the shards' own rows. */
async function stored(runId: string) {
  const windows = await env.DB.prepare("SELECT COALESCE(SUM(sent), 0) AS sent, COALESCE(SUM(requests), 0) AS requests FROM windows WHERE run_id = ?")
    .bind(runId)
    .first<{ sent: number; requests: number }>();
  const shards = await env.DB.prepare("SELECT COUNT(*) AS n, COALESCE(SUM(requests), 0) AS requests, SUM(colo IS NULL) AS noColo FROM shards WHERE run_id = ?")
    .bind(runId)
    .first<{ n: number; requests: number; noColo: number }>();
  return { ...windows!, shardRows: shards!.n, shardRequests: shards!.requests, shardsWithoutColo: shards!.noColo };
}

async function summaryRequests(runId: string): Promise<number> {
  const summary = (await (await api(`/v1/runs/${runId}/summary`)).json()) as { metrics: { http_reqs?: { count: number } } };
  return summary.metrics.http_reqs?.count ?? 0;
}

/** Wraps RunAggregator's flush for one aggregator of one run (the prototype is shared, so a restart keeps it). */
async function interceptAggregator(runId: string, index: number, wrap: (m: ChildFlush, original: (m: ChildFlush) => Promise<FlushAck>) => Promise<FlushAck>) {
  let undo = () => {};
  await runInDurableObject(aggregatorOf(runId, index), (instance) => {
    type Flush = (this: { ctx: DurableObjectState }, m: ChildFlush) => Promise<FlushAck>;
    const proto = Object.getPrototypeOf(instance) as { flush: Flush };
    const original = proto.flush;
    proto.flush = async function (this: { ctx: DurableObjectState }, message: ChildFlush) {
      const call = (m: ChildFlush) => original.call(this, m);
      const mine = this.ctx.storage.kv.get<{ runId: string; index: number }>("node");
      return mine?.runId === runId && mine.index === index ? wrap(message, call) : call(message);
    };
    undo = () => void (proto.flush = original);
  });
  return undo;
}

/** Counts a run must agree on: scheduled = received by the target = in D1 = in the summary = in the shards' rows. */
async function expectCountedOnce(runId: string, scheduled = SCHEDULED) {
  const inD1 = await stored(runId);
  expect(await received(runId)).toBe(scheduled);
  expect(inD1.sent).toBe(scheduled);
  expect(inD1.requests).toBe(scheduled);
  expect(await summaryRequests(runId)).toBe(scheduled);
  expect(inD1.shardRows).toBe(6);
  expect(inD1.shardRequests).toBe(scheduled);
  expect(inD1.shardsWithoutColo).toBe(0);
}

describe("a run through an aggregation tree", () => {
  it("plans two levels, counts every request once, and writes every shard's row", async () => {
    const { id } = await createRun(TREE_RUN);
    const tree = await treeOf(id);
    // Per region: shards [a, b] [c] under two level-1 aggregators, those under the root.
    expect(tree.roots).toHaveLength(2);
    expect(tree.depth).toBe(2);
    const view = await waitForStatus(id, undefined, 60_000);
    expect(view.status).toBe("passed");
    expect(view.live.shardsDone).toBe(6);
    expect(view.live.shards).toBe(6);
    await expectCountedOnce(id);
    for (const a of tree.aggregators) {
      const state = await aggregatorOf(id, a.index).inspect();
      expect(state.allChildrenDone).toBe(true);
      expect(state.pendingWindows).toBe(0);
    }
  });

  it("passes an abort down: every shard stops within 5 s", async () => {
    const { id, startsAt } = await createRun({ ...TREE_RUN, duration: "6s" });
    const t0 = Date.parse(startsAt);
    await until(t0 + 1_500);
    const abortedAt = Date.now();
    expect((await api(`/v1/runs/${id}/abort`, { method: "POST" })).status).toBe(202);
    let stoppedAfterMs: number | null = null;
    while (Date.now() - abortedAt < 10_000) {
      const states = await Promise.all(Array.from({ length: 6 }, (_, i) => shardOf(id, i).inspect()));
      if (states.every((s) => s.phase === "done" && s.alarm === null)) {
        stoppedAfterMs = Date.now() - abortedAt;
        break;
      }
      await sleep(50);
    }
    expect(stoppedAfterMs).not.toBeNull();
    expect(stoppedAfterMs!).toBeLessThan(5_000);
    const view = await waitForStatus(id, undefined, 60_000);
    expect(view.status).toBe("aborted");
    const sent = await received(id);
    expect(sent).toBeLessThan(RATE * 6);
    expect((await stored(id)).sent).toBe(sent);
    expect(await summaryRequests(id)).toBe(sent);
  });

  it("counts once when a level-1 aggregator restarts mid-window, twice", async () => {
    const { id, startsAt } = await createRun(TREE_RUN);
    const t0 = Date.parse(startsAt);
    const tree = await treeOf(id);
    const leaf = tree.aggregators.find((a) => a.level === 1)!.index;
    for (const at of [1_300, 2_600]) {
      await until(t0 + at);
      await runInDurableObject(aggregatorOf(id, leaf), (_instance, state) => state.abort("fault: restarted")).catch(() => {});
    }
    expect((await waitForStatus(id, undefined, 60_000)).status).toBe("passed");
    await expectCountedOnce(id);
  });

  it("counts once when every window an aggregator accepted is delivered to it again", async () => {
    const { id, startsAt } = await createRun(TREE_RUN);
    const t0 = Date.parse(startsAt);
    const tree = await treeOf(id);
    const leaf = tree.aggregators.find((a) => a.level === 1)!;
    // A tree's shards send every fourth window, each at its phase: wait for the leaf's first.
    await until(t0 + 1_000);
    let accepted: Awaited<ReturnType<FlushLog["keptWindows"]>> = [];
    while (!accepted.length && Date.now() < t0 + DURATION_MS + 5_000) {
      accepted = await runInDurableObject(aggregatorOf(id, leaf.index), (_instance, state) => new FlushLog(state.storage.sql).keptWindows());
      if (!accepted.length) await sleep(200);
    }
    expect(accepted.length).toBeGreaterThan(0);
    const telemetry = { region: leaf.region, colo: "local", invocations: 1, restarts: 0, subrequests: 0, peakInFlight: 0 };
    let duplicates = 0;
    for (const { child, window } of accepted) {
      const ack = await aggregatorOf(id, leaf.index).flush({ runId: id, childIndex: child, windows: [window], watermarkS: 0, done: false, telemetry });
      duplicates += ack.duplicates;
    }
    expect(duplicates).toBe(accepted.length);
    expect((await waitForStatus(id, undefined, 60_000)).status).toBe("passed");
    await expectCountedOnce(id);
  });

  it("counts once when an aggregator is unreachable until its shards' deadline", async () => {
    const { id, startsAt } = await createRun(TREE_RUN);
    const t0 = Date.parse(startsAt);
    const tree = await treeOf(id);
    const leaf = tree.aggregators.find((a) => a.level === 1)!.index;
    const reachableAt = t0 + DURATION_MS + 2_000;
    const undo = await interceptAggregator(id, leaf, (message, original) =>
      Date.now() < reachableAt ? Promise.reject(new Error("fault: aggregator unreachable")) : original(message),
    );
    try {
      expect((await waitForStatus(id, undefined, 80_000)).status).toBe("passed");
    } finally {
      undo();
    }
    await expectCountedOnce(id);
  });
});
