/**
 * 10. scale: a whole run simulated on one virtual clock at each peak rate (35,000, 100,000
 *     and 1,000,000 requests a second by default), shard by shard through the aggregation
 *     tree to the coordinator and D1 (scale-simulation.ts): exact request counts at every
 *     stage, merged percentiles against the exact ones, the requests into the busiest object
 *     per second, the coordinator's and the aggregators' own CPU, D1 rows, and how long
 *     start and abort take to reach the last shard. One table, a column per rate.
 *
 *   node scripts/bench/scale-bench.ts [--rates 35000,100000,1000000]
 *
 * Its own process (run.ts starts it): it runs the coordinator's code, so it type-checks
 * against both Node and Workers types (tsconfig.mixed.json), and a 1,000,000/s run needs a
 * larger heap than the default.
 *
 * Profile: a 1 s ramp to the rate, then a steady period (steadySecondsFor: 2 to 3 s up to
 * 100,000/s; above, the length that keeps the whole bench to a few minutes on a 2-core
 * machine), printed with the table. Each rate is run twice: the full profile, and again
 * aborted 0.5 s after t0 for the abort's figures.
 */
import { parseArgs } from "node:util";
import { RELATIVE_ERROR } from "../../core/metrics/histogram.ts";
import { preflight } from "../../core/plan/preflight.ts";
import { SHARD_FLUSH_GRACE_MS } from "../../coordinator/run/run-record.ts";
import { markdownTable } from "./markdown-table.ts";
import { startFanOut } from "./scale-fan-out.ts";
import { scalePlan, simulateScale, type ScaleResult } from "./scale-simulation.ts";

/** One-way RPC latency assumed for every edge (see scale-simulation.ts). */
const HOP_MS = 20;
const RAMP_S = 1;
/** When the abort run is aborted, seconds after t0 (inside the ramp: every shard is sending). */
const ABORT_AT_S = 0.5;

/**
 * Steady seconds at `ratePerS`: 2 up to 100,000/s, but at least depth + 1 — a window takes
 * a second a level to reach the coordinator (ticks once a second), so with fewer the
 * coordinator hears nothing before the shards finish; 4 above 100,000/s, which keeps the
 * bench to ~3 minutes on a 2-core machine (1,000,000/s is ~30 s a virtual second here).
 */
export function steadySecondsFor(ratePerS: number): number {
  if (ratePerS > 100_000) return 4;
  const depth = scalePlan({ ratePerS, rampS: RAMP_S, steadyS: 2 }).plan.tree?.depth ?? 0;
  return Math.max(2, depth + 1);
}

interface RateRun {
  readonly ratePerS: number;
  readonly steadyS: number;
  readonly full: ScaleResult;
  readonly aborted: ScaleResult;
  readonly start: ReturnType<typeof startFanOut>;
}

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const ms = (n: number, digits = 1) => n.toFixed(digits);

/** "87,500 of 87,500" when every stage agrees (with the dropped ones, if any), else every stage's count. */
function countsCell(r: ScaleResult): string {
  const c = r.counts;
  const exact =
    c.sent === c.scheduled &&
    c.inShardWindows + c.dropped === c.scheduled &&
    c.answered === c.inShardWindows &&
    c.merged === c.inShardWindows &&
    c.inD1 === c.merged;
  if (exact) return c.dropped ? `${int(c.merged)} + ${int(c.dropped)} dropped = ${int(c.scheduled)}` : `${int(c.merged)} of ${int(c.scheduled)}`;
  return `MISMATCH: scheduled ${int(c.scheduled)}, started ${int(c.sent)}, answered ${int(c.answered)}, in shard windows ${int(c.inShardWindows)}, dropped ${int(c.dropped)}, merged ${int(c.merged)}, in D1 ${int(c.inD1)}`;
}

/** After an abort: what the shards measured, merged and in D1 (they must agree). */
function abortCountsCell(r: ScaleResult): string {
  const c = r.counts;
  return c.merged === c.inShardWindows && c.inD1 === c.merged
    ? `${int(c.merged)} measured = merged = in D1`
    : `MISMATCH: in shard windows ${int(c.inShardWindows)}, merged ${int(c.merged)}, in D1 ${int(c.inD1)}`;
}

