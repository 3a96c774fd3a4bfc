/**
 * `npm run bench`: figures measured side by side in one run, reported as ratios (these
 * machines are shared and noisy, so absolute numbers vary between runs).
 *
 *  1. histogram: edgeload's histogram vs hdr-histogram-js (pure JS mode, as Workers run
 *     it) — record, serialise + parse, merge, size (scripts/bench/histogram-bench.ts).
 *  2. generator: the local edgeload stack and k6, one after the other, sending the same
 *     constant-arrival-rate load to the same local target with a fixed delay: achieved
 *     rate, dropped, p50/p99 of http_req_duration, and generator CPU seconds per 1,000
 *     requests (from /proc of the generator processes), with the ratio edgeload/k6.
 *
 *     Also the workerd fetch floor: a bare closed loop of fetch() in its own workerd
 *     (workers/fetch-floor), i.e. what any fetch-based generator pays in workerd.
 *
 *     And client_delay: how long the generator's own event loop held responses before
 *     timing them (core/metrics/loop-delay.ts), its share of edgeload's latencies.
 *
 *     (scripts/bench/generator-bench.ts; the clients it measures in generator-clients.ts)
 *
 *  2b. marginal: the generator's CPU per second with one more shard, region, custom metric
 *     or step (scripts/bench/marginal-cost.ts).
 *
 *  3. queries: analytics over a synthetic 1-hour, 64-shard run in the local D1 (must stay
 *     under 2 s each; scripts/bench/query-bench.ts).
 *
 *  4. soak: a long run with the generator's memory sampled every 10 s (it must plateau) and
 *     the D1 rows per second (within the write bound; scripts/bench/soak-bench.ts).
 *
 *  5. streams: what a held SSE stream costs a shard in memory, the slope of the generator's
 *     memory over 0 → 1,000 open streams in one run (the figure behind the plan's streams
 *     per shard; scripts/bench/streams-bench.ts).
 *
 *  6. fuzz: the parsers at the edge against 10,000 generated bad inputs each
 *     (scripts/bench/fuzz-bench.ts).
 *
 *  7. faults: one run per fault (objects restarted, alarms doubled, flushes replayed, D1
 *     and R2 failing, the target failing), with and without abort and Ctrl-C: expected,
 *     counted, lost, double counted (scripts/bench/faults/).
 *
 *  8. dashboard: the same 16-shard run with 0 and with hundreds of live dashboard streams
 *     open: streams served, every window delivered, and the coordinator CPU they cost.
 *  9. script: the same load as a k6 script (`edgeload run script.js`) and as a spec, side by
 *     side: latency and generator CPU per request (scripts/bench/script-cost.ts).
 * 10. scale: whole runs of 35,000, 100,000 and 1,000,000 requests a second simulated on a
 *     virtual clock, every shard's real engine reporting through the aggregation tree to the
 *     coordinator: exact counts, merged percentiles, requests and CPU per object, D1 rows,
 *     start and abort fan-out, and by kind of object its requests, log events, storage rows
 *     and storage left beside the plan's (scripts/bench/scale-bench.ts, its own process;
 *     13 s of schedule a rate, ~15–30 minutes on the shared 2-core machine, most of it the
 *     1,000,000/s run; part of the full run).
 *
 * 11. chaos (never part of the full run: a seed is a run of seconds): seeded schedules of 2–6
 *     faults at once, drawn from what the fault table injects, over a flat run and a small
 *     tree (fan-in 2), with the invariants checked after each and a failing schedule shrunk
 *     (scripts/bench/chaos/). `npm run bench -- chaos --seeds N [--seed S | --seed 7,26] [--shape flat|tree]`
 *     (defaults: 10 seeds from 1, both shapes; --no-shrink lists failing seeds without shrinking them).
 *
 * `npm run bench -- faults` is `--only faults`.
 * `--only profile` (never part of the full run) writes a CPU profile of the generator's isolate
 * and prints where its time goes (scripts/bench/engine-profile.ts).
 * `--only fetch-options` (never part of the full run) prices each option the engine adds to a
 * fetch, in a bare workerd loop (scripts/bench/fetch-options.ts).
 * Options: --only histogram|generator|marginal|query|soak|streams|fuzz|faults|dashboard|script|scale|profile|fetch-options|chaos, --script-rates 100,300,500,
 * --scale-rates 35000,100000,1000000, --watchers 0,250,1000,0, --watchers-rate 320, --soak-duration 3m, --soak-rate 300, --rates 100,300,1000, --targets workerd,native, --duration 15s, --delay 20, --marginal-rate 200,
 * --shards N (default: as the plan makes them, as a user's run gets them), --baseline REV (generator: the same edgeload runs on that
 * revision's own stack, side by side; scripts/bench/baseline-stack.ts). Load goes only to the loopback target and stops by itself.
 */
