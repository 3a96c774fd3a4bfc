/**
 * A run whose k6 script called exec.test.fail(): the mark arrives in a flushed window's script
 * output (core/metrics/script-output.ts `f`), the run goes on to its end, and ends `failed`
 * with exit 110 and the script's reason — also when its coordinator was evicted after the mark
 * arrived (the mark is kept with the run's record, coordinator/run/run-record.ts markedFailed).
 */
import { evictDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MetricStats } from "../../core/metrics/metric-stats.ts";
import { api, createRun, waitForStatus } from "./helpers.ts";

const coordinatorOf = (runId: string) => env.RUN_COORDINATOR.get(env.RUN_COORDINATOR.idFromName(runId));

describe("a run its script marked failed", () => {
  it("goes on to its end and ends failed, exit 110, with the script's reason, after its coordinator was evicted", async () => {
    const { id } = await createRun({ rate: 20, duration: "2s" });
    const marked = new MetricStats();
    marked.script.markFailed("soft check failed");
    const flush = {
      runId: id,
      childIndex: 0,
      watermarkS: 0,
      done: false,
      windows: [{ windowS: 0, part: 99, steps: [[0, marked.toWire()] as const] }],
      telemetry: { region: "wnam", colo: "local", invocations: 1, restarts: 0, subrequests: 0, peakInFlight: 0 },
    };
    // Not a stop: the shard is not told to stop, as it would be by an abort.
    expect(await coordinatorOf(id).flush(flush)).toMatchObject({ accepted: 1, stop: false });
    await evictDurableObject(coordinatorOf(id));
    const view = await waitForStatus(id);
    expect(view).toMatchObject({ status: "failed", exitCode: 110, endedByScript: true, abortReason: "marked failed by the script: soft check failed" });
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    // Every request of its schedule was sent: the mark stopped nothing.
    expect(summary.metrics.http_reqs.count).toBe(40);
    expect(summary.edgeload.verdict).toEqual({ kind: "failed", reasons: ["marked failed by the script: soft check failed"] });
  });
});
