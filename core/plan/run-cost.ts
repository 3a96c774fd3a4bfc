/**
 * The cost pre-flight: a run's modelled usage (core/plan/run-usage.ts) priced with Cloudflare's
 * list prices (core/plan/cloudflare-pricing.ts), line by line, and set beside what the same load
 * would cost on Grafana Cloud k6, which bills virtual-user hours.
 *
 * The Durable Object lines are the shards' and the coordinator's; a run with an aggregation
 * tree adds the aggregators' own lines, at the same Durable Object prices.
 *
 * The figure is an estimate at marginal prices (after the plan's included usage) of every
 * line Cloudflare bills the run for: its objects' requests, duration and storage rows, D1's
 * rows, R2's reads, the API Worker's requests and CPU, Workers Logs' events, the storage it
 * keeps (D1 for the results retention, its objects' while it runs) and a k6 script's
 * Dynamic Workers. Each count is what the code does, held to the scale simulation where it
 * can be (scripts/bench/scale-simulation.test.ts), and rounded up where the model bounds it.
 * It can still fall short of a bill in three named ways: a target whose latencies spread
 * wider than the storage model's stores more histogram bytes (storage-usage.ts); a flow that
 * logs errors adds a Workers Logs event per line in a sampled invocation; and a run is priced
 * at its plan's latency — a target slower than `expectedLatency` leaves the shards short of
 * slots (the run saturates, it does not cost more), and the next run sized for it costs what
 * `edgeload plan` prints beside it at that latency (latency-costs.ts). The target's own costs
 * are not in it: a target on Workers bills its own requests and CPU (docs/cost-and-limits.md).
 *
 * @example
 * const cost = estimateCost(estimateUsage(spec, plan), spec);
 * cost.totalUsd        // → 0.41
 * cost.k6Cloud.usd     // → 43.75 for the same maxVUs and duration
 */
import { K6_CLOUD_MIN_VUH_PER_TEST, K6_CLOUD_USD_PER_VUH, PRICES, PRICING_DATE } from "./cloudflare-pricing.ts";
import type { AggregatorUsage, RunUsage } from "./run-usage.ts";
import type { DynamicWorkerUsage } from "./dynamic-worker-usage.ts";
import type { RunSpec } from "../spec/types.ts";

export interface CostLine {
  readonly item: string;
  readonly quantity: number;
  readonly unit: string;
  readonly usd: number;
}

export interface RunCost {
  readonly lines: readonly CostLine[];
  readonly totalUsd: number;
  /** Dollars per million requests sent to the target. */
  readonly usdPerMillionRequests: number;
  readonly pricingDate: string;
  /** The same run on Grafana Cloud k6: max VUs × minutes / 60 VU hours. */
  readonly k6Cloud: {
    readonly vus: number;
    /** Where the VU count comes from, as printed beside it (see k6CloudVus). */
    readonly vusBasis: string;
    readonly vuh: number;
    readonly usd: number;
    readonly usdPerMillionRequests: number;
  };
}

type VuSpec = Pick<RunSpec, "vus" | "maxInFlight" | "maxInFlightFrom" | "peakRatePerS" | "expectedLatencyMs"> & {
  readonly scenarios?: ReadonlyArray<{ readonly spec: VuSpec }>;
};

/**
 * The VUs a k6 user would give the same run, which is what k6 Cloud bills: the spec's own
 * figure where it has one (the VUs of a VU executor, `maxVUs`, `preAllocatedVUs`), else
 * Little's law, VUs in use = arrival rate × response time, at the spec's
 * `expectedLatency`. Not one VU per request per second: at 500/s against a 50 ms endpoint
 * a k6 user sets ~25 VUs, not 500. Named scenarios add up (an upper bound when they do
 * not overlap).
 */