function table(runs: readonly RateRun[]): string {
  const rows: Array<[string, (r: RateRun) => string]> = [
    ["profile", (r) => `${RAMP_S} s ramp + ${r.steadyS} s steady`],
    ["shards", (r) => int(r.full.plan.shards.length)],
    ["aggregators (depth)", (r) => (r.full.tree ? `${r.full.tree.aggregators.length} (${r.full.tree.depth})` : "none (flat)")],
    ["requests: in D1 = merged = measured", (r) => countsCell(r.full)],
    ["dropped", (r) => int(r.full.counts.dropped)],
    ...quantileRows(),
    [`percentiles within ±${ms(RELATIVE_ERROR * 100, 2)}%`, (r) => (r.full.quantiles.every((q) => q.withinBound) ? "yes" : "NO")],
    ["busiest object, req/s: steady", (r) => `${r.full.busiest.steady.requestsPerS} (${r.full.busiest.steady.kind})`],
    ["busiest object, req/s: end (senders done)", (r) => `${r.full.busiest.end.requestsPerS} (${r.full.busiest.end.kind})`],
    ["coordinator req/s: steady / end", (r) => `${r.full.coordinatorRequestsPerS.steady} / ${r.full.coordinatorRequestsPerS.end}`],
    ["model: coordinator / aggregator req/s", (r) => modelRequests(r.full)],
    ["coordinator CPU ms/s: median / max", (r) => `${ms(r.full.coordinatorCpuMsPerS.median)} / ${ms(r.full.coordinatorCpuMsPerS.max)}`],
    [
      "aggregator CPU ms/s: busiest median / max",
      (r) => (r.full.aggregatorCpuMsPerS ? `${ms(r.full.aggregatorCpuMsPerS.median)} / ${ms(r.full.aggregatorCpuMsPerS.max)}` : "–"),
    ],
    [
      "aggregator tick ms: median / longest",
      (r) => (r.full.aggregatorTickMs ? `${ms(r.full.aggregatorTickMs.median, 2)} / ${ms(r.full.aggregatorTickMs.max, 2)}` : "–"),
    ],
    [
      "aggregator intake ms per child window: median / mean",
      (r) => (r.full.mergeMsPerWindow ? `${ms(r.full.mergeMsPerWindow.median, 3)} / ${ms(r.full.mergeMsPerWindow.mean, 3)}` : "–"),
    ],
    ["storage rows written: shards (model)", (r) => rowsCell(r.full, "shards")],
    ["storage rows written: aggregators (model)", (r) => rowsCell(r.full, "aggregators")],
    ["storage rows written: coordinator (model)", (r) => rowsCell(r.full, "coordinator")],
    ["storage bytes at the end → left once cleaned: shards / aggregators / coordinator (model: at most, while it runs)", (r) => bytesLeftCell(r.full)],
    ["D1 rows per window (model)", (r) => `${r.full.d1.rowsPerWindow} (${preflight(r.full.spec, r.full.plan).usage.peak.d1RowsPerS})`],
    ["D1 rows in one second, most", (r) => int(r.full.d1.rowsPerS)],
    ["D1 shard rows at the end, in one second", (r) => int(r.full.d1.shardRowsPerS)],
    ["D1 cells written late (twice)", (r) => int(r.full.lateCells)],
    ["window end → in D1, s (slowest)", (r) => ms(r.full.windowToD1Ms / 1000)],
    ["start → last shard, ms (CPU on path)", (r) => `${ms(r.start.lastShardMs)} (${ms(r.start.cpuOnPathMs)})`],
    ["abort → last shard told / drained, ms", (r) => `${int(r.aborted.abort!.lastShardToldMs)} / ${int(r.aborted.abort!.lastShardStoppedMs)}`],
    ["abort → every final flush in, ms", (r) => int(r.aborted.abort!.everythingInMs)],
    ["abort run: requests", (r) => abortCountsCell(r.aborted)],
    ["wall time, s: full run (GC) + abort run", (r) => `${ms(r.full.wallMs / 1000)} (${ms(r.full.gcMs / 1000)}) + ${ms(r.aborted.wallMs / 1000)}`],
  ];
  return markdownTable(
    ["peak rate", ...runs.map((r) => `${int(r.ratePerS)}/s`)],
    rows.map(([name, cell]) => [name, ...runs.map(cell)]),
    new Set([0]),
  );

  function quantileRows(): Array<[string, (r: RateRun) => string]> {
    return [0.5, 0.9, 0.99, 0.999].map((q, i) => [
      `p${q * 100} ms: merged / exact`,
      (r: RateRun) => `${ms(r.full.quantiles[i]!.mergedMs, 2)} / ${r.full.quantiles[i]!.exactMs}`,
    ]);
  }
}

