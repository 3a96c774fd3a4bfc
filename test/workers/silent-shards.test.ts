/**
 * A run whose shard goes quiet for good must not pass: what the shard measured is missing,
 * so the run ends inconclusive (exit 75) with the reason, in the API's `?wait=` answer and
 * in the summary, whatever its thresholds say about what did arrive.
 */
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createRun, sleep } from "./helpers.ts";

const shardOf = (runId: string, index: number) => env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`${runId}/${index}`));

describe("a shard that never reports done", () => {
  it("ends the run inconclusive with exit code 75 and says which shards are missing", async () => {
    // 2 shards, 4 s, a 1 s request timeout and no graceful stop: the coordinator waits for
    // shard 1 until 4 + 1 + 15 s (FINISH_GRACE_MS) after T0, then finishes without it.
    // Shard 0, killed with it, resumes from its storage and sends the rest of its share.
    const { id, startsAt } = await createRun({
      rate: 20,
      duration: "4s",
      timeout: "1s",
      gracefulStop: "0s",
      thresholds: { http_req_failed: ["rate<0.5"] },
      // Shard 0's restart loses part of its share too: allowed here, so the silent shard alone decides.
      maxNotSentShare: 1,
    });
    await sleep(Date.parse(startsAt) + 1_500 - Date.now());
    // Shard 1 dies and forgets its run: no alarm, no assignment, so it never flushes again.
    await runInDurableObject(shardOf(id, 1), async (_instance, state) => {
      await state.storage.deleteAlarm();
      await state.storage.deleteAll();
    });
    await abortAllDurableObjects();

    const answer = (await (await api(`/v1/runs/${id}?wait=60`)).json()) as Record<string, any>;
    expect(answer.done).toBe(true);
    expect(answer.status).toBe("inconclusive");
    expect(answer.exitCode).toBe(75);
    expect(answer.verdict).toEqual({ kind: "inconclusive", reasons: ["1 of 2 shards never reported done: what they measured is missing"] });

    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    expect(summary.edgeload.status).toBe("inconclusive");
    expect(summary.edgeload.exitCode).toBe(75);
    // The threshold held on what arrived (shard 0's requests): it is the missing shard that
    // keeps the run from passing.
    expect(summary.edgeload.thresholds[0]).toMatchObject({ state: "passed" });
    expect(summary.metrics.http_reqs.count).toBeGreaterThan(0);
  }, 90_000);
});
