/**
 * Query timings on a synthetic 1-hour, 64-shard run: the figures issue 4 asks for (every
 * query under 2 s). The run is written into the local stack's real D1 with the statements
 * the coordinator uses (1 s windows per region, 5 histograms each, 64 shard rows), then
 * each query is asked over the HTTP API as a user would, three times; the slowest counts.
 *
 *   node scripts/bench/query-timing.ts [--regions 4] [--seconds 3600] [--rate 1000]
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { MetricStats } from "../../core/metrics/metric-stats.ts";
import { insertRun, insertShards, updateRunStatus, updateShard, windowStatements } from "../../coordinator/store/results-store.ts";
import type { WindowCell } from "../../core/run/window-cell.ts";
import { EdgeloadClient } from "../../cli/client.ts";
import { startLocalStack } from "../../cli/local-stack.ts";

const REGIONS = ["wnam", "enam", "weur", "apac", "eeur", "apac-ne", "sam", "oc"];

export interface QueryTiming {
  readonly query: string;
  readonly rows: number;
  readonly worstMs: number;
  readonly medianMs: number;
}

/** Latency-like values in µs around `centerUs`, with a tail, from a seeded generator. */
function sampler(seed: number) {
  let x = seed;
  const rand = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return (centerUs: number) => Math.round(centerUs * Math.exp(0.35 * Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand())));
}

interface SyntheticRun {
  readonly regions: number;
  readonly seconds: number;
  readonly ratePerS: number;
  readonly shards: number;
}

