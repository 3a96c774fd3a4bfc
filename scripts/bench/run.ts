/**
 * `npm run bench`: figures measured side by side in one run, reported as ratios (these
 * machines are shared and noisy, so absolute numbers vary between runs).
 *
 *  1. histogram: edgeload's histogram vs hdr-histogram-js (pure JS mode, as Workers run
 *     it) — record, serialise + parse, merge, size.
 *  2. generator: the local edgeload stack and k6, one after the other, sending the same
 *     constant-arrival-rate load to the same local target with a fixed delay: achieved
 *     rate, dropped, p50/p99 of http_req_duration, and generator CPU seconds per 1,000
 *     requests (from /proc of the generator processes), with the ratio edgeload/k6.
 *
 *     Also the workerd fetch floor: a bare closed loop of fetch() in its own workerd
 *     (scripts/bench/fetch-floor), i.e. what any fetch-based generator pays in workerd.
 *
 *     And client_delay: how long the generator's own event loop held responses before
 *     timing them (core/loop-delay.ts), its share of edgeload's latencies.
 *
 *  2b. marginal: the generator's CPU per second with one more shard, region, custom metric
 *     or step (scripts/bench/marginal-cost.ts).
 *
 *  3. queries: analytics over a synthetic 1-hour, 64-shard run in the local D1 (must stay
 *     under 2 s each).
 *
 *  4. soak: a long run with the generator's memory sampled every 10 s (it must plateau) and
 *     the D1 rows per second (within the write bound).
 *
 *  5. streams: what an open SSE stream costs a shard in memory, measured against the same
 *     number of VUs sending short requests (the figure behind the plan's streams per shard).
 *
 *  6. fuzz: the parsers at the edge against 10,000 generated bad inputs each.
 *
 *  7. faults: one run per fault (objects restarted, alarms doubled, flushes replayed, D1
 *     and R2 failing, the target failing), with and without abort and Ctrl-C: expected,
 *     counted, lost, double counted (scripts/bench/faults/).
 *
 *  8. dashboard: the same 16-shard run with 0 and with hundreds of live dashboard streams
 *     open: streams served, every window delivered, and the coordinator CPU they cost.
 *  9. script: the same load as a k6 script (`edgeload run script.js`) and as a spec, side by
 *     side: latency and generator CPU per request (scripts/bench/script-cost.ts).
 *
 * `npm run bench -- faults` is `--only faults`.
 * `--only profile` (never part of the full run) writes a CPU profile of the generator's isolate
 * and prints where its time goes (scripts/bench/engine-profile.ts).
 * `--only fetch-options` (never part of the full run) prices each option the engine adds to a
 * fetch, in a bare workerd loop (scripts/bench/fetch-options.ts).
 * Options: --only histogram|generator|marginal|query|soak|streams|fuzz|faults|dashboard|script|profile|fetch-options, --script-rates 100,300,500, --watchers 0,250,1000,0, --watchers-rate 320, --soak-duration 3m, --soak-rate 300, --rates 100,500,1000, --duration 15s, --delay 20, --marginal-rate 200,
 * --shards N (default: as the plan makes them, as a user's run gets them). Load goes only to the loopback target and stops by itself.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import * as hdr from "hdr-histogram-js";
import { Histogram } from "../../core/histogram.ts";
import { EdgeloadClient } from "../cli/client.ts";
import { PROJECT_ROOT, startLocalStack, type LocalStack } from "../cli/local-stack.ts";
import { cpuSeconds, reapedChildrenCpuSeconds, residentBytes } from "../cli/processes.ts";
import { parseDurationMs } from "../../core/duration.ts";
import { findK6 } from "./k6-binary.ts";
import { crosscheck, edgeFigures, type LoadFigures } from "../../core/crosscheck.ts";
import { parseK6Summary } from "../../core/k6-summary.ts";
import { STREAM_MEMORY_BYTES } from "../../core/plan.ts";
import { markdownTable } from "./markdown-table.ts";
import { startFetchFloor } from "./fetch-floor-worker.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    only: { type: "string" },
    rates: { type: "string", default: "100,500,1000" },
    duration: { type: "string", default: "15s" },
    delay: { type: "string", default: "20" },
    shards: { type: "string", default: "plan" },
    "marginal-rate": { type: "string", default: "200" },
    "script-rates": { type: "string", default: "100,300,500" },
    "soak-duration": { type: "string", default: "3m" },
    "soak-rate": { type: "string", default: "300" },
    watchers: { type: "string", default: "0,250,1000,0" },
    "watchers-rate": { type: "string", default: "320" },
  },
});

/** `--shards N` forces a shard count; by default the plan makes them, as for a user's run. */
const forcedShards = values.shards === "plan" ? null : Number(values.shards);

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => "  " + r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("   ")).join("\n");
}

