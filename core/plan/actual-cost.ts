/**
 * What a run cost beside what its plan said it would (issue 49), for its summary
 * (`edgeload.cost`): the plan's estimate, and the same pricing (run-usage.ts, run-cost.ts) of
 * what the run really did — its shards for the seconds it really lasted, the requests it
 * really sent — with the target's time to first byte as measured (p95 of
 * http_req_waiting) beside the latency the plan assumed. A target slower than the plan's
 * `expectedLatency` does not make the run dearer (its shards are fixed when it starts): it
 * leaves them short of connection slots, so the run may not reach its rate; the measured
 * latency says what to plan the next run at (`edgeload plan --probe`). Pure.
 */
import type { Histogram } from "../metrics/histogram.ts";
import type { RunSpec } from "../spec/types.ts";
import { requestsPerIteration } from "./closed-model.ts";
import type { Plan } from "./plan.ts";
import { estimateCost, formatUsd } from "./run-cost.ts";
import { estimateUsage } from "./run-usage.ts";

/** A run priced: its total, per million requests, and what was priced. */
export interface CostFigures {
  readonly usd: number;
  readonly usdPerMillionRequests: number;
  readonly requests: number;
  /** Shards × seconds of schedule: their duration is most of the bill. */
  readonly shardSeconds: number;
}

export interface RunCostSummary {
  /** The plan's estimate, at the latency it assumed. */
  readonly planned: CostFigures;
  /** What the run ran up: its shards for the seconds it lasted, the requests it sent. */
  readonly actual: CostFigures;
  readonly latencyPlannedMs: number;
  /** p95 of http_req_waiting (send → headers) over the run, ms; null before any response. */
  readonly latencyMeasuredMs: number | null;
  readonly pricingDate: string;
}

export interface RunCostInput {
  readonly spec: RunSpec;
  readonly plan: Plan;
  /** Seconds of schedule the run measured (its summary's duration). */
  readonly elapsedS: number;
  /** Requests the shards sent. */
  readonly sentRequests: number;
  /** The run's time-to-first-byte histogram (µs). */
  readonly ttfb: Histogram;
}

/** The planned and the actual cost of a run, and the latency planned and measured (see the header). */
export function runCostSummary(input: RunCostInput): RunCostSummary {
  const { spec, plan } = input;
  const planned = priced(spec, plan);
  // The same run as it happened: its real length, and as many iterations as sent its requests.
  const ranMs = Math.max(1, Math.round(input.elapsedS * 1000));
  const iterations = input.sentRequests / Math.max(1, requestsPerIteration(spec));
  const ran: Plan = {
    ...plan,
    totalIterations: iterations,
    ...(plan.closedModel ? { closedModel: { ...plan.closedModel, estimatedIterations: iterations, estimatedRequests: input.sentRequests } } : {}),
  };
  const actual = priced({ ...spec, durationMs: ranMs }, ran);
  return {
    planned: planned.figures,
    actual: actual.figures,
    latencyPlannedMs: spec.expectedLatencyMs,
    latencyMeasuredMs: input.ttfb.count ? Math.round(input.ttfb.quantile(0.95) / 100) / 10 : null,
    pricingDate: planned.pricingDate,
  };
}

function priced(spec: RunSpec, plan: Plan): { figures: CostFigures; pricingDate: string } {
  const usage = estimateUsage(spec, plan);
  const cost = estimateCost(usage, spec);
  return {
    figures: { usd: cost.totalUsd, usdPerMillionRequests: cost.usdPerMillionRequests, requests: usage.requests, shardSeconds: usage.shards * usage.durationS },
    pricingDate: cost.pricingDate,
  };
}

/**
 * The cost in a line, for the text summary and the report, e.g. "$4.51 run up ($0.019 per
 * million requests), $4.72 planned (prices of 2026-12-07); time to first byte p95 48 ms
 * measured, 30 ms planned: plan the next run at 48 ms (edgeload plan --probe)". The advice
 * comes when the target answered more than a fifth slower than planned.
 */
export function costLine(c: RunCostSummary): string {
  const cost = `${formatUsd(c.actual.usd)} run up (${formatUsd(c.actual.usdPerMillionRequests)} per million requests), ${formatUsd(c.planned.usd)} planned (prices of ${c.pricingDate})`;
  if (c.latencyMeasuredMs === null) return `${cost}; time to first byte ${c.latencyPlannedMs} ms planned, none measured`;
  const slower = c.latencyMeasuredMs > c.latencyPlannedMs * 1.2;
  const advice = slower ? `: plan the next run at ${Math.ceil(c.latencyMeasuredMs)} ms (edgeload plan --probe)` : "";
  return `${cost}; time to first byte p95 ${c.latencyMeasuredMs} ms measured, ${c.latencyPlannedMs} ms planned${advice}`;
}
