/**
 * The clients the generator bench (generator-bench.ts) sets side by side, each run once and
 * measured into the same GeneratorResult: edgeload on the local stack, k6 (a native binary,
 * the reference), and bare fetch loops in workerd (the floors: what any fetch-based generator
 * pays in workerd, with nothing of edgeload in them). CPU is read from /proc for each
 * client's own processes, so the figures compare as ratios within one run.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EdgeloadClient } from "../../cli/client.ts";
import { PROJECT_ROOT, type LocalStack } from "../../cli/local-stack.ts";
import { cpuSeconds, reapedChildrenCpuSeconds } from "../../cli/processes.ts";
import { edgeFigures, type Latency, type LoadFigures } from "../../core/results/crosscheck.ts";
import { parseK6Summary } from "../../core/formats/k6-summary.ts";
import { startFetchFloor } from "../../cli/fetch-floor.ts";
import { floorLatency } from "../../cli/floor-replay.ts";
import { p95PerSecond } from "./per-second.ts";

export interface GeneratorResult {
  readonly name: string;
  readonly requests: number;
  readonly achievedPerS: number;
  readonly dropped: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  readonly cpuS: number;
  /** CPU the target's workerd spent meanwhile: a client whose requests cost the target more shows here. */
  readonly targetCpuS?: number;
  /** edgeload only: the generator's own event-loop delay at responses, p95 and p99 (ms). */
  readonly clientDelayMs?: { readonly p95: number; readonly p99: number };
  /** What a crosscheck compares (edgeload's summary, k6's summary export). */
  readonly figures?: LoadFigures;
  /** A paced floor's latencies as a crosscheck row reads them (the runtime's own, core/results/crosscheck-attribution.ts). */
  readonly floorLatency?: Latency;
  /** The p95 of each second of the run, in ms (per-second.ts), where the client can tell. */
  readonly p95BySecond?: readonly number[];
  /** edgeload only: the most its event loop held a response in each second (client_delay's max, ms). */
  readonly clientDelayMaxBySecond?: readonly number[];
}

export async function runK6(k6: string, targetUrl: string, rate: number, duration: string): Promise<GeneratorResult> {
  const dir = await mkdtemp(join(tmpdir(), "edgeload-bench-"));
  const exportFile = join(dir, "k6.json");
  // Every sample as a JSON line, for the per-second p95s the summary export does not give.
  const samplesFile = join(dir, "samples.json");
  const cpuBefore = reapedChildrenCpuSeconds();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(
      k6,
      [
        "run",
        "--quiet",
        "--no-usage-report",
        "--summary-export",
        exportFile,
        "--out",
        `json=${samplesFile}`,
        join(PROJECT_ROOT, "scripts/bench/k6-constant-rate.js"),
      ],
      {
        env: { ...process.env, TARGET_URL: targetUrl, RATE: String(rate), DURATION: duration, VUS: String(Math.max(100, Math.ceil(rate / 5))) },
        stdio: ["ignore", "ignore", "inherit"],
      },
    );
    child.on("error", reject);
    child.on("close", (code) => (code === 0 || code === 99 ? resolve() : reject(new Error(`k6 exited ${code}`))));
  });
  const cpuS = reapedChildrenCpuSeconds() - cpuBefore;
  const exported = JSON.parse(await readFile(exportFile, "utf8"));
  const m = exported.metrics;
  const parsed = parseK6Summary(exported);
  const p95BySecond = k6SecondsP95(await readFile(samplesFile, "utf8"));
  await rm(dir, { recursive: true, force: true });
  const durationS = parseFloat(duration);
  return {
    name: "k6",
    requests: m.http_reqs.count,
    achievedPerS: m.http_reqs.count / durationS,
    dropped: m.dropped_iterations?.count ?? 0,
    p50Ms: m.http_req_duration.med,
    p95Ms: m.http_req_duration["p(95)"],
    p99Ms: m.http_req_duration["p(99)"],
    cpuS,
    ...(parsed.ok ? { figures: parsed.figures } : {}),
    p95BySecond,
  };
}

/** http_req_duration's p95 per second from k6's JSON lines, seconds counted from the first sample. */
function k6SecondsP95(jsonLines: string): number[] {
  const points: Array<{ atMs: number; ms: number }> = [];
  for (const line of jsonLines.split("\n")) {
    if (!line.includes('"http_req_duration"') || !line.includes('"Point"')) continue;
    const { data } = JSON.parse(line) as { data: { time: string; value: number } };
    points.push({ atMs: Date.parse(data.time), ms: data.value });
  }
  const startMs = Math.min(...points.map((p) => p.atMs));
  return p95PerSecond(points.map((p) => ({ second: Math.floor((p.atMs - startMs) / 1000), ms: p.ms })));
}

/** The generator table's name for the paced loop run inside a Durable Object. */
const PACED_OBJECT = "paced floor in an object";

/**
 * CPU per request of a bare fetch loop in workerd against the same target: closed (25 at a
 * time, no timers) or, with `rate`, paced on the open-model schedule (one timer per send);
 * in a plain Worker, or with `inObject` in a Durable Object, where edgeload's shards send from.
 */