function time(fn: () => void, repeat = 5): number {
  let best = Infinity;
  for (let i = 0; i < repeat; i++) {
    const t = performance.now();
    fn();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

/** Latency-like values in µs: around 20 ms with a long tail. */
function samples(n: number, seed = 1): number[] {
  let x = seed;
  const rand = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  return Array.from({ length: n }, () => Math.round(20_000 * Math.exp(0.3 * Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand()))));
}

function histogramBench(): void {
  console.log("\n## Histogram: edgeload (core/histogram.ts) vs hdr-histogram-js 3 (JS, 2 significant digits)\n");
  const newHdr = () => hdr.build({ numberOfSignificantValueDigits: 2, highestTrackableValue: 2 ** 32, bitBucketSize: 64, useWebAssembly: false });
  const values1M = samples(1_000_000);
  const window = samples(250, 7); // one shard's window at 250 requests/s

  const recordOwn = time(() => { const h = new Histogram(); for (const v of values1M) h.record(v); });
  const recordHdr = time(() => { const h = newHdr(); for (const v of values1M) h.recordValue(v); });

  const own = new Histogram();
  const theirs = newHdr();
  for (const v of window) { own.record(v); theirs.recordValue(v); }
  const ownText = JSON.stringify(own.snapshot());
  const hdrText = hdr.encodeIntoCompressedBase64(theirs);
  const roundTripOwn = time(() => { for (let i = 0; i < 1000; i++) Histogram.fromSnapshot(JSON.parse(JSON.stringify(own.snapshot()))); }, 3);
  const roundTripHdr = time(() => { for (let i = 0; i < 1000; i++) hdr.decodeFromCompressedBase64(hdr.encodeIntoCompressedBase64(theirs), 64, false); }, 3);

  const ownParts = Array.from({ length: 64 }, (_, i) => { const h = new Histogram(); for (const v of samples(250, i + 2)) h.record(v); return h; });
  const hdrParts = Array.from({ length: 64 }, (_, i) => { const h = newHdr(); for (const v of samples(250, i + 2)) h.recordValue(v); return h; });
  const mergeOwn = time(() => { const total = new Histogram(); for (const p of ownParts) total.merge(p); });
  const mergeHdr = time(() => { const total = newHdr(); for (const p of hdrParts) total.add(p); });

  const p99own = own.quantile(0.99);
  const p99hdr = theirs.getValueAtPercentile(99);
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  console.log(table([
    ["", "edgeload", "hdr-histogram-js", "edgeload/hdr"],
    ["record 1M values (ms)", recordOwn.toFixed(1), recordHdr.toFixed(1), ratio(recordOwn, recordHdr)],
    ["serialise + parse a 250-value window ×1000 (ms)", roundTripOwn.toFixed(1), roundTripHdr.toFixed(1), ratio(roundTripOwn, roundTripHdr)],
    ["serialised window size (bytes)", String(ownText.length), String(hdrText.length), ratio(ownText.length, hdrText.length)],
    ["merge 64 windows (ms)", mergeOwn.toFixed(2), mergeHdr.toFixed(2), ratio(mergeOwn, mergeHdr)],
    ["memory per histogram of the window (bytes)", String(own.footprintBytes), String(theirs.estimatedFootprintInBytes), ratio(own.footprintBytes, theirs.estimatedFootprintInBytes)],
    ["p99 of the window (µs)", p99own.toFixed(0), String(p99hdr), ""],
  ]));
}

interface GeneratorResult {
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
}

async function runK6(k6: string, targetUrl: string, rate: number, duration: string): Promise<GeneratorResult> {
  const dir = await mkdtemp(join(tmpdir(), "edgeload-bench-"));
  const exportFile = join(dir, "k6.json");
  const cpuBefore = reapedChildrenCpuSeconds();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(k6, ["run", "--quiet", "--no-usage-report", "--summary-export", exportFile, join(PROJECT_ROOT, "scripts/bench/k6-constant-rate.js")], {
      env: { ...process.env, TARGET_URL: targetUrl, RATE: String(rate), DURATION: duration, VUS: String(Math.max(100, Math.ceil(rate / 5))) },
      stdio: ["ignore", "ignore", "inherit"],
    });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 || code === 99 ? resolve() : reject(new Error(`k6 exited ${code}`))));
  });
  const cpuS = reapedChildrenCpuSeconds() - cpuBefore;
  const exported = JSON.parse(await readFile(exportFile, "utf8"));
  const m = exported.metrics;
  const parsed = parseK6Summary(exported);
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
  };
}