export async function queryTimings(options: SyntheticRun): Promise<{ timings: QueryTiming[]; fillS: number; rows: number }> {
  const stateDir = await mkdtemp(join(tmpdir(), "edgeload-query-bench-"));
  const stack = await startLocalStack({ persist: stateDir });
  try {
    const db = (await stack.resultsDatabase()) as unknown as D1Database;
    const runId = "r-bench-1h";
    const fillStarted = performance.now();
    const rows = await fillSyntheticRun(db, runId, options);
    const fillS = (performance.now() - fillStarted) / 1000;
    const timings = await timeQueries(new EdgeloadClient(stack.apiUrl, stack.token), runId);
    return { timings, fillS, rows };
  } finally {
    await stack.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

/**
 * Writes the synthetic run into `db` with the coordinator's statements: its run row, its
 * shard rows, a window per region every second (with its histograms), the shards' totals
 * and the run's end. Returns the window statements it wrote.
 */
async function fillSyntheticRun(db: D1Database, runId: string, options: SyntheticRun): Promise<number> {
  const t0 = Date.now() - options.seconds * 1000;
  const regions = REGIONS.slice(0, options.regions);
  const spec = { name: "synthetic 1 h, 64 shards" };
  await db.batch([
    insertRun(db, {
      id: runId,
      name: spec.name,
      target: "http://127.0.0.1:9",
      createdAt: t0,
      durationMs: options.seconds * 1000,
      specJson: JSON.stringify(spec),
      planJson: "{}",
    }),
  ]);
  await db.batch(
    insertShards(
      db,
      runId,
      Array.from({ length: options.shards }, (_, i) => ({
        index: i,
        region: regions[i % regions.length]!,
        segment: `${i}/${options.shards}:${i + 1}/${options.shards}`,
      })),
    ),
  );

  const sample = sampler(7);
  const perCell = Math.max(1, Math.round(options.ratePerS / regions.length));
  const shardStats = Array.from({ length: options.shards }, () => new MetricStats());
  let rows = 0;
  let pending: WindowCell[] = [];
  const flush = async () => {
    for (let i = 0; i < pending.length; i += 40) {
      const statements = windowStatements(db, runId, pending.slice(i, i + 40));
      rows += statements.length;
      await db.batch(statements);
    }
    pending = [];
  };
  for (let t = 0; t < options.seconds; t++) {
    for (const [ri, region] of regions.entries()) {
      // A slow spell in one region for a minute, so queries have something to find.
      const center = 20_000 + ri * 4_000 + (ri === 1 && t >= 1800 && t < 1860 ? 60_000 : 0);
      const stats = syntheticWindow(sample, center, perCell, t);
      shardStats[(t * regions.length + ri) % options.shards]!.merge(stats);
      pending.push({ windowS: t, region, step: "default", stats });
    }
    if (pending.length >= 400) await flush();
  }
  await flush();
  await db.batch(
    shardStats.map((stats, index) =>
      updateShard(db, runId, {
        index,
        colo: `C${index % 8}`,
        stats,
        restarts: 0,
        invocations: 1,
        subrequests: stats.counters.sent,
        peakInFlight: 10,
        summaryJson: "{}",
      }),
    ),
  );
  await db.batch([updateRunStatus(db, runId, "passed", { t0, endedAt: t0 + options.seconds * 1000 })]);
  return rows;
}

/** One region's second `t`: `perCell` requests around `centerUs`, one in 500 of the run's failing with 503. */
function syntheticWindow(sample: (centerUs: number) => number, centerUs: number, perCell: number, t: number): MetricStats {
  const stats = new MetricStats();
  const c = stats.counters;
  for (let i = 0; i < perCell; i++) {
    const us = sample(centerUs);
    stats.trends.duration.record(us);
    stats.trends.ttfb.record(Math.round(us * 0.9));
    stats.trends.corrected.record(us + 300);
    stats.trends.lag.record(300);
    stats.trends.slotWait.record(0);
    const failed = (t * perCell + i) % 500 === 0;
    stats.countStatus(failed ? 503 : 200);
    if (failed) {
      c.failed++;
      c.status5xx++;
    }
    c.sent++;
    c.completed++;
    c.iterations++;
  }
  return stats;
}

/** Each query over the HTTP API as a user asks it, three times: the slowest and the median. */
async function timeQueries(client: EdgeloadClient, runId: string): Promise<QueryTiming[]> {
  const queries: Array<[string, () => Promise<unknown[]>]> = [
    [
      "whole run by region: rps, error rate, p50/p95/p99/p99.9",
      () => client.query(runId, { by: "region", metrics: "rps,error_rate,p50,p95,p99,p99.9" }).then((r) => r.rows),
    ],
    ["by region every 1m: rps, p95, p99", () => client.query(runId, { by: "region", every: "1m", metrics: "rps,p95,p99" }).then((r) => r.rows)],
    ["every 1s (3600 points): rps, p99", () => client.query(runId, { every: "1s", metrics: "rps,p99" }).then((r) => r.rows)],
    [
      "by region,step every 10s: p50, p95, error rate",
      () => client.query(runId, { by: "region,step", every: "10s", metrics: "p50,p95,error_rate" }).then((r) => r.rows),
    ],
    ["by status class every 1m: requests", () => client.query(runId, { by: "status_class", every: "1m", metrics: "requests" }).then((r) => r.rows)],
    ["by shard (64), whole run: requests, p95", () => client.query(runId, { by: "shard", metrics: "requests,p95" }).then((r) => r.rows)],
    ["SQL: p95 per region per minute (SCHEMA.md)", async () => (await client.sql(P95_BY_REGION_MINUTE, [runId])).rows],
  ];
  const timings: QueryTiming[] = [];
  for (const [query, ask] of queries) {
    const times: number[] = [];
    let n = 0;
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      n = (await ask()).length;
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    timings.push({ query, rows: n, worstMs: times[2]!, medianMs: times[1]! });
  }
  return timings;
}

/** The documented percentile SQL (coordinator/migrations/SCHEMA.md, block p95-by-region-minute). */
const P95_BY_REGION_MINUTE = `
WITH buckets AS (
  SELECT region, window_s / 60 AS minute, value_us, SUM(count) AS n
  FROM histogram_buckets WHERE run_id = ?1 AND metric = 'http_req_duration'
  GROUP BY region, minute, value_us
),
ranked AS (
  SELECT region, minute, value_us,
         SUM(n) OVER (PARTITION BY region, minute ORDER BY value_us ROWS UNBOUNDED PRECEDING) AS cumulative,
         SUM(n) OVER (PARTITION BY region, minute) AS total
  FROM buckets
)
SELECT region, minute, MIN(value_us) / 1000.0 AS p95_ms FROM ranked WHERE cumulative >= 0.95 * total GROUP BY region, minute`;

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      regions: { type: "string", default: "4" },
      seconds: { type: "string", default: "3600" },
      rate: { type: "string", default: "1000" },
      shards: { type: "string", default: "64" },
    },
  });
  const { timings, fillS, rows } = await queryTimings({
    regions: Number(values.regions),
    seconds: Number(values.seconds),
    ratePerS: Number(values.rate),
    shards: Number(values.shards),
  });
  console.log(
    `synthetic run: ${values.seconds} s × ${values.regions} regions, ${values.shards} shards, ${values.rate}/s; ${rows} insert statements in ${fillS.toFixed(1)} s`,
  );
  for (const t of timings)
    console.log(
      `  ${t.query.padEnd(58)} ${String(t.rows).padStart(6)} rows   median ${t.medianMs.toFixed(0).padStart(5)} ms   worst ${t.worstMs.toFixed(0).padStart(5)} ms${t.worstMs > 2000 ? "   OVER 2 s" : ""}`,
    );
}