/** Durable Object storage rows the simulated objects wrote, beside the planner's figure and their ratio. */
function rowsCell(r: ScaleResult, kind: keyof ScaleResult["storageRows"]): string {
  const usage = preflight(r.spec, r.plan).usage;
  const model = { shards: usage.shardRowsWritten, aggregators: usage.aggregators.rowsWritten, coordinator: usage.coordinatorRowsWritten }[kind];
  const measured = r.storageRows[kind];
  return measured ? `${int(measured)} (${int(model)}, ×${(model / measured).toFixed(2)})` : `0 (${int(model)})`;
}

/**
 * Durable Object storage bytes each kind of object held as the run ended, and what is left once
 * it is cleaned up — nothing (issue 49; test/workers/storage-cleanup.test.ts checks every
 * object of a real run) — beside the planner's bytes held at most while it runs.
 */
function bytesLeftCell(r: ScaleResult): string {
  const b = r.storageBytesAtEnd;
  return `${int(b.shards)} / ${int(b.aggregators)} / ${int(b.coordinator)} → 0 (${int(preflight(r.spec, r.plan).usage.storage.durableObjectBytes)})`;
}

function modelRequests(r: ScaleResult): string {
  const peak = preflight(r.spec, r.plan).usage.peak;
  return `${peak.coordinatorRequestsPerS} / ${r.tree ? peak.aggregatorRequestsPerS : "–"}`;
}

export async function scaleBench(rates: readonly number[]): Promise<void> {
  console.log(`\n## Scale: whole runs simulated on a virtual clock, shard by shard through the aggregation tree (${rates.map(int).join(", ")}/s)\n`);
  const runs: RateRun[] = [];
  for (const ratePerS of rates) {
    const steadyS = steadySecondsFor(ratePerS);
    process.stdout.write(`${int(ratePerS)}/s: ${RAMP_S} s ramp + ${steadyS} s steady… `);
    const full = await simulateScale({ ratePerS, rampS: RAMP_S, steadyS, hopMs: HOP_MS });
    process.stdout.write(`${ms(full.wallMs / 1000)} s; aborted at ${ABORT_AT_S} s… `);
    const aborted = await simulateScale({ ratePerS, rampS: RAMP_S, steadyS, hopMs: HOP_MS, abortAtS: ABORT_AT_S });
    console.log(`${ms(aborted.wallMs / 1000)} s`);
    const { spec, plan } = scalePlan({ ratePerS, rampS: RAMP_S, steadyS });
    const start = startFanOut({ runId: "r-scale", spec, plan, t0Ms: 0, mode: "deployed", flushGraceMs: SHARD_FLUSH_GRACE_MS }, HOP_MS);
    runs.push({ ratePerS, steadyS, full, aborted, start });
  }
  console.log(`\n${table(runs)}\n`);
  console.log(
    [
      `Assumed, not measured: every RPC edge takes ${HOP_MS} ms one way (the coordinator → region root edge is cross-region for five regions of six, so`,
      "start and abort figures are a floor there); timers fire on a 1 ms grid; objects' work takes no virtual time. Measured: the CPU of each",
      "object's own synchronous work (performance.now() in Node on this machine, maxima include JIT warm-up and other processes' turns), by virtual second;",
      "start's CPU on the path (planning and structuredClone of each start message, best of three). The target answers in 20–40 ms, one request",
      "in 500 in 100–139 ms. Requests per object: 'steady' before any of its senders sent its final flush, 'end' from then on. CPU figures",
      "exclude the simulating process's GC pauses (its heap holds every shard; scale-meter.ts). Model: core/plan/run-usage.ts (preflight).",
    ].join("\n"),
  );
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { rates: { type: "string", default: "35000,100000,1000000" } } });
  await scaleBench(values.rates.split(",").map(Number));
}