export function k6CloudVus(spec: VuSpec): { vus: number; basis: string } {
  if (spec.scenarios?.length) {
    const parts = spec.scenarios.map((s) => k6CloudVus(s.spec));
    return { vus: parts.reduce((a, p) => a + p.vus, 0), basis: "the sum over the run's scenarios" };
  }
  if (spec.vus) return { vus: spec.maxInFlight, basis: "the spec's peak VUs" };
  if (spec.maxInFlightFrom) return { vus: spec.maxInFlight, basis: `the spec's ${spec.maxInFlightFrom}` };
  const vus = Math.max(1, Math.ceil((spec.peakRatePerS * spec.expectedLatencyMs) / 1000));
  return {
    vus,
    basis: `Little's law: ${spec.peakRatePerS}/s × ${spec.expectedLatencyMs} ms expected response time (set maxVUs or expectedLatency to use yours)`,
  };
}

/** Prices the run's modelled usage line by line, and sets the same load on Grafana Cloud k6 beside it. */
export function estimateCost(usage: RunUsage, spec: VuSpec & Pick<RunSpec, "durationMs">): RunCost {
  const lines: CostLine[] = [
    ...durableObjectLines(usage),
    // The aggregators of a tree are Durable Objects too, priced alike; their own lines show what the tree adds.
    ...(usage.aggregators.count ? aggregatorLines(usage.aggregators) : []),
    ...storeAndWorkerLines(usage),
    ...(usage.dynamicWorker.calls > 0 ? dynamicWorkerLines(usage.dynamicWorker, spec.durationMs) : []),
    ...logsAndStorageLines(usage),
  ];
  const totalUsd = lines.reduce((a, l) => a + l.usd, 0);
  const millions = Math.max(1, usage.requests) / 1e6;
  return {
    lines,
    totalUsd,
    usdPerMillionRequests: totalUsd / millions,
    pricingDate: PRICING_DATE,
    k6Cloud: k6CloudCost(spec, millions),
  };
}

/** A line priced per million of what it meters. */
function perMillionLine(item: string, quantity: number, unit: string, pricePerMillion: number): CostLine {
  return { item, quantity, unit, usd: (quantity / 1e6) * pricePerMillion };
}

/** A kind of Durable Object's requests, duration and storage rows, at the Durable Object prices. */
function objectLines(kind: string, o: { requests: number; gbSeconds: number; rowsWritten: number; rowsRead: number }): CostLine[] {
  return [
    perMillionLine(`${kind} requests`, o.requests, "requests", PRICES.durableObjectRequestPerMillion),
    perMillionLine(`${kind} duration`, o.gbSeconds, "GB-s", PRICES.durableObjectGbSecondPerMillion),
    perMillionLine(`${kind} storage rows written`, o.rowsWritten, "rows", PRICES.durableObjectRowsWrittenPerMillion),
    perMillionLine(`${kind} storage rows read`, o.rowsRead, "rows", PRICES.durableObjectRowsReadPerMillion),
  ];
}

/** The shards' and the coordinator's Durable Object lines. */
function durableObjectLines(usage: RunUsage): CostLine[] {
  return objectLines("Durable Object", {
    requests: usage.durableObjectRequests,
    gbSeconds: usage.durableObjectGbSeconds,
    rowsWritten: usage.durableObjectRowsWritten,
    rowsRead: usage.durableObjectRowsRead,
  });
}

/** A tree's aggregators, at the Durable Object prices. */
function aggregatorLines(aggregators: AggregatorUsage): CostLine[] {
  return objectLines("Aggregator", aggregators);
}

/** D1's rows, R2's reads and the API Worker's requests and CPU. */
function storeAndWorkerLines(usage: RunUsage): CostLine[] {
  return [
    perMillionLine("D1 rows written", usage.d1RowsWritten, "rows", PRICES.d1RowsWrittenPerMillion),
    perMillionLine("D1 rows read", usage.d1RowsRead, "rows", PRICES.d1RowsReadPerMillion),
    perMillionLine("R2 reads (class B)", usage.r2Reads, "operations", PRICES.r2ClassBPerMillion),
    perMillionLine("Workers requests", usage.workersRequests, "requests", PRICES.workersRequestPerMillion),
    perMillionLine("Workers CPU", usage.workersCpuMs, "ms", PRICES.workersCpuMsPerMillion),
  ];
}

