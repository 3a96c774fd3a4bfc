/**
 * Safety policy of a deployment, read from its vars: the caps on every run. A load
 * generator is a weapon; the defaults are conservative. Which targets it may load is
 * core/spec/target-policy.ts (the shards check it too).
 */
import { DEFAULT_LIMITS, type Limits } from "../../core/plan/plan.ts";
import type { Env } from "../../workers/env.ts";

/** Reads a numeric var; a missing var means the default, a malformed one is a config error. */
function numberVar(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value.trim() === "") return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`var ${name} must be a positive number, got "${value}"`);
  return n;
}

export function limitsOf(env: Env): Limits & { maxConcurrentRuns: number } {
  return {
    maxRatePerS: numberVar(env.MAX_RATE_PER_S, DEFAULT_LIMITS.maxRatePerS, "MAX_RATE_PER_S"),
    maxDurationMs: numberVar(env.MAX_DURATION_S, DEFAULT_LIMITS.maxDurationMs / 1000, "MAX_DURATION_S") * 1000,
    maxShards: numberVar(env.MAX_SHARDS, DEFAULT_LIMITS.maxShards, "MAX_SHARDS"),
    maxTotalRequests: numberVar(env.MAX_TOTAL_REQUESTS, DEFAULT_LIMITS.maxTotalRequests, "MAX_TOTAL_REQUESTS"),
    maxVUs: numberVar(env.MAX_VUS, DEFAULT_LIMITS.maxVUs, "MAX_VUS"),
    subrequestsPerInvocation: numberVar(env.SUBREQUESTS_PER_INVOCATION, DEFAULT_LIMITS.subrequestsPerInvocation, "SUBREQUESTS_PER_INVOCATION"),
    aggregatorFanIn: numberVar(env.AGGREGATOR_FAN_IN, DEFAULT_LIMITS.aggregatorFanIn, "AGGREGATOR_FAN_IN"),
    maxConcurrentRuns: numberVar(env.MAX_CONCURRENT_RUNS, 5, "MAX_CONCURRENT_RUNS"),
  };
}
