/**
 * Nothing left behind in a run with an aggregation tree (issue 49; fan-in 2 in this project):
 * every aggregator lets go of its storage but a tombstone once its done is acknowledged, and
 * the coordinator's clean-up passes down the tree to every aggregator and shard, so none of
 * the run's objects holds anything — even an aggregator whose own storage was gone already
 * still reaches its children, from the tree the clean-up carries.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AggregationTree } from "../../core/plan/aggregation-tree.ts";
import { aggregatorName } from "../../core/run/protocol.ts";
import { api, coordinatorOf, createRun, shardOf, storageOf, waitForStatus } from "../workers/helpers.ts";

const aggregatorOf = (id: string, i: number) => env.RUN_AGGREGATOR.get(env.RUN_AGGREGATOR.idFromName(aggregatorName(id, i)));

const NOTHING = { keys: [], tables: [], alarm: null };

describe("a tree run's objects once it is over", () => {
  it("keep nothing once the run is final and in D1, aggregators included", async () => {
    const { id } = await createRun({ rate: 30, duration: "2s", shards: 6, regions: ["wnam", "weur"], timeout: "2s" });
    expect((await waitForStatus(id, undefined, 60_000)).status).toBe("passed");
    const row = await env.DB.prepare("SELECT plan_json FROM runs WHERE id = ?").bind(id).first<{ plan_json: string }>();
    const tree = (JSON.parse(row!.plan_json) as { tree: AggregationTree }).tree;
    expect(tree.aggregators.length).toBeGreaterThan(2);
    // Each aggregator's done was acknowledged before the run ended: a tombstone is all it keeps, and inspect() still answers.
    for (const a of tree.aggregators) {
      expect((await storageOf(aggregatorOf(id, a.index))).keys).toEqual(["ended"]);
      expect(await aggregatorOf(id, a.index).inspect()).toMatchObject({ allChildrenDone: true, pendingWindows: 0, alarm: null });
    }
    // A level-1 aggregator empty already, and a shard under it that still holds something: the clean-up reaches it through the tree.
    const leaf = tree.aggregators.find((a) => a.level === 1)!;
    await runInDurableObject(aggregatorOf(id, leaf.index), (_instance, state) => state.storage.deleteAll());
    await runInDurableObject(shardOf(id, leaf.children[0]!), (_instance, state) => state.storage.kv.put("state", { left: "behind" }));
    const summary = await (await api(`/v1/runs/${id}/summary`)).json();

    expect(await runDurableObjectAlarm(coordinatorOf(id))).toBe(true);
    for (const stub of [coordinatorOf(id), ...tree.aggregators.map((a) => aggregatorOf(id, a.index)), ...Array.from({ length: 6 }, (_, i) => shardOf(id, i))])
      expect(await storageOf(stub)).toMatchObject(NOTHING);
    expect(await (await api(`/v1/runs/${id}/summary`)).json()).toEqual(summary);
    expect(((await (await api(`/v1/runs/${id}`)).json()) as { status: string }).status).toBe("passed");
  });
});