export async function fetchFloor(targetUrl: string, requests: number, rate?: number, inObject = false): Promise<GeneratorResult> {
  const floor = await startFetchFloor(targetUrl);
  try {
    const cpuBefore = cpuSeconds(floor.pids);
    const started = performance.now();
    const answer = await floor.loop(targetUrl, { n: requests, ...(rate ? { rate } : { concurrency: 25 }), ...(inObject ? { in: "object" } : {}) });
    const wallS = (performance.now() - started) / 1000;
    return {
      name: rate ? (inObject ? PACED_OBJECT : "paced fetch floor") : "workerd fetch floor",
      requests,
      achievedPerS: requests / wallS,
      dropped: 0,
      p50Ms: answer.p50Ms ?? NaN,
      p95Ms: answer.p95Ms ?? NaN,
      p99Ms: answer.p99Ms ?? NaN,
      cpuS: cpuSeconds(floor.pids) - cpuBefore,
      ...(rate ? { floorLatency: floorLatency(answer) } : {}),
      ...(answer.bySecondMs ? { p95BySecond: p95PerSecond(answer.bySecondMs.flatMap((values, second) => (values ?? []).map((ms) => ({ second, ms })))) } : {}),
    };
  } finally {
    await floor.dispose();
  }
}

/**
 * The regions of a bench's run: four, as a user's run spans, but a forced count below four
 * runs in one (the caps refuse fewer shards than regions), so `--shards 1` isolates one shard.
 */
export function benchRegions(shards: number | null): string[] {
  return shards !== null && shards < 4 ? ["wnam"] : ["wnam", "enam", "weur", "apac"];
}

/** One edgeload run; `shards` null leaves the count to the plan, as a user's run does. */
export async function edgeloadRun(
  stack: LocalStack,
  targetUrl: string,
  path: string,
  rate: number,
  duration: string,
  shards: number | null,
): Promise<GeneratorResult> {
  const client = new EdgeloadClient(stack.apiUrl, stack.token);
  const generatorPids = stack.processes.coordinator;
  if (generatorPids.length === 0) throw new Error("could not find the generator's workerd process in /proc");
  const cpuBefore = cpuSeconds(generatorPids);
  const run = await client.createRun({
    name: "bench",
    target: targetUrl,
    steps: [{ path }],
    executor: "constant-arrival-rate",
    rate,
    duration,
    ...(shards === null ? {} : { shards }),
    regions: benchRegions(shards),
    maxVUs: Math.max(200, rate),
    timeout: "10s",
  });
  await client.follow(run.id, () => {}); // as `edgeload run` follows a run
  const cpuS = cpuSeconds(generatorPids) - cpuBefore;
  const s = await client.summary(run.id);
  const { p95BySecond, clientDelayMaxBySecond } = await runBySecond(stack, run.id);
  const m = s.metrics as Record<string, any>;
  if (s.edgeload.saturated) console.log(`  note: edgeload reported saturation at ${rate}/s: ${s.edgeload.saturation.join("; ")}`);
  return {
    name: `edgeload (${s.edgeload.plan.shards} shards)`,
    requests: m.http_reqs.count,
    achievedPerS: s.edgeload.achievedRatePerS,
    dropped: m.dropped_iterations.count,
    p50Ms: m.http_req_duration.med,
    p95Ms: m.http_req_duration["p(95)"],
    p99Ms: m.http_req_duration["p(99)"],
    cpuS,
    ...(s.edgeload.totals.client_delay
      ? { clientDelayMs: { p95: s.edgeload.totals.client_delay["p(95)"], p99: s.edgeload.totals.client_delay["p(99)"] } }
      : {}),
    figures: edgeFigures(s),
    p95BySecond,
    clientDelayMaxBySecond,
  };
}

/** A run's p95 and its largest client delay in each second, from its own per-second histograms (NaN: none). */
export async function runBySecond(stack: LocalStack, runId: string): Promise<{ p95BySecond: number[]; clientDelayMaxBySecond: number[] }> {
  const client = new EdgeloadClient(stack.apiUrl, stack.token);
  const perSecond = await fetch(`${stack.apiUrl}/v1/runs/${runId}/query?every=1s&metrics=p95`, { headers: { authorization: `Bearer ${stack.token}` } });
  const rows = perSecond.ok ? ((await perSecond.json()) as { rows: Array<{ t: number; p95: number | null }> }).rows : [];
  // The query API has no client_delay trend; its stored per-second histograms answer in SQL.
  const delays = await client.sql(
    "SELECT window_s AS t, MAX(max_us) / 1000.0 AS max_ms FROM histograms WHERE run_id = ? AND metric = 'client_delay' GROUP BY window_s",
    [runId],
  );
  const bySecond = (values: ReadonlyArray<{ t: number; value: number | null }>) =>
    Array.from({ length: Math.max(0, ...values.map((r) => r.t + 1)) }, (_, t) => values.find((r) => r.t === t)?.value ?? NaN);
  return {
    p95BySecond: bySecond(rows.map((r) => ({ t: r.t, value: r.p95 }))),
    clientDelayMaxBySecond: bySecond(delays.rows.map((r) => ({ t: Number(r.t), value: Number(r.max_ms) }))),
  };
}
