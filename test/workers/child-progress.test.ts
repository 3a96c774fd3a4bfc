/**
 * The coordinator keeps its shards' progress (watermark, done, telemetry) in a row apart
 * from the run record, so a flush does not rewrite the record, written at most every few
 * seconds unless a shard is newly done: checked on the real SQLite storage of a coordinator
 * object, across its eviction, and after a real run.
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { PERSIST_EVERY_MS, ChildProgress } from "../../coordinator/merge/child-progress.ts";
import type { ShardTelemetry } from "../../core/run/protocol.ts";
import { createRun, waitForStatus } from "./helpers.ts";

const coordinatorOf = (name: string) => env.RUN_COORDINATOR.get(env.RUN_COORDINATOR.idFromName(name));
const telemetry = (peakInFlight: number): ShardTelemetry => ({ region: "wnam", colo: "local", invocations: 1, restarts: 0, subrequests: 10, peakInFlight });

describe("shard progress", () => {
  it("moves watermarks forward only, keeps done, and reads back after eviction what it wrote", async () => {
    const stub = coordinatorOf("progress-only");
    const t = 1_000_000;
    await runInDurableObject(stub, (_instance, state) => {
      const progress = new ChildProgress(state.storage.sql);
      progress.start(new Map([[2, 5]])); // a named scenario's shard that starts at 5 s
      progress.record(0, 3, false, telemetry(4), t);
      progress.record(0, 1, false, telemetry(6), t + 1_000); // a late, reordered flush
      progress.record(1, 2, true, telemetry(1), t + 1_000);
      progress.record(1, 2, false, telemetry(1), t + 2_000); // a retried older flush
      progress.record(3, 1, false, telemetry(2), t);
      progress.record(3, 4, false, telemetry(3), t + 1_000); // within PERSIST_EVERY_MS of the done's write: kept in memory
      progress.record(0, 6, false, telemetry(8), t + 1_000 + PERSIST_EVERY_MS); // due: everything written
      progress.record(3, 7, false, telemetry(5), t + 2_000 + PERSIST_EVERY_MS); // not due again yet
      expect([progress.watermark(0), progress.watermark(1), progress.watermark(2), progress.watermark(3)]).toEqual([6, 2, 5, 7]);
      expect(progress.doneShards()).toEqual([1]);
      expect(progress.peakInFlight()).toBe(14);
    });
    await evictDurableObject(stub);
    await runInDurableObject(stub, (_instance, state) => {
      const progress = new ChildProgress(state.storage.sql);
      // Shard 3 is one write behind; done (shard 1) was written at once.
      expect([progress.watermark(0), progress.watermark(1), progress.watermark(2), progress.watermark(3)]).toEqual([6, 2, 5, 4]);
      expect(progress.doneShards()).toEqual([1]);
      expect(progress.doneCount).toBe(1);
      expect(progress.telemetry(0)).toEqual(telemetry(8));
      expect(progress.telemetry(3)).toEqual(telemetry(3));
      expect(progress.telemetry(2)).toBeNull();
    });
  });

  it("a run's record carries no per-shard progress; the progress row holds every shard done", async () => {
    const { id } = await createRun({ rate: 20 });
    expect((await waitForStatus(id)).status).toBe("passed");
    await runInDurableObject(coordinatorOf(id), (_instance, state) => {
      const record = state.storage.kv.get<Record<string, unknown>>("run")!;
      expect(Object.keys(record)).not.toContain("telemetry");
      expect(Object.keys(record)).not.toContain("watermarks");
      const progress = new ChildProgress(state.storage.sql);
      expect(progress.doneShards()).toEqual([0, 1]);
      expect([0, 1].every((shard) => progress.telemetry(shard)?.colo === "local")).toBe(true);
    });
  });
});
