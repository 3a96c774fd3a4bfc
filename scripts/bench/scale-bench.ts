/**
 * 10. scale: a whole run simulated on one virtual clock at each peak rate (35,000, 100,000
 *     and 1,000,000 requests a second by default), shard by shard through the aggregation
 *     tree to the coordinator and D1 (scale-simulation.ts): exact request counts at every
 *     stage, merged percentiles against the exact ones, the requests into the busiest object
 *     per second, the coordinator's and the aggregators' own CPU, D1 rows, how long start and
 *     abort take to reach the last shard, and by kind of object (shard, aggregator,
 *     coordinator) its storage rows, billed requests, Workers Logs events and the storage
 *     bytes left once the run is cleaned up, each beside the plan's figure (scale-kinds.ts:
 *     one more than 10 % off is flagged and the bench exits 1). One table, a column per rate.
 *
 *   node scripts/bench/scale-bench.ts [--rates 35000,100000,1000000]
 *
 * Its own process (run.ts starts it): it runs the coordinator's code, so it type-checks
 * against both Node and Workers types (tsconfig.mixed.json), and a 1,000,000/s run needs a
 * larger heap than the default.
 *
 * Profile: a 1 s ramp to the rate, then a steady period (STEADY_S: 12 s), printed
 * with the table. Each rate is run twice: the full profile, and again
 * aborted 0.5 s after t0 for the abort's figures.
 */
import { parseArgs } from "node:util";
import { RELATIVE_ERROR } from "../../core/metrics/histogram.ts";
import { preflight } from "../../core/plan/preflight.ts";
import { SHARD_FLUSH_GRACE_MS } from "../../coordinator/run/run-record.ts";
import { markdownTable } from "./markdown-table.ts";
import { startFanOut } from "./scale-fan-out.ts";
import { scalePlan, simulateScale, type ScaleResult } from "./scale-simulation.ts";
import { abortRequestsCell, Flags, kindRows, WITHIN } from "./scale-kinds.ts";

/** One-way RPC latency assumed for every edge (see scale-simulation.ts). */
const HOP_MS = 20;
const RAMP_S = 1;
/** When the abort run is aborted, seconds after t0 (inside the ramp: every shard is sending). */
const ABORT_AT_S = 0.5;

/**
 * Steady seconds at every rate: 12, so 13 s of schedule. A run's ends weigh in its counts —
 * its start and clean-up, the coordinator's ticks from its creation 3 s before t0 and until
 * the last done, a tree's first windows a few seconds on their way up — and a run of a few
 * seconds is mostly ends; at 13 s the counts by kind of object read as a real run's would,
 * within a few per cent of the plan's (scale-kinds.ts). 1,000,000/s is ~50 s of wall time a
 * virtual second on the 2-core machine, so the bench takes ~15 minutes.
 */
const STEADY_S = 12;

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

function table(runs: readonly RateRun[], flags: Flags): string {
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
    ...kindRows(flags).map(([name, cell]): [string, (r: RateRun) => string] => [name, (r) => cell(r.full)]),
    ["D1 rows per window (model)", (r) => `${r.full.d1.rowsPerWindow} (${preflight(r.full.spec, r.full.plan).usage.peak.d1RowsPerS})`],
    ["D1 rows in one second, most", (r) => int(r.full.d1.rowsPerS)],
    ["D1 shard rows at the end, in one second", (r) => int(r.full.d1.shardRowsPerS)],
    ["D1 cells written late (twice)", (r) => int(r.full.lateCells)],
    ["window end → in D1, s (slowest)", (r) => ms(r.full.windowToD1Ms / 1000)],
    ["start → last shard, ms (CPU on path)", (r) => `${ms(r.start.lastShardMs)} (${ms(r.start.cpuOnPathMs)})`],
    ["abort → last shard told / drained, ms", (r) => `${int(r.aborted.abort!.lastShardToldMs)} / ${int(r.aborted.abort!.lastShardStoppedMs)}`],
    ["abort → every final flush in, ms", (r) => int(r.aborted.abort!.everythingInMs)],
    ["abort run: requests", (r) => abortCountsCell(r.aborted)],
    ["abort run: object requests, shards / aggregators / coordinator (plan of the whole run)", (r) => abortRequestsCell(r.aborted)],
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

function modelRequests(r: ScaleResult): string {
  const peak = preflight(r.spec, r.plan).usage.peak;
  return `${peak.coordinatorRequestsPerS} / ${r.tree ? peak.aggregatorRequestsPerS : "–"}`;
}

export async function scaleBench(rates: readonly number[]): Promise<void> {
  console.log(`\n## Scale: whole runs simulated on a virtual clock, shard by shard through the aggregation tree (${rates.map(int).join(", ")}/s)\n`);
  const runs: RateRun[] = [];
  for (const ratePerS of rates) {
    const steadyS = STEADY_S;
    process.stdout.write(`${int(ratePerS)}/s: ${RAMP_S} s ramp + ${steadyS} s steady… `);
    const full = await simulateScale({ ratePerS, rampS: RAMP_S, steadyS, hopMs: HOP_MS });
    process.stdout.write(`${ms(full.wallMs / 1000)} s; aborted at ${ABORT_AT_S} s… `);
    const aborted = await simulateScale({ ratePerS, rampS: RAMP_S, steadyS, hopMs: HOP_MS, abortAtS: ABORT_AT_S });
    console.log(`${ms(aborted.wallMs / 1000)} s`);
    const { spec, plan } = scalePlan({ ratePerS, rampS: RAMP_S, steadyS });
    const start = startFanOut({ runId: "r-scale", spec, plan, t0Ms: 0, mode: "deployed", flushGraceMs: SHARD_FLUSH_GRACE_MS }, HOP_MS);
    runs.push({ ratePerS, steadyS, full, aborted, start });
  }
  const flags = new Flags();
  console.log(`\n${table(runs, flags)}\n`);
  console.log(
    [
      `Assumed, not measured: every RPC edge takes ${HOP_MS} ms one way (the coordinator → region root edge is cross-region for five regions of six, so`,
      "start and abort figures are a floor there); timers fire on a 1 ms grid; objects' work takes no virtual time. Measured: the CPU of each",
      "object's own synchronous work (performance.now() in Node on this machine, maxima include JIT warm-up and other processes' turns), by virtual second;",
      "start's CPU on the path (planning and structuredClone of each start message, best of three). The target answers in 20–40 ms, one request",
      "in 500 in 100–139 ms. Requests per object: 'steady' before any of its senders sent its final flush, 'end' from then on. CPU figures",
      "exclude the simulating process's GC pauses (its heap holds every shard; scale-meter.ts). Model: core/plan/run-usage.ts (preflight).",
      "By kind of object (scale-kinds.ts): every billed request from the run's creation to its clean-up, a client watching it (`?wait=`);",
      `log events at head_sampling_rate 1 (deployed: 0.01 of them). A count more than ${WITHIN * 100} % off the plan's is flagged ⚠.`,
    ].join("\n"),
  );
  if (flags.found.length) {
    console.log(`\nOff the plan:\n${flags.found.map((f) => `- ${f}`).join("\n")}`);
    process.exitCode = 1;
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { rates: { type: "string", default: "35000,100000,1000000" } } });
  await scaleBench(values.rates.split(",").map(Number));
}
