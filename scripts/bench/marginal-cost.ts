/**
 * What one more shard, region, custom metric or step costs the generator: runs the same
 * load (constant-arrival-rate against the local target's /delay) with one dimension grown
 * at a time, and prints the generator's CPU per second of run and the D1 rows it wrote.
 * "Flat" means each doubling adds about what the previous one did per unit: nothing grows
 * faster than the count itself (no per-shard merge that scans every shard, no per-metric
 * pass over every request). Its figures are side by side in one run on one machine.
 *
 * Then the fixed cost of a shard on its own: the same low rate (1 request a second per
 * shard at the most shards) spread over FEW_SHARDS and then MANY_SHARDS shards, so what
 * grows is the shards' own per-second work (timers, window close and store, the flush, its
 * intake) and not the requests; ms of CPU per shard per second is the slope between them.
 * MANY_SHARDS is past one aggregator's fan-in, so that run reports through a tree. With
 * `--baseline REV` the same pair also runs on that revision's stack, in the order
 * baseline, this tree, this tree, baseline.
 *
 *   npm run bench -- marginal [--marginal-rate 200] [--duration 8s] [--delay 20] [--baseline REV]
 */
import { EdgeloadClient } from "../../cli/client.ts";
import { startLocalStack, type LocalStack } from "../../cli/local-stack.ts";
import { cpuSeconds } from "../../cli/processes.ts";
import { markdownTable } from "./markdown-table.ts";
import { startBaselineStack, type BaselineStack } from "./baseline-stack.ts";

/** The fixed-cost pair: few shards, then many (past one aggregator's fan-in of 100). */
const FEW_SHARDS = 16;
const MANY_SHARDS = 128;

const REGIONS = ["wnam", "enam", "weur", "apac", "eeur", "oc", "me", "afr"];

interface Variant {
  readonly dimension: "shards" | "regions" | "custom metrics" | "steps";
  readonly count: number;
  readonly shards: number;
  readonly regions: number;
  readonly metrics: number;
  readonly steps: number;
}

/** The base run is 4 shards in 1 region, 1 step, no custom metric; each row grows one. */
function variants(): Variant[] {
  const base = { shards: 4, regions: 1, metrics: 0, steps: 1 };
  return [
    ...[4, 8, 16].map((count) => ({ ...base, dimension: "shards" as const, count, shards: count })),
    ...[1, 2, 4].map((count) => ({ ...base, dimension: "regions" as const, count, regions: count, shards: Math.max(4, count) })),
    ...[0, 4, 8].map((count) => ({ ...base, dimension: "custom metrics" as const, count, metrics: count })),
    ...[1, 2, 4].map((count) => ({ ...base, dimension: "steps" as const, count, steps: count })),
  ];
}

function specOf(v: Variant, stack: LocalStack, rate: number, duration: string, delayMs: number): Record<string, unknown> {
  const names = Array.from({ length: v.metrics }, (_, i) => `m${i}`);
  const metrics = Object.fromEntries(names.map((n, i) => [n, { type: (["trend", "counter", "rate"] as const)[i % 3] }]));
  const record = Object.fromEntries(names.map((n, i) => [n, (["duration", "count", "success"] as const)[i % 3]]));
  return {
    name: `marginal ${v.dimension} ${v.count}`,
    target: stack.targetUrl,
    executor: "constant-arrival-rate",
    rate,
    duration,
    shards: v.shards,
    regions: REGIONS.slice(0, v.regions),
    maxVUs: Math.max(200, rate),
    timeout: "10s",
    ...(v.metrics ? { metrics } : {}),
    steps: Array.from({ length: v.steps }, (_, i) => ({ name: `s${i}`, path: `/delay?ms=${delayMs}`, ...(i === 0 && v.metrics ? { record } : {}) })),
  };
}

