/**
 * How many dashboards one RunCoordinator serves while a 16-shard run goes, and what serving
 * them costs: the same run (16 shards in 4 regions, --watchers-rate for 15 s against the
 * local target) with 0, then N, live event streams open (GET /v1/runs/:id/live on the
 * coordinator's own workerd socket). For each: streams opened and refused, whether every
 * stream received every window and the end, the bytes each received, and the CPU of the
 * workerd process that runs the coordinator (and the shards, whose share is the same in
 * every row). The extra CPU per window merge is (CPU with N − CPU with 0) ÷ windows, the
 * runs without watchers going first and last so their spread shows the machine's noise.
 *
 * Clients are opened in batches before T0 and read everything; they stop with the run.
 */
import { EdgeloadClient } from "../../cli/client.ts";
import { startLocalStack, type LocalStack } from "../../cli/local-stack.ts";
import { cpuSeconds } from "../../cli/processes.ts";
import { MAX_LIVE_CLIENTS } from "../../coordinator/run/live-stream.ts";
import { createSseReader } from "../../core/formats/sse.ts";
import { markdownTable } from "./markdown-table.ts";

interface WatcherResult {
  readonly watchers: number;
  readonly opened: number;
  readonly refused: number;
  /** Streams that received every window and the end event. */
  readonly complete: number;
  readonly windows: number;
  readonly bytesPerStream: number;
  readonly cpuS: number;
  readonly requests: number;
}

interface StreamTally {
  windows: number;
  ended: boolean;
  bytes: number;
}

/** A stream: `opened` once its answer's status is in, `read` once it has ended. */
function watch(url: string, token: string): { opened: Promise<Response>; read: Promise<StreamTally | null> } {
  const opened = fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return { opened, read: opened.then(readStream, () => null) };
}

async function readStream(response: Response): Promise<StreamTally | null> {
  if (response.status !== 200) {
    await response.body?.cancel();
    return null;
  }
  const tally: StreamTally = { windows: 0, ended: false, bytes: 0 };
  const reader = createSseReader((e) => {
    if (e.event === "window") tally.windows++;
    else if (e.event === "end") tally.ended = true;
  });
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    tally.bytes += chunk.byteLength;
    reader.push(chunk);
  }
  reader.end();
  return tally;
}

async function oneRun(stack: LocalStack, watchers: number, rate: number): Promise<WatcherResult> {
  const client = new EdgeloadClient(stack.apiUrl, stack.token);
  const pids = stack.processes.coordinator;
  const run = await client.createRun({
    name: `dashboard watchers ${watchers}`,
    target: stack.targetUrl,
    steps: [{ path: "/delay?ms=5" }],
    executor: "constant-arrival-rate",
    rate,
    duration: "15s",
    shards: 16,
    regions: ["wnam", "enam", "weur", "apac"],
    timeout: "5s",
  });
  const cpuBefore = cpuSeconds(pids);
  const url = `${stack.apiDirectUrl}/v1/runs/${run.id}/live`;
  const streams: Array<Promise<StreamTally | null>> = [];
  for (let i = 0; i < watchers; i += 100) {
    const batch = Array.from({ length: Math.min(100, watchers - i) }, () => watch(url, stack.token));
    streams.push(...batch.map((b) => b.read));
    await Promise.all(batch.map((b) => b.opened.catch(() => null)));
  }
  // One more than the cap is refused while the others are open.
  const beyond = watchers >= MAX_LIVE_CLIENTS ? await fetch(url, { headers: { authorization: `Bearer ${stack.token}` } }) : null;
  if (beyond) await beyond.body?.cancel();
  await client.waitForEnd(run.id, () => {}, 1000);
  const tallies = await Promise.all(streams.map((s) => s.catch(() => null)));
  const cpuS = cpuSeconds(pids) - cpuBefore;
  const summary = await client.summary(run.id);
  // Every window the run has, as a page opened now receives them (its history).
  const after = await fetch(url, { headers: { authorization: `Bearer ${stack.token}` } });
  let windows = 0;
  const history = createSseReader((e) => {
    if (e.event === "history") windows = (JSON.parse(e.data) as unknown[]).length;
  });
  history.push(await after.text());
  history.end();
  const opened = tallies.filter((t) => t !== null);
  return {
    watchers,
    opened: opened.length,
    refused: tallies.length - opened.length + (beyond?.status === 503 ? 1 : 0),
    complete: opened.filter((t) => t.ended && t.windows === windows).length,
    windows,
    bytesPerStream: opened.length ? Math.round(opened.reduce((s, t) => s + t.bytes, 0) / opened.length) : 0,
    cpuS,
    requests: (summary.metrics as Record<string, { count: number }>).http_reqs!.count,
  };
}

export async function dashboardBench(counts: readonly number[], rate: number): Promise<boolean> {
  console.log(`\n## Dashboard: live streams one coordinator serves during a 16-shard run (${rate}/s for 15 s)\n`);
  const stack = await startLocalStack({ persist: false, vars: { MAX_SHARDS: "16" } });
  try {
    const results: WatcherResult[] = [];
    for (const watchers of counts) {
      const result = await oneRun(stack, watchers, rate);
      results.push(result);
      console.error(`  ${watchers} watchers: ${JSON.stringify(result)}`);
    }
    // The baseline is the mean of the rows without watchers (run first and last, to see the noise).
    const zero = results.filter((r) => r.watchers === 0);
    const base = zero.length ? { cpuS: zero.reduce((sum, r) => sum + r.cpuS, 0) / zero.length } : undefined;
    const header = [
      "watchers",
      "opened",
      "refused",
      "got every window + end",
      "KiB per stream",
      "coordinator CPU s",
      "extra CPU ms per window",
      "per window per watcher µs",
    ];
    const rows = results.map((r) => {
      const extraMs = base ? ((r.cpuS - base.cpuS) * 1000) / r.windows : NaN;
      return [
        String(r.watchers),
        String(r.opened),
        String(r.refused),
        `${r.complete} of ${r.opened}`,
        (r.bytesPerStream / 1024).toFixed(1),
        r.cpuS.toFixed(2),
        r.watchers && base ? extraMs.toFixed(1) : "–",
        r.watchers && base ? ((extraMs * 1000) / r.watchers).toFixed(1) : "–",
      ];
    });
    console.log(markdownTable(header, rows));
    console.log(`\nrequests per run: ${results.map((r) => r.requests).join(", ")}; at most ${MAX_LIVE_CLIENTS} streams per run (one more answers 503)`);
    return results.every((r) => r.complete === r.opened && r.opened === Math.min(r.watchers, MAX_LIVE_CLIENTS));
  } finally {
    await stack.stop();
  }
}