/** The generator table's name for the paced loop run inside a Durable Object. */
const PACED_OBJECT = "paced floor in an object";

/**
 * CPU per request of a bare fetch loop in workerd against the same target: closed (25 at a
 * time, no timers) or, with `rate`, paced on the open-model schedule (one timer per send);
 * in a plain Worker, or with `inObject` in a Durable Object, where edgeload's shards send from.
 */
async function fetchFloor(targetUrl: string, requests: number, rate?: number, inObject = false): Promise<GeneratorResult> {
  const floor = await startFetchFloor(targetUrl);
  try {
    const cpuBefore = cpuSeconds(floor.pids);
    const started = performance.now();
    const answer = await floor.loop(targetUrl, { n: requests, ...(rate ? { rate } : { concurrency: 25 }), ...(inObject ? { in: "object" } : {}) });
    const wallS = (performance.now() - started) / 1000;
    return {
      name: rate ? (inObject ? PACED_OBJECT : "paced fetch floor") : "workerd fetch floor", requests, achievedPerS: requests / wallS, dropped: 0,
      p50Ms: answer.p50Ms ?? NaN, p95Ms: answer.p95Ms ?? NaN, p99Ms: answer.p99Ms ?? NaN, cpuS: cpuSeconds(floor.pids) - cpuBefore,
    };
  } finally {
    await floor.dispose();
  }
}

/** One edgeload run; `shards` null leaves the count to the plan, as a user's run does. */
async function edgeloadRun(stack: LocalStack, path: string, rate: number, duration: string, shards: number | null): Promise<GeneratorResult> {
  const client = new EdgeloadClient(stack.apiUrl, stack.token);
  const generatorPids = stack.processes.coordinator;
  if (generatorPids.length === 0) throw new Error("could not find the generator's workerd process in /proc");
  const cpuBefore = cpuSeconds(generatorPids);
  const run = await client.createRun({
    name: "bench", target: stack.targetUrl, steps: [{ path }], executor: "constant-arrival-rate", rate, duration,
    ...(shards === null ? {} : { shards }), regions: ["wnam", "enam", "weur", "apac"], maxVUs: Math.max(200, rate), timeout: "10s",
  });
  await client.waitForEnd(run.id, () => {}, 1000);
  const cpuS = cpuSeconds(generatorPids) - cpuBefore;
  const s = await client.summary(run.id);
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
    ...(s.edgeload.totals.client_delay ? { clientDelayMs: { p95: s.edgeload.totals.client_delay["p(95)"], p99: s.edgeload.totals.client_delay["p(99)"] } } : {}),
    figures: edgeFigures(s),
  };
}

