/**
 * A run's cost at the latency its target really has (issue 49). A shard sustains
 * `connectionSlots / latency` requests a second (plan.ts), so the shard count — and the
 * shards' duration, most of the bill — grows with the target's time to first byte: the
 * 1,000,000/s example needs 7,146 shards at 30 ms and 23,814 at 100 ms. `edgeload plan`
 * prices the spec's `expectedLatency` (or the latency `--probe` measured) and sets this table
 * beside it, so a spec whose guess is low does not read as cheap. Pure.
 */
import type { RunSpec } from "../spec/types.ts";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { planRun, type Limits } from "./plan.ts";
import { preflight } from "./preflight.ts";
import type { UsageOptions } from "./run-usage.ts";

/** The latencies `edgeload plan` prices a run at besides its own: a fast API, a typical one, a slow one, a very slow one. */
export const LATENCY_TABLE_MS: readonly number[] = [30, 50, 100, 200];

/** The run planned and priced at one latency. */
export interface LatencyCost {
  readonly latencyMs: number;
  readonly shards: number;
  /** Requests the estimate prices (the schedule's; a closed model's estimate changes with latency). */
  readonly requests: number;
  readonly totalUsd: number;
  readonly usdPerMillionRequests: number;
  /** Platform limits the run breaks at this latency (core/plan/limit-checks.ts), by name. */
  readonly limitsBroken: readonly string[];
  /** Why it could not be planned under `limits` at this latency; null when it was. */
  readonly problem: string | null;
}

/**
 * The spec with `latencyMs` as its expected latency, its named scenarios' too (each planned
 * as a run of its own). Nothing else in a parsed spec follows from it.
 */
export function atLatency(spec: RunSpec, latencyMs: number): RunSpec {
  const ms = Math.max(1, Math.ceil(latencyMs));
  return {
    ...spec,
    expectedLatencyMs: ms,
    ...(spec.scenarios ? { scenarios: spec.scenarios.map((s) => ({ ...s, spec: atLatency(s.spec, ms) })) } : {}),
  };
}

/**
 * The run planned under `limits` and priced at each of `latenciesMs` and at the spec's own
 * expected latency, in order of latency, each once.
 *
 * @example
 * costsAtLatencies(spec, limits).map((c) => [c.latencyMs, c.shards]) // → [[30, 7146], [50, 11910], [100, 23814], [200, 47622]]
 */
export function costsAtLatencies(spec: RunSpec, limits: Limits, options: UsageOptions = {}, latenciesMs: readonly number[] = LATENCY_TABLE_MS): LatencyCost[] {
  const latencies = [...new Set([...latenciesMs, spec.expectedLatencyMs])].sort((a, b) => a - b);
  const total = new ArrivalSchedule(spec.stages).total;
  return latencies.map((latencyMs) => {
    const at = atLatency(spec, latencyMs);
    const planned = planRun(at, total, limits);
    if (!planned.ok)
      return {
        latencyMs,
        shards: 0,
        requests: 0,
        totalUsd: 0,
        usdPerMillionRequests: 0,
        limitsBroken: [],
        problem: planned.problems.map((p) => p.detail).join("; "),
      };
    const p = preflight(at, planned.plan, options);
    return {
      latencyMs,
      shards: planned.plan.shards.length,
      requests: p.usage.requests,
      totalUsd: p.cost.totalUsd,
      usdPerMillionRequests: p.cost.usdPerMillionRequests,
      limitsBroken: p.limits.filter((l) => !l.ok).map((l) => l.limit),
      problem: null,
    };
  });
}
