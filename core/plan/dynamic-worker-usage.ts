/**
 * What a k6 script run adds to its usage: the Dynamic Worker (the Worker Loader's isolate)
 * its shards call to run the script, billed as Workers requests with their CPU (Dynamic
 * Workers pricing, core/plan/cloudflare-pricing.ts). A spec run has none. Part of the usage
 * model (run-usage.ts), apart because its figures come from the k6 script bench.
 */
import { ITERATIONS_PER_SCRIPT_SESSION } from "../schedule/shard-assignment.ts";

/**
 * CPU of one iteration in a k6 script's Dynamic Worker (the Worker Loader's isolate), its
 * startup spread over the run. The k6 script bench (docs/benchmarks.md, "k6 script vs spec")
 * measures the whole generator's CPU per request over the same load as a spec: +0.30–0.32 ms
 * at 300–500/s on 4 shards (75–125/s a shard; edge-1m's shards send 140/s), +0.42 ms at
 * 100/s, for a script of one request and a check an iteration, on sessions. That counts both
 * sides of each RPC and the script's own JavaScript; only the Dynamic Worker's side is billed
 * as CPU (a Durable Object bills its duration), so 0.35 ms is an upper estimate for such a
 * script. A script doing more work an iteration costs more.
 */
export const DYNAMIC_WORKER_CPU_MS_PER_ITERATION = 0.35;

/** A k6 script run's calls into its Dynamic Workers, their CPU and the Dynamic Workers it loads (0 for a spec). */
export interface DynamicWorkerUsage {
  readonly calls: number;
  readonly cpuMs: number;
  /** Unique Dynamic Workers (a Worker ID with its code), each billed for every day it is created on. */
  readonly workers: number;
}

/** Which of k6's lifecycle functions the script exports (ScriptSpec's `setup`, `teardown`). */
export interface ScriptPhases {
  readonly setup: boolean;
  readonly teardown: boolean;
}

/**
 * A k6 script run's calls into its Dynamic Workers. The shards share one, the run's bundle
 * under the ID `<run>:<bundle>` (workers/shard/shard-flow.ts); setup() and teardown() each
 * load it under an ID of its own (`…:setup`, `…:teardown`, coordinator/run/script-phase.ts),
 * and Dynamic Workers are billed per ID: three a run that has both. A run's ID names the run,
 * so every run, a schedule's included, creates its own. A shard runs
 * ITERATIONS_PER_SCRIPT_SESSION iterations on each session it opens, and opens one anew in
 * each invocation (an instance may not outlive its alarm); setup() and teardown() are a call
 * each.
 */
export function dynamicWorkerUsage(iterations: number, shardInvocations: number, phases: ScriptPhases): DynamicWorkerUsage {
  const phaseCalls = (phases.setup ? 1 : 0) + (phases.teardown ? 1 : 0);
  return {
    calls: Math.ceil(iterations / ITERATIONS_PER_SCRIPT_SESSION) + shardInvocations + phaseCalls,
    cpuMs: iterations * DYNAMIC_WORKER_CPU_MS_PER_ITERATION,
    workers: 1 + phaseCalls,
  };
}