async function generatorBench(): Promise<void> {
  const rates = values.rates!.split(",").map(Number);
  const duration = values.duration!;
  const delay = Number(values.delay);
  const k6 = findK6();
  const stack = await startLocalStack({ persist: false });
  try {
    const path = `/delay?ms=${delay}`;
    await (await fetch(stack.targetUrl + path)).arrayBuffer(); // warm the target
    // A fresh stack is cold (JIT, D1 and object storage on first use): a first measured run
    // paid it alone, k6 — a native binary, run second — never did. One short unmeasured run first.
    await edgeloadRun(stack, path, rates[0]!, "4s", forcedShards);
    const perK = (r: GeneratorResult) => (r.cpuS / r.requests) * 1000;
    const fmt = (n: number) => (Number.isNaN(n) ? "-" : n.toFixed(2));
    const atRates: Array<{ rate: number; clients: GeneratorResult[]; verdict: string }> = [];
    const row = (r: GeneratorResult) => [r.name, String(r.requests), r.achievedPerS.toFixed(1), String(r.dropped), fmt(r.p50Ms), fmt(r.p95Ms), fmt(r.p99Ms), r.clientDelayMs ? `${fmt(r.clientDelayMs.p95)} / ${fmt(r.clientDelayMs.p99)}` : "-", r.cpuS.toFixed(2), perK(r).toFixed(3), r.targetCpuS === undefined ? "-" : ((r.targetCpuS / r.requests) * 1000).toFixed(3)];
    for (const rate of rates) {
      console.log(`\n## Generator: edgeload (local stack, ${forcedShards ?? "planned"} shards) vs k6, constant-arrival-rate ${rate}/s for ${duration}, target delay ${delay} ms\n`);
      // The target's CPU over each client's run, next to the client's own.
      const withTargetCpu = async (measure: () => Promise<GeneratorResult>): Promise<GeneratorResult> => {
        const before = cpuSeconds(stack.processes.target);
        const result = await measure();
        return { ...result, targetCpuS: cpuSeconds(stack.processes.target) - before };
      };
      const edge = await withTargetCpu(() => edgeloadRun(stack, path, rate, duration, forcedShards));
      await new Promise((r) => setTimeout(r, 3000)); // cool-down between the two
      const k6Result = await withTargetCpu(() => runK6(k6, stack.targetUrl + path, rate, duration));
      await new Promise((r) => setTimeout(r, 3000));
      const floor = await withTargetCpu(() => fetchFloor(stack.targetUrl + path, Math.min(edge.requests, 10_000)));
      await new Promise((r) => setTimeout(r, 3000));
      const paced = await withTargetCpu(() => fetchFloor(stack.targetUrl + path, Math.min(edge.requests, 10_000), rate));
      await new Promise((r) => setTimeout(r, 3000));
      const pacedInObject = await withTargetCpu(() => fetchFloor(stack.targetUrl + path, Math.min(edge.requests, 10_000), rate, true));
      console.log(table([
        ["", "requests", "achieved/s", "dropped", "p50 ms", "p95 ms", "p99 ms", "client delay p95 / p99 ms", "CPU s", "CPU s per 1k req", "target CPU s per 1k req"],
        row(edge),
        row(k6Result),
        row(floor),
        row(paced),
        row(pacedInObject),
        ["edgeload/k6", (edge.requests / k6Result.requests).toFixed(3), (edge.achievedPerS / k6Result.achievedPerS).toFixed(3), "",
          `${(edge.p50Ms - k6Result.p50Ms).toFixed(2)} diff`, `${(edge.p95Ms - k6Result.p95Ms).toFixed(2)} diff`, `${(edge.p99Ms - k6Result.p99Ms).toFixed(2)} diff`, "", "", (perK(edge) / perK(k6Result)).toFixed(2),
          edge.targetCpuS !== undefined && k6Result.targetCpuS ? ((edge.targetCpuS / edge.requests) / (k6Result.targetCpuS / k6Result.requests)).toFixed(2) : ""],
        ["edgeload/floor", "", "", "", "", "", "", "", "", (perK(edge) / perK(floor)).toFixed(2), ""],
        ["edgeload/paced floor", "", "", "", "", "", "", "", "", (perK(edge) / perK(paced)).toFixed(2), ""],
        ["edgeload/paced floor in an object", "", "", "", "", "", "", "", "", (perK(edge) / perK(pacedInObject)).toFixed(2), ""],
      ]));
      // The crosscheck's own verdict on the two runs, with its (unchanged) tolerances.
      let verdict = "-";
      if (edge.figures && k6Result.figures) {
        const check = crosscheck(edge.figures, k6Result.figures);
        const off = check.rows.filter((r) => r.step === null && r.verdict === "disagree");
        console.log(`\n  crosscheck: ${check.verdict}${off.length ? ` (${off.map((r) => `${r.metric} ${r.edge} vs ${r.k6}, tolerance ${r.tolerance?.toFixed(2)}`).join("; ")})` : ""}`);
        const signed = (n: number) => `${n >= 0 ? "+" : ""}${n.toFixed(1)}`;
        verdict = off.length ? `${check.verdict} (${off.map((r) => `${r.metric} ${signed(Number(r.edge) - Number(r.k6))}`).join(", ")} ms)` : check.verdict;
      }
      atRates.push({ rate, clients: [edge, k6Result, paced, pacedInObject, { ...floor, name: "closed floor" }], verdict });
    }
    // Every rate in one table, as the README shows it.
    console.log(`\n## Generator at every rate: edgeload / k6 / the workerd floors\n`);
    const ms = (r: GeneratorResult, cpu: number | undefined) => (cpu === undefined ? "" : ((cpu / r.requests) * 1000).toFixed(2));
    console.log(markdownTable(
      ["rate", "", "dropped", "p50 ms", "p95 ms", "p99 ms", "client delay p95 / p99 ms", "CPU ms per request", "target CPU ms per request", "crosscheck"],
      atRates.flatMap(({ rate, clients, verdict }) => clients.map((r, i) => {
        const closed = r.name === "closed floor";
        return [i === 0 ? `${rate}/s` : "", r.name === "paced fetch floor" ? "paced floor" : r.name, closed ? "" : String(r.dropped),
          closed ? "" : fmt(r.p50Ms), closed ? "" : fmt(r.p95Ms), closed ? "" : fmt(r.p99Ms),
          r.clientDelayMs ? `${fmt(r.clientDelayMs.p95)} / ${fmt(r.clientDelayMs.p99)}` : "", ms(r, r.cpuS), ms(r, r.targetCpuS), i === 0 ? verdict : ""];
      })),
      new Set([0, 1, 9]),
    ));
    console.log(`\n  generator CPU: edgeload = its workerd process (every shard and the coordinator), k6 = the k6 process,
  floor = a bare fetch loop's workerd process (closed, 25 at a time; paced: the same rate, one timer a send;
  paced in an object: the paced loop inside one Durable Object, where edgeload's shards send from);
  the target's CPU is not counted. Diffs are edgeload − k6 in ms.
  client delay: how long edgeload's own event loop held responses before timing them (an estimate
  that errs low, core/loop-delay.ts); it is part of edgeload's latencies, so edgeload − k6 beyond it
  is the clients' other differences.`);
  } finally {
    await stack.stop();
  }
}