/** Workers Logs' events at the sampling rate, and the storage the run keeps: D1's rows for the retention, its objects' while it runs. */
function logsAndStorageLines(usage: RunUsage): CostLine[] {
  const { storage } = usage;
  return [
    perMillionLine(`Workers Logs events (${usage.logsSamplingRate} sampled)`, usage.workersLogsEvents, "events", PRICES.workersLogsEventsPerMillion),
    {
      item: `D1 storage (${storage.retentionDays} days kept)`,
      quantity: storage.d1GbMonths,
      unit: "GB-months",
      usd: storage.d1GbMonths * PRICES.d1StorageGbMonth,
    },
    {
      item: "Durable Object storage (while it runs)",
      quantity: storage.durableObjectGbMonths,
      unit: "GB-months",
      usd: storage.durableObjectGbMonths * PRICES.durableObjectStorageGbMonth,
    },
    ...screenshotLines(storage),
  ];
}

/** A browser script's screenshots (when the plan was told how many): an R2 write each, and their bytes kept for the retention. */
function screenshotLines(storage: RunUsage["storage"]): CostLine[] {
  if (storage.screenshots <= 0) return [];
  return [
    perMillionLine("R2 writes (screenshots, class A)", storage.screenshots, "operations", PRICES.r2ClassAPerMillion),
    {
      item: `R2 storage (screenshots, ${storage.retentionDays} days kept)`,
      quantity: storage.r2GbMonths,
      unit: "GB-months",
      usd: storage.r2GbMonths * PRICES.r2StorageGbMonth,
    },
  ];
}

/** A k6 script run's Dynamic Workers: their calls and CPU as a Worker's, and a day's fee for each one (an ID with its code) per UTC day the run may touch. */
function dynamicWorkerLines(dynamicWorker: DynamicWorkerUsage, durationMs: number): CostLine[] {
  // Billed per UTC day it is created on: a run may start before midnight and end after, so the days it may touch.
  const workerDays = dynamicWorker.workers * (Math.ceil(durationMs / 86_400_000) + 1);
  return [
    perMillionLine("Dynamic Worker calls (k6 script)", dynamicWorker.calls, "requests", PRICES.workersRequestPerMillion),
    perMillionLine("Dynamic Worker CPU", dynamicWorker.cpuMs, "ms", PRICES.workersCpuMsPerMillion),
    { item: "Dynamic Workers (an ID a day each)", quantity: workerDays, unit: "worker-days", usd: workerDays * PRICES.dynamicWorkerPerDay },
  ];
}

/** The same run on Grafana Cloud k6, which bills the VUs a test may use, per started minute; `millions` of requests it sends. */
function k6CloudCost(spec: VuSpec & Pick<RunSpec, "durationMs">, millions: number): RunCost["k6Cloud"] {
  const { vus, basis } = k6CloudVus(spec);
  const minutes = Math.ceil(spec.durationMs / 60_000);
  const vuh = Math.max(K6_CLOUD_MIN_VUH_PER_TEST, (vus * minutes) / 60);
  const usd = vuh * K6_CLOUD_USD_PER_VUH;
  return { vus, vusBasis: basis, vuh, usd, usdPerMillionRequests: usd / millions };
}

/** "$0.0123" with enough digits to show cents of a cent, "$12.35" above a dollar. */
export function formatUsd(usd: number): string {
  if (usd >= 1) return `$${usd.toFixed(2)}`;
  if (usd === 0) return "$0";
  return `$${usd.toPrecision(2)}`;
}
