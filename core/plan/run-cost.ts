/**
 * The cost pre-flight: a run's modelled usage (core/plan/run-usage.ts) priced with Cloudflare's
 * list prices (core/plan/cloudflare-pricing.ts), line by line, and set beside what the same load
 * would cost on Grafana Cloud k6, which bills virtual-user hours.
 *
 * The Durable Object lines are the shards' and the coordinator's; a run with an aggregation
 * tree adds the aggregators' own lines, at the same Durable Object prices.
 *
 * The figure is an estimate at marginal prices (after the plan's included usage), so it
 * never under-states what a run adds to a bill; the target's own costs are not in it (a
 * target on Workers bills its own requests and CPU).
 *
 * @example
 * const cost = estimateCost(estimateUsage(spec, plan), spec);
 * cost.totalUsd        // → 0.41
 * cost.k6Cloud.usd     // → 43.75 for the same maxVUs and duration
 */
import { K6_CLOUD_MIN_VUH_PER_TEST, K6_CLOUD_USD_PER_VUH, PRICES, PRICING_DATE } from "./cloudflare-pricing.ts";
import type { RunUsage } from "./run-usage.ts";
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

const perMillion = (quantity: number, price: number) => (quantity / 1e6) * price;

export function estimateCost(usage: RunUsage, spec: VuSpec & Pick<RunSpec, "durationMs">): RunCost {
  const lines: CostLine[] = [
    {
      item: "Durable Object requests",
      quantity: usage.durableObjectRequests,
      unit: "requests",
      usd: perMillion(usage.durableObjectRequests, PRICES.durableObjectRequestPerMillion),
    },
    {
      item: "Durable Object duration",
      quantity: usage.durableObjectGbSeconds,
      unit: "GB-s",
      usd: perMillion(usage.durableObjectGbSeconds, PRICES.durableObjectGbSecondPerMillion),
    },
    {
      item: "Durable Object storage rows written",
      quantity: usage.durableObjectRowsWritten,
      unit: "rows",
      usd: perMillion(usage.durableObjectRowsWritten, PRICES.durableObjectRowsWrittenPerMillion),
    },
    {
      item: "Durable Object storage rows read",
      quantity: usage.durableObjectRowsRead,
      unit: "rows",
      usd: perMillion(usage.durableObjectRowsRead, PRICES.durableObjectRowsReadPerMillion),
    },
    // The aggregators of a tree are Durable Objects too, priced alike; their own lines show what the tree adds.
    ...(usage.aggregators.count
      ? [
          {
            item: "Aggregator requests",
            quantity: usage.aggregators.requests,
            unit: "requests",
            usd: perMillion(usage.aggregators.requests, PRICES.durableObjectRequestPerMillion),
          },
          {
            item: "Aggregator duration",
            quantity: usage.aggregators.gbSeconds,
            unit: "GB-s",
            usd: perMillion(usage.aggregators.gbSeconds, PRICES.durableObjectGbSecondPerMillion),
          },
          {
            item: "Aggregator storage rows written",
            quantity: usage.aggregators.rowsWritten,
            unit: "rows",
            usd: perMillion(usage.aggregators.rowsWritten, PRICES.durableObjectRowsWrittenPerMillion),
          },
          {
            item: "Aggregator storage rows read",
            quantity: usage.aggregators.rowsRead,
            unit: "rows",
            usd: perMillion(usage.aggregators.rowsRead, PRICES.durableObjectRowsReadPerMillion),
          },
        ]
      : []),
    { item: "D1 rows written", quantity: usage.d1RowsWritten, unit: "rows", usd: perMillion(usage.d1RowsWritten, PRICES.d1RowsWrittenPerMillion) },
    { item: "D1 rows read", quantity: usage.d1RowsRead, unit: "rows", usd: perMillion(usage.d1RowsRead, PRICES.d1RowsReadPerMillion) },
    { item: "R2 reads (class B)", quantity: usage.r2Reads, unit: "operations", usd: perMillion(usage.r2Reads, PRICES.r2ClassBPerMillion) },
    { item: "Workers requests", quantity: usage.workersRequests, unit: "requests", usd: perMillion(usage.workersRequests, PRICES.workersRequestPerMillion) },
    { item: "Workers CPU", quantity: usage.workersCpuMs, unit: "ms", usd: perMillion(usage.workersCpuMs, PRICES.workersCpuMsPerMillion) },
    ...(usage.dynamicWorker.calls > 0
      ? [
          {
            item: "Dynamic Worker calls (k6 script)",
            quantity: usage.dynamicWorker.calls,
            unit: "requests",
            usd: perMillion(usage.dynamicWorker.calls, PRICES.workersRequestPerMillion),
          },
          {
            item: "Dynamic Worker CPU",
            quantity: usage.dynamicWorker.cpuMs,
            unit: "ms",
            usd: perMillion(usage.dynamicWorker.cpuMs, PRICES.workersCpuMsPerMillion),
          },
          {
            item: "Dynamic Workers (a day each)",
            quantity: usage.dynamicWorker.workers * Math.ceil(spec.durationMs / 86_400_000),
            unit: "worker-days",
            usd: usage.dynamicWorker.workers * Math.ceil(spec.durationMs / 86_400_000) * PRICES.dynamicWorkerPerDay,
          },
        ]
      : []),
  ];
  const totalUsd = lines.reduce((a, l) => a + l.usd, 0);
  // k6 Cloud bills the VUs a test may use, per started minute.
  const { vus, basis } = k6CloudVus(spec);
  const minutes = Math.ceil(spec.durationMs / 60_000);
  const vuh = Math.max(K6_CLOUD_MIN_VUH_PER_TEST, (vus * minutes) / 60);
  const k6Usd = vuh * K6_CLOUD_USD_PER_VUH;
  const millions = Math.max(1, usage.requests) / 1e6;
  return {
    lines,
    totalUsd,
    usdPerMillionRequests: totalUsd / millions,
    pricingDate: PRICING_DATE,
    k6Cloud: { vus, vusBasis: basis, vuh, usd: k6Usd, usdPerMillionRequests: k6Usd / millions },
  };
}

/** "$0.0123" with enough digits to show cents of a cent, "$12.35" above a dollar. */
export function formatUsd(usd: number): string {
  if (usd >= 1) return `$${usd.toFixed(2)}`;
  if (usd === 0) return "$0";
  return `$${usd.toPrecision(2)}`;
}