/**
 * 3. queries: a synthetic 1-hour, 64-shard run in the local D1, each analytics query over
 *    the API (scripts/bench/query-timing.ts, its own process: it builds D1 statements with
 *    the coordinator's code, so it type-checks against both Node and Workers types).
 */
async function queryBench(): Promise<void> {
  console.log("\n## Queries: a synthetic 1-hour run (4 regions, 64 shards, 1000/s) in the local D1, asked over the API three times each\n");
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [join(PROJECT_ROOT, "scripts/bench/query-timing.ts")], { stdio: "inherit" });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`query-timing exited ${code}`))));
  });
}

/**
 * 4. soak: one long run (default 3 minutes at 300/s, 8 shards, a closed-model flow is not
 *    needed: memory is per window, not per request) sampling the generator's resident
 *    memory every 10 s and the D1 rows written per second. Histograms, not samples, so
 *    memory must plateau after the first windows; the check compares the last third of
 *    the run with the middle third.
 */
async function soakBench(): Promise<void> {
  const durationS = Math.round((parseDurationMs(values["soak-duration"]!) ?? 180_000) / 1000);
  const rate = Number(values["soak-rate"]);
  console.log(`\n## Soak: ${rate}/s for ${durationS} s against /delay?ms=20, 8 shards in 4 regions; generator RSS every 10 s\n`);
  const stateDir = await mkdtemp(join(tmpdir(), "edgeload-soak-"));
  const stack = await startLocalStack({ persist: stateDir });
  try {
    const client = new EdgeloadClient(stack.apiUrl, stack.token);
    const pids = stack.processes.coordinator;
    const run = await client.createRun({
      name: "soak", target: stack.targetUrl, steps: [{ path: "/delay?ms=20" }], executor: "constant-arrival-rate", rate, duration: `${durationS}s`,
      shards: 8, regions: ["wnam", "enam", "weur", "apac"], maxVUs: rate * 2, timeout: "10s",
    });
    const samples: Array<{ t: number; rssMb: number }> = [];
    const started = Date.now();
    const sampler = setInterval(() => samples.push({ t: Math.round((Date.now() - started) / 1000), rssMb: residentBytes(pids) / 2 ** 20 }), 10_000);
    const view = await client.waitForEnd(run.id, () => {}, 2000);
    clearInterval(sampler);
    const s = await client.summary(run.id);
    const m = s.metrics as Record<string, any>;
    const rows = await client.sql("SELECT (SELECT COUNT(*) FROM windows WHERE run_id = ?1) + (SELECT COUNT(*) FROM histograms WHERE run_id = ?1) AS rows, (SELECT COUNT(DISTINCT window_s) FROM windows WHERE run_id = ?1) AS seconds", [run.id]);
    const { rows: written, seconds } = rows.rows[0] as { rows: number; seconds: number };
    const third = Math.floor(samples.length / 3);
    const mean = (xs: typeof samples) => xs.reduce((a, x) => a + x.rssMb, 0) / Math.max(1, xs.length);
    const middle = mean(samples.slice(third, 2 * third));
    const last = mean(samples.slice(2 * third));
    console.log(table([
      ["t (s)", ...samples.map((x) => String(x.t))],
      ["generator RSS (MB)", ...samples.map((x) => x.rssMb.toFixed(0))],
    ]));
    console.log(`\n  ${view.status}: ${m.http_reqs.count} requests, ${m.dropped_iterations.count} dropped, p99 ${m.http_req_duration["p(99)"]} ms`);
    console.log(`  RSS middle third ${middle.toFixed(1)} MB → last third ${last.toFixed(1)} MB (${(((last - middle) / middle) * 100).toFixed(1)}%): ${last <= middle * 1.1 ? "bounded" : "GROWING"}`);
    console.log(`  D1: ${written} rows over ${seconds} s = ${(written / Math.max(1, seconds)).toFixed(1)} rows/s (bound: 4 regions × 1 step × 7 = 28/s)`);
  } finally {
    await stack.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

/**
 * 5. streams: one shard ramping 0 → 1,000 VUs over 20 s, each VU opening an SSE stream of
 *    the local target (a heartbeat every second) and holding it to the end. The generator's
 *    resident memory is sampled every second with the VUs the schedule has active; the
 *    slope of memory against open streams (least squares over the ramp) is what one held
 *    stream costs — measured within one run, so the process's own baseline cancels out.
 *    STREAM_MEMORY_BYTES in core/plan.ts (160 KiB) should stay above it.
 */
async function streamsBench(): Promise<void> {
  console.log("\n## Streams: generator memory per open SSE stream (one shard, 0 → 1,000 streams over 20 s)\n");
  const stateDir = await mkdtemp(join(tmpdir(), "edgeload-streams-"));
  const stack = await startLocalStack({ persist: stateDir });
  try {
    const client = new EdgeloadClient(stack.apiUrl, stack.token);
    const pids = stack.processes.coordinator;
    const run = await client.createRun({
      name: "streams", target: stack.targetUrl, executor: "ramping-vus", startVUs: 0, stages: [{ target: 1000, duration: "20s" }, { target: 1000, duration: "5s" }],
      shards: 1, regions: ["wnam"], timeout: "10s", steps: [{ path: "/app/config/stream?heartbeat=1000", sse: {} }],
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
    console.log(table([["open streams", ...samples.map((x) => String(x.vus))], ["generator RSS (MB)", ...samples.map((x) => (x.rss / 2 ** 20).toFixed(0))]]));
    console.log(`\n  ${m.http_reqs.count} streams opened, ${m.sse_streams_ended_early?.count ?? 0} ended early, ${m.sse_messages?.count ?? 0} events`);
    console.log(`  memory per held stream: ${(slope / 1024).toFixed(1)} KiB (least squares over ${n} samples of the ramp); the plan assumes ${STREAM_MEMORY_BYTES / 1024} KiB`);
  } finally {
    await stack.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

/**
 * 6. fuzz: every parser at the edge (core/bad-input-surfaces.ts) against 10,000 generated
 *    bad inputs each: none may throw, every problem must name a field.
 */
async function fuzzBench(): Promise<void> {
  const { BAD_INPUT_SURFACES, fuzzSurface } = await import("../../core/bad-input-surfaces.ts");
  const cases = 10_000;
  console.log(`\n## Fuzz: ${cases.toLocaleString("en-US")} generated bad inputs per surface\n`);
  const rows = [["surface", "cases", "failures", "ms"]];
  let failed = 0;
  for (const surface of BAD_INPUT_SURFACES) {
    const started = performance.now();
    let failure = "0";
    try {
      fuzzSurface(surface, cases);
    } catch (error) {
      failed++;
      failure = (error as Error).message.split("\n")[0]!.slice(0, 80);
    }
    rows.push([surface.name, String(cases), failure, (performance.now() - started).toFixed(0)]);
  }
  console.log(table(rows));
  if (failed) process.exitCode = 1;
}

// `npm run bench -- faults` names one part as a bare word, like --only.
values.only ??= positionals[0];
const PARTS = ["histogram", "generator", "marginal", "query", "soak", "streams", "fuzz", "faults", "dashboard", "script", "profile", "fetch-options"];
if (values.only && !PARTS.includes(values.only)) {
  console.error(`unknown benchmark "${values.only}": one of ${PARTS.join(", ")}`);
  process.exit(2);
}
if (!values.only || values.only === "histogram") histogramBench();
if (!values.only || values.only === "generator") await generatorBench();
if (!values.only || values.only === "marginal") {
  const { marginalCostBench } = await import("./marginal-cost.ts");
  await marginalCostBench(Number(values["marginal-rate"]), values.only === "marginal" ? values.duration! : "8s", Number(values.delay));
}
if (!values.only || values.only === "query") await queryBench();
if (!values.only || values.only === "soak") await soakBench();
if (!values.only || values.only === "streams") await streamsBench();
if (!values.only || values.only === "fuzz") await fuzzBench();
if (!values.only || values.only === "dashboard") {
  const { dashboardBench } = await import("./dashboard-watchers.ts");
  if (!(await dashboardBench(values.watchers.split(",").map(Number), Number(values["watchers-rate"])))) process.exitCode = 1;
}
// Only when asked for: a diagnosis, not a figure to hold.
if (!values.only || values.only === "script") {
  const { scriptCostBench } = await import("./script-cost.ts");
  await scriptCostBench(values["script-rates"]!.split(",").map(Number), values.only === "script" ? values.duration! : "8s", Number(values.delay), 4);
}
if (values.only === "fetch-options") {
  const { fetchOptionsBench } = await import("./fetch-options.ts");
  await fetchOptionsBench(4000, 3, Number(values.delay));
}
if (values.only === "profile") {
  const { engineProfile } = await import("./engine-profile.ts");
  for (const rate of values.rates!.split(",").map(Number)) await engineProfile({ rate, duration: values.duration!, delayMs: Number(values.delay), shards: forcedShards });
}
if (!values.only || values.only === "faults") {
  const { faultsBench } = await import("./faults/run-faults.ts");
  if (!(await faultsBench())) process.exitCode = 1;
}
