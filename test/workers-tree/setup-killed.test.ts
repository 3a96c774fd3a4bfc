/**
 * A run's setup phase dying under it (issue 47), the two ways the chaos bench
 * (scripts/bench/chaos/) means by its `setup-killed` fault: the coordinator restarted while
 * the run's setup steps run — played here as the bench plays it, one fault alone — and a k6
 * script whose setup() isolate cannot start (a hand-made bundle whose entry throws as it
 * loads: bundling needs esbuild, which workerd has not; test/workers/script-start.test.ts has
 * the same isolate failing at the shards instead). Either way the run ends in `error` before
 * any shard started, with nothing sent.
 */
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../core/data/web-crypto.ts";
import { judge } from "../../scripts/bench/chaos/invariants.ts";
import { shardOf } from "../../scripts/bench/faults/in-workerd/chaos-faults.ts";
import { playSchedule, uploadChaosSeed } from "../../scripts/bench/faults/in-workerd/chaos-run.ts";
import { api, createRun, waitForStatus } from "../workers/helpers.ts";

describe("a run's setup killed", () => {
  it("the coordinator restarted during the setup steps: ended in error at its setup deadline, nothing sent, every invariant held", async () => {
    await uploadChaosSeed();
    const observed = await playSchedule({ seed: 0, shape: "flat", faults: [{ kind: "setup-killed", atMs: 0, intoSetupMs: 300 }] });
    expect(observed.status).toBe("error");
    expect(observed.received + observed.summary.sent).toBe(0);
    expect(judge(observed).why).toEqual([]);
  });

  it("a script whose setup() isolate cannot start: error naming why, no shard started, nothing sent", async () => {
    const bundle = JSON.stringify({
      "main.js": 'throw new Error("setup isolate failed at the edge");\nexport default {};',
      "script.js": "export const files = {};",
    });
    const id = await sha256Hex(bundle);
    expect((await api(`/v1/scripts/${id}`, { method: "PUT", body: bundle })).status).toBe(201);
    const run = await createRun({
      script: { bundle: id, exec: "default", setup: true },
      steps: [{ name: "default", path: "/" }],
      rate: 5,
      duration: "1s",
      shards: 1,
      regions: ["wnam"],
    });
    const view = await waitForStatus(run.id, undefined, 60_000);
    expect(view.status).toBe("error");
    expect(view.abortReason).toMatch(/^setup\(\) could not run: [\s\S]*setup isolate failed at the edge/);
    // Its shard was never given its assignment: no phase at all.
    expect((await shardOf(run.id, 0).inspect()).phase).toBeUndefined();
    const summary = (await (await api(`/v1/runs/${run.id}/summary`)).json()) as {
      metrics: Record<string, { count?: number }>;
      edgeload: { totals: { sent: number } };
    };
    expect(summary.edgeload.totals.sent).toBe(0);
    expect(summary.metrics.iterations?.count ?? 0).toBe(0);
  });
});
