/**
 * What a closed-model run (`constant-vus`, `ramping-vus`, the iteration-count executors)
 * will roughly send. It has no rate to plan for: each VU sends its next request when the
 * last one (and its think time) is over, so the rate follows the target's latency. The
 * planner (plan.ts) sizes the shards and checks the request cap on this estimate, from
 * `expectedLatency` and the steps' think time, and its notes say it is one.
 */
import type { RunSpec } from "../spec/types.ts";
import { VuSchedule } from "../schedule/vu-schedule.ts";

export interface ClosedModelEstimate {
  readonly peakVUs: number;
  readonly vuSeconds: number;
  /** Mean think (and stream hold) time of an iteration, ms. */
  readonly thinkMs: number;
  readonly requestsPerIteration: number;
  readonly estimatedIterations: number;
  readonly estimatedRequests: number;
  /** The rate at the peak VUs, requests/s. */
  readonly peakRatePerS: number;
}

/**
 * Requests one iteration sends: every step of a sequence or a built-in scenario's flow, one
 * step of a weighted pick. (A refresh or login flow may stop early; this is the most.)
 */
export function requestsPerIteration(spec: Pick<RunSpec, "flow" | "scenario" | "steps">): number {
  const sequence = spec.flow === "sequence" || spec.scenario !== null;
  return sequence ? Math.max(1, spec.steps.length) : 1;
}

/**
 * The estimate for a spec with `vus`: an iteration takes its requests at the expected
 * latency each plus its mean think time, and every active VU runs iterations back to back.
 */
export function closedModelEstimate(spec: RunSpec): ClosedModelEstimate {
  const schedule = new VuSchedule(spec.vus!);
  const perIteration = requestsPerIteration(spec);
  const thinkMs = meanWaitMs(spec);
  const iterationMs = Math.max(1, perIteration * Math.max(1, spec.expectedLatencyMs) + thinkMs);
  const vuSeconds = round(schedule.vuSeconds());
  const byTime = Math.ceil((vuSeconds * 1000) / iterationMs);
  // Iteration-count executors run their count, unless maxDuration comes first.
  const count = schedule.profile.iterations;
  const estimatedIterations = count ? Math.min(byTime, count.kind === "per-vu" ? count.count * schedule.peak : count.count) : byTime;
  return {
    peakVUs: schedule.peak,
    vuSeconds,
    thinkMs: round(thinkMs),
    requestsPerIteration: perIteration,
    estimatedIterations,
    estimatedRequests: estimatedIterations * perIteration,
    peakRatePerS: (schedule.peak * perIteration * 1000) / iterationMs,
  };
}

/** The plan's note on a closed-model run: the figures of the estimate, and that it is one. */
export function closedModelNote(spec: RunSpec, closed: ClosedModelEstimate): string {
  return `closed model: the total cannot be known in advance; estimated ~${closed.estimatedRequests} requests (~${closed.estimatedIterations} iterations, peak ~${round(closed.peakRatePerS)}/s) from ${closed.vuSeconds} VU-seconds at ${spec.expectedLatencyMs} ms expected latency and ${closed.thinkMs} ms think (and stream hold) time per iteration`;
}

/**
 * Mean wait of an iteration besides its requests: its steps' think time, and a stream
 * step's hold (its hold time, or to the end) before the flow goes on. Every step of a
 * sequence, or one step of a weighted pick on average.
 */
function meanWaitMs(spec: RunSpec): number {
  const steps = spec.steps;
  const meanThink = (s: RunSpec["steps"][number]) => (s.think ? (s.think.minMs + s.think.maxMs) / 2 : 0);
  const meanWait = (s: RunSpec["steps"][number]) => meanThink(s) + (s.sse ? (s.sse.holdMs ?? spec.durationMs) : 0);
  const sequence = spec.flow === "sequence" || spec.scenario !== null;
  if (sequence) return steps.reduce((a, s) => a + meanWait(s), 0);
  const totalWeight = steps.reduce((a, s) => a + s.weight, 0);
  return steps.reduce((a, s) => a + meanWait(s) * s.weight, 0) / Math.max(1, totalWeight);
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
