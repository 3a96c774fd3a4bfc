/**
 * 4. soak: one long run (default 3 minutes at 300/s, 8 shards, a closed-model flow is not
 *    needed: memory is per window, not per request) sampling the generator's resident
 *    memory every 10 s and the D1 rows written per second. Histograms, not samples, so
 *    memory must plateau after the first windows; the check compares the last third of
 *    the run with the middle third.
 *
 * Why: a run may last an hour; a generator whose memory grew with the requests sent, or
 * that wrote more D1 rows than the write bound, would fail long runs that short ones pass.
 *
 *   npm run bench -- soak [--soak-duration 3m] [--soak-rate 300]
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EdgeloadClient } from "../../cli/client.ts";
import { startLocalStack } from "../../cli/local-stack.ts";
import { residentBytes } from "../../cli/processes.ts";
import { parseDurationMs } from "../../core/spec/duration.ts";
import { plainTable } from "./plain-table.ts";

export async function soakBench(duration: string, rate: number): Promise<void> {
  const durationS = Math.round((parseDurationMs(duration) ?? 180_000) / 1000);
  console.log(`\n## Soak: ${rate}/s for ${durationS} s against /delay?ms=20, 8 shards in 4 regions; generator RSS every 10 s\n`);
  const stateDir = await mkdtemp(join(tmpdir(), "edgeload-soak-"));
  const stack = await startLocalStack({ persist: stateDir });
  try {
    const client = new EdgeloadClient(stack.apiUrl, stack.token);
    const pids = stack.processes.coordinator;
    const run = await client.createRun({
      name: "soak",
      target: stack.targetUrl,
      steps: [{ path: "/delay?ms=20" }],
      executor: "constant-arrival-rate",
      rate,
      duration: `${durationS}s`,
      shards: 8,
      regions: ["wnam", "enam", "weur", "apac"],
      maxVUs: rate * 2,
      timeout: "10s",
    });
    const samples: Array<{ t: number; rssMb: number }> = [];
    const started = Date.now();
    const sampler = setInterval(() => samples.push({ t: Math.round((Date.now() - started) / 1000), rssMb: residentBytes(pids) / 2 ** 20 }), 10_000);
    const view = await client.waitForEnd(run.id, () => {}, 2000);
    clearInterval(sampler);
    const s = await client.summary(run.id);
    const m = s.metrics as Record<string, any>;
    const rows = await client.sql(
      "SELECT (SELECT COUNT(*) FROM windows WHERE run_id = ?1) + (SELECT COUNT(*) FROM histograms WHERE run_id = ?1) AS rows, (SELECT COUNT(DISTINCT window_s) FROM windows WHERE run_id = ?1) AS seconds",
      [run.id],
    );
    const { rows: written, seconds } = rows.rows[0] as { rows: number; seconds: number };
    const third = Math.floor(samples.length / 3);
    const mean = (xs: typeof samples) => xs.reduce((a, x) => a + x.rssMb, 0) / Math.max(1, xs.length);
    const middle = mean(samples.slice(third, 2 * third));
    const last = mean(samples.slice(2 * third));
    console.log(
      plainTable([
        ["t (s)", ...samples.map((x) => String(x.t))],
        ["generator RSS (MB)", ...samples.map((x) => x.rssMb.toFixed(0))],
      ]),
    );
    console.log(`\n  ${view.status}: ${m.http_reqs.count} requests, ${m.dropped_iterations.count} dropped, p99 ${m.http_req_duration["p(99)"]} ms`);
    console.log(
      `  RSS middle third ${middle.toFixed(1)} MB → last third ${last.toFixed(1)} MB (${(((last - middle) / middle) * 100).toFixed(1)}%): ${last <= middle * 1.1 ? "bounded" : "GROWING"}`,
    );
    console.log(`  D1: ${written} rows over ${seconds} s = ${(written / Math.max(1, seconds)).toFixed(1)} rows/s (bound: 4 regions × 1 step × 7 = 28/s)`);
  } finally {
    await stack.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}