import { parseArgs } from "node:util";
import { fuzzBench } from "./fuzz-bench.ts";
import { GENERATOR_TARGETS, generatorBench, type GeneratorTarget } from "./generator-bench.ts";
import { histogramBench } from "./histogram-bench.ts";
import { queryBench } from "./query-bench.ts";
import { soakBench } from "./soak-bench.ts";
import { streamsBench } from "./streams-bench.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    only: { type: "string" },
    rates: { type: "string", default: "100,300,1000" },
    targets: { type: "string", default: "workerd,native" },
    duration: { type: "string", default: "15s" },
    delay: { type: "string", default: "20" },
    shards: { type: "string", default: "plan" },
    "marginal-rate": { type: "string", default: "200" },
    "script-rates": { type: "string", default: "100,300,500" },
    "soak-duration": { type: "string", default: "3m" },
    "soak-rate": { type: "string", default: "300" },
    watchers: { type: "string", default: "0,250,1000,0" },
    "watchers-rate": { type: "string", default: "320" },
    baseline: { type: "string" },
    "scale-rates": { type: "string", default: "35000,100000,1000000" },
    seeds: { type: "string", default: "10" },
    seed: { type: "string", default: "1" },
    shape: { type: "string" },
    "no-shrink": { type: "boolean", default: false },
  },
});

/** `--shards N` forces a shard count; by default the plan makes them, as for a user's run. */
const forcedShards = values.shards === "plan" ? null : Number(values.shards);

// `npm run bench -- faults` names one part as a bare word, like --only.
values.only ??= positionals[0];
const PARTS = [
  "histogram",
  "generator",
  "marginal",
  "query",
  "soak",
  "streams",
  "fuzz",
  "faults",
  "dashboard",
  "script",
  "scale",
  "profile",
  "fetch-options",
  "chaos",
];
if (values.only && !PARTS.includes(values.only)) {
  console.error(`unknown benchmark "${values.only}": one of ${PARTS.join(", ")}`);
  process.exit(2);
}
if (!values.only || values.only === "histogram") histogramBench();
if (!values.only || values.only === "generator") {
  const rates = values.rates!.split(",").map(Number);
  const targets = values.targets!.split(",") as GeneratorTarget[];
  const unknown = targets.filter((t) => !GENERATOR_TARGETS.includes(t));
  if (unknown.length) {
    console.error(`unknown target "${unknown[0]}" in --targets: ${GENERATOR_TARGETS.join(", ")}`);
    process.exit(2);
  }
  await generatorBench({ rates, duration: values.duration!, delayMs: Number(values.delay), shards: forcedShards, baseline: values.baseline ?? null, targets });
}
if (!values.only || values.only === "marginal") {
  const { marginalCostBench } = await import("./marginal-cost.ts");
  await marginalCostBench(Number(values["marginal-rate"]), values.only === "marginal" ? values.duration! : "8s", Number(values.delay), values.baseline ?? null);
}
if (!values.only || values.only === "query") await queryBench();
if (!values.only || values.only === "soak") await soakBench(values["soak-duration"]!, Number(values["soak-rate"]));
if (!values.only || values.only === "streams") await streamsBench();
if (!values.only || values.only === "fuzz") await fuzzBench();
if (!values.only || values.only === "dashboard") {
  const { dashboardBench } = await import("./dashboard-watchers.ts");
  if (!(await dashboardBench(values.watchers.split(",").map(Number), Number(values["watchers-rate"])))) process.exitCode = 1;
}
if (!values.only || values.only === "script") {
  const { scriptCostBench } = await import("./script-cost.ts");
  await scriptCostBench(values["script-rates"]!.split(",").map(Number), values.only === "script" ? values.duration! : "8s", Number(values.delay), 4);
}
if (!values.only || values.only === "scale") {
  const { runScaleBench } = await import("./scale-process.ts");
  if (!(await runScaleBench(values["scale-rates"]!.split(",").map(Number)))) process.exitCode = 1;
}
if (values.only === "chaos") {
  const { chaosBench } = await import("./chaos/run-chaos.ts");
  const shapes = values.shape ? [values.shape] : ["flat", "tree"];
  if (shapes.some((s) => s !== "flat" && s !== "tree")) {
    console.error(`unknown shape "${values.shape}": flat or tree`);
    process.exit(2);
  }
  // --seed 7,26 plays those seeds; --seed S --seeds N plays N from S.
  const listed = values.seed!.includes(",") ? values.seed!.split(",").map(Number) : null;
  const seeds = listed ?? Array.from({ length: Number(values.seeds) }, (_, i) => Number(values.seed) + i);
  if (!(await chaosBench({ seeds, shapes: shapes as Array<"flat" | "tree">, shrink: !values["no-shrink"] }))) process.exitCode = 1;
}
// Only when asked for: a diagnosis, not a figure to hold.
if (values.only === "fetch-options") {
  const { fetchOptionsBench } = await import("./fetch-options.ts");
  await fetchOptionsBench(4000, 3, Number(values.delay));
}
if (values.only === "profile") {
  const { engineProfile } = await import("./engine-profile.ts");
  for (const rate of values.rates!.split(",").map(Number))
    await engineProfile({ rate, duration: values.duration!, delayMs: Number(values.delay), shards: forcedShards });
}
if (!values.only || values.only === "faults") {
  const { faultsBench } = await import("./faults/run-faults.ts");
  if (!(await faultsBench())) process.exitCode = 1;
}