export async function marginalCostBench(rate: number, duration: string, delayMs: number, baselineRev: string | null = null): Promise<void> {
  const stack = await startLocalStack({ persist: false });
  let baseline: BaselineStack | null = null;
  try {
    const client = new EdgeloadClient(stack.apiUrl, stack.token);
    await (await fetch(`${stack.targetUrl}/delay?ms=${delayMs}`)).arrayBuffer();
    const db = await stack.resultsDatabase();
    console.log(
      `\n## Marginal cost: ${rate}/s for ${duration} against /delay?ms=${delayMs}; one dimension grown at a time (base: 4 shards, 1 region, 1 step, no custom metric)\n`,
    );
    const rows: string[][] = [];
    let previous: { dimension: string; count: number; cpuPerS: number } | null = null;
    for (const v of variants()) {
      const pids = stack.processes.coordinator;
      const before = cpuSeconds(pids);
      const run = await client.createRun(specOf(v, stack, rate, duration, delayMs));
      await client.waitForEnd(run.id, () => {}, 1000);
      const cpuS = cpuSeconds(pids) - before;
      const s = await client.summary(run.id);
      const seconds = parseFloat(duration);
      const requests = (s.metrics as Record<string, any>).http_reqs.count as number;
      const counted = db
        .prepare("SELECT (SELECT COUNT(*) FROM windows WHERE run_id = ?1) + (SELECT COUNT(*) FROM histograms WHERE run_id = ?1) AS n")
        .bind(run.id) as { first<T>(): Promise<T | null> };
      const written = await counted.first<{ n: number }>();
      const cpuPerS = (cpuS * 1000) / seconds;
      const perUnit =
        previous && previous.dimension === v.dimension && v.count !== previous.count ? (cpuPerS - previous.cpuPerS) / (v.count - previous.count) : null;
      rows.push([
        v.dimension,
        String(v.count),
        String(requests),
        cpuPerS.toFixed(0),
        ((cpuS / requests) * 1000).toFixed(3),
        perUnit === null ? "" : perUnit.toFixed(1),
        ((written?.n ?? 0) / seconds).toFixed(1),
      ]);
      previous = { dimension: v.dimension, count: v.count, cpuPerS };
    }
    console.log(
      markdownTable(
        ["grown", "count", "requests", "generator CPU ms/s", "CPU ms per request", "ms/s per one more (vs the row above)", "D1 rows/s"],
        rows,
        new Set([0]),
      ),
    );
    console.log(`\n  CPU: the generator's workerd process (every shard and the coordinator) over the run, per second of run.`);

    if (baselineRev) baseline = await startBaselineStack(baselineRev);
    await shardFixedCost(stack, baseline, duration, delayMs);
  } finally {
    await Promise.all([stack.stop(), baseline?.stack.stop()]);
  }
}

/** CPU ms per second of run of `shards` shards sending MANY_SHARDS requests a second in all. */
async function cpuPerSecond(stack: LocalStack, shards: number, duration: string, delayMs: number): Promise<number> {
  const client = new EdgeloadClient(stack.apiUrl, stack.token);
  const spec = specOf({ dimension: "shards", count: shards, shards, regions: 1, metrics: 0, steps: 1 }, stack, MANY_SHARDS, duration, delayMs);
  const before = cpuSeconds(stack.processes.coordinator);
  const run = await client.createRun(spec);
  await client.waitForEnd(run.id, () => {}, 1000);
  return ((cpuSeconds(stack.processes.coordinator) - before) * 1000) / parseFloat(duration);
}

/** The fixed cost of one shard: the slope from FEW_SHARDS to MANY_SHARDS at the same rate (see the header). */
async function shardFixedCost(stack: LocalStack, baseline: BaselineStack | null, duration: string, delayMs: number): Promise<void> {
  const pair = async (s: LocalStack) => {
    const few = await cpuPerSecond(s, FEW_SHARDS, duration, delayMs);
    const many = await cpuPerSecond(s, MANY_SHARDS, duration, delayMs);
    return { few, many, perShard: (many - few) / (MANY_SHARDS - FEW_SHARDS) };
  };
  console.log(
    `\n## Fixed cost of a shard: ${MANY_SHARDS}/s for ${duration} over ${FEW_SHARDS} and then ${MANY_SHARDS} shards (1 region, /delay?ms=${delayMs})${baseline ? `; ${baseline.label} beside this tree, in the order baseline, this tree, this tree, baseline` : ""}\n`,
  );
  const rows: Array<{ label: string; few: number; many: number; perShard: number }> = [];
  if (baseline) rows.push({ label: baseline.label, ...(await pair(baseline.stack)) });
  rows.push({ label: "this tree", ...(await pair(stack)) }, { label: "this tree", ...(await pair(stack)) });
  if (baseline) rows.push({ label: baseline.label, ...(await pair(baseline.stack)) });
  console.log(
    markdownTable(
      ["code", `CPU ms/s, ${FEW_SHARDS} shards`, `CPU ms/s, ${MANY_SHARDS} shards`, "ms/s per shard"],
      rows.map((r) => [r.label, r.few.toFixed(0), r.many.toFixed(0), r.perShard.toFixed(2)]),
      new Set([0]),
    ),
  );
  if (baseline) {
    const mean = (label: string) => {
      const mine = rows.filter((r) => r.label === label);
      return mine.reduce((a, r) => a + r.perShard, 0) / mine.length;
    };
    const now = mean("this tree");
    const before = mean(baseline.label);
    console.log(`\n  per shard: ${before.toFixed(2)} → ${now.toFixed(2)} ms/s (this tree / baseline ${(now / before).toFixed(2)})`);
  }
}
