/**
 * 5. streams: one shard ramping 0 → 1,000 VUs over 20 s, each VU opening an SSE stream of
 *    the local target (a heartbeat every second) and holding it to the end. The generator's
 *    resident memory is sampled every second with the VUs the schedule has active; the
 *    slope of memory against open streams (least squares over the ramp) is what one held
 *    stream costs — measured within one run, so the process's own baseline cancels out.
 *    STREAM_MEMORY_BYTES in core/plan/plan.ts (160 KiB) should stay above it.
 *
 * Why: an open stream keeps its memory while it is held, so the plan gives a run with
 * stream steps enough shards that each holds at most STREAMS_PER_SHARD within an isolate's
 * memory; this is the figure that bound rests on.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EdgeloadClient } from "../../cli/client.ts";
import { startLocalStack } from "../../cli/local-stack.ts";
import { residentBytes } from "../../cli/processes.ts";
import { STREAM_MEMORY_BYTES } from "../../core/plan/plan.ts";
import { plainTable } from "./plain-table.ts";

export async function streamsBench(): Promise<void> {
  console.log("\n## Streams: generator memory per open SSE stream (one shard, 0 → 1,000 streams over 20 s)\n");
  const stateDir = await mkdtemp(join(tmpdir(), "edgeload-streams-"));
  const stack = await startLocalStack({ persist: stateDir });
  try {
    const client = new EdgeloadClient(stack.apiUrl, stack.token);
    const pids = stack.processes.coordinator;
    const run = await client.createRun({
      name: "streams",
      target: stack.targetUrl,
      executor: "ramping-vus",
      startVUs: 0,
      stages: [
        { target: 1000, duration: "20s" },
        { target: 1000, duration: "5s" },
      ],
      shards: 1,
      regions: ["wnam"],
      timeout: "10s",
      steps: [{ path: "/app/config/stream?heartbeat=1000", sse: {} }],
    });
    const samples: Array<{ vus: number; rss: number }> = [];
    for (;;) {
      const view = await client.getRun(run.id);
      if (view.status !== "running" && view.status !== "pending") break;
      if (view.live.targetVUs !== undefined && view.progress.elapsedS > 0) samples.push({ vus: view.live.targetVUs, rss: residentBytes(pids) });
      await new Promise((r) => setTimeout(r, 1000));
    }
    await client.waitForEnd(run.id, () => {}, 1000);
    const summary = await client.summary(run.id);
    const m = summary.metrics as Record<string, any>;
    const ramp = samples.filter((x) => x.vus > 0 && x.vus < 1000);
    const n = ramp.length;
    const mx = ramp.reduce((a, x) => a + x.vus, 0) / n;
    const my = ramp.reduce((a, x) => a + x.rss, 0) / n;
    const slope = ramp.reduce((a, x) => a + (x.vus - mx) * (x.rss - my), 0) / ramp.reduce((a, x) => a + (x.vus - mx) ** 2, 0);
    console.log(
      plainTable([
        ["open streams", ...samples.map((x) => String(x.vus))],
        ["generator RSS (MB)", ...samples.map((x) => (x.rss / 2 ** 20).toFixed(0))],
      ]),
    );
    console.log(`\n  ${m.http_reqs.count} streams opened, ${m.sse_streams_ended_early?.count ?? 0} ended early, ${m.sse_messages?.count ?? 0} events`);
    console.log(
      `  memory per held stream: ${(slope / 1024).toFixed(1)} KiB (least squares over ${n} samples of the ramp); the plan assumes ${STREAM_MEMORY_BYTES / 1024} KiB`,
    );
  } finally {
    await stack.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}
