/**
 * `crosscheck --floor`: a run's load replayed by workerd's own paced fetch loop, inside a
 * Durable Object as the shards send (workers/fetch-floor), with no edgeload in it. Its
 * latencies are what the runtime reads against the same target at the same rate, so a
 * crosscheck residual it reads too is the runtime's (core/results/crosscheck-attribution.ts).
 *
 * The loop sends plain GETs of one URL at a constant rate: it replays a run of one GET step
 * with no body at a constant arrival rate, and refuses any other by name.
 */
import type { Latency } from "../core/results/crosscheck.ts";
import { CliError, EXIT } from "./connection.ts";
import type { StoredSpec } from "./k6-replay.ts";
import type { FloorAnswer } from "./fetch-floor.ts";

/** What the floor sends: `requests` GETs of `url`, `ratePerS` a second. */
export interface FloorLoad {
  readonly url: string;
  readonly ratePerS: number;
  readonly requests: number;
}

/** The floor's load for a stored run, or a CliError saying why the floor cannot replay it. */
export function floorLoad(runId: string, spec: StoredSpec): FloorLoad {
  const why = (reason: string) =>
    new CliError(`--floor replays one GET step at a constant arrival rate (a bare paced fetch loop); run ${runId} ${reason}`, EXIT.invalidConfig);
  if (spec.scenario) throw why(`runs the ${spec.scenario.name} scenario`);
  if (spec.script) throw why("runs a k6 script");
  if (spec.executor !== "constant-arrival-rate") throw why(`uses the ${spec.executor} executor`);
  const stage = spec.stages[0];
  if (spec.stages.length !== 1 || !stage || stage.fromPerS !== stage.toPerS) throw why("changes its rate during the run");
  if (spec.steps.length !== 1) throw why(`has ${spec.steps.length} steps`);
  const step = spec.steps[0]!;
  if (step.method !== "GET" || step.body !== null) throw why(`sends ${step.method}${step.body !== null ? " with a body" : ""}`);
  if (Object.keys(step.headers).length) throw why(`sets headers (${Object.keys(step.headers).join(", ")})`);
  return { url: new URL(step.path, spec.target).href, ratePerS: stage.toPerS, requests: Math.round((stage.toPerS * stage.durationMs) / 1000) };
}

/** Runs the floor on `load` and returns its latencies. */
export async function measureFloor(load: FloorLoad): Promise<Latency> {
  const { startFetchFloor } = await import("./fetch-floor.ts");
  const floor = await startFetchFloor(load.url);
  try {
    const answer = await floor.loop(load.url, { n: load.requests, rate: load.ratePerS, in: "object" });
    return floorLatency(answer);
  } finally {
    await floor.dispose();
  }
}

/** A paced loop's answer as the crosscheck's latency figures. */
export function floorLatency(answer: FloorAnswer): Latency {
  return { p50: answer.p50Ms ?? null, p90: answer.p90Ms ?? null, p95: answer.p95Ms ?? null, p99: answer.p99Ms ?? null, max: answer.maxMs ?? null };
}
