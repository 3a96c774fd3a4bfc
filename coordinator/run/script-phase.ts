/**
 * A k6 script's setup() and teardown(), run once by the coordinator (as k6 runs them once
 * per test, not per VU), in the script's own isolate like its iterations. Their requests
 * go out one at a time through the same outbound policy as the shards' (workers/outbound/),
 * and through the phase IO of edgeload's own setup steps (scenarios/run-phase.ts), outside
 * any engine. What they measure — requests, checks, custom metrics — is recorded as k6
 * records it (phase-metrics.ts) and counted in the run's totals, as k6 counts them.
 *
 * setup()'s return value travels as JSON to every shard (`setupData`), as k6 hands each
 * VU a copy; a setup() that throws ends the run as `error` before any load (k6's exit code
 * 107), one that calls exec.test.abort() as `aborted` (108). One that calls exec.test.fail()
 * marks the run failed (110) and the run goes on, as k6's does.
 */
import type { ScriptSpec } from "../../core/spec/script-schema.ts";
import { scriptObjectKey } from "../../core/spec/script-schema.ts";
import type { RunSpec } from "../../core/spec/types.ts";
import { phaseIO, type PhaseResult } from "../../scenarios/run-phase.ts";
import { outbound } from "../../workers/outbound/outbound-fetch.ts";
import { targetPolicy } from "../../workers/outbound/policies.ts";
import { IterationHost, scriptEntrypoint, type ScriptModules } from "../../workers/shard/script-flow.ts";
import type { Env } from "../../workers/env.ts";
import { phaseMetrics, phaseSubMetrics, type PhaseCells } from "./phase-metrics.ts";

/** The script of a run: its own, or its named scenarios' (they share one bundle). */
export function runScript(spec: RunSpec): ScriptSpec | null {
  return spec.script ?? spec.scenarios?.find((s) => s.spec.script)?.spec.script ?? null;
}

export interface ScriptPhaseResult extends PhaseResult {
  /** What setup() returned, as JSON; null when it returned nothing. */
  readonly data: string | null;
  /** The exception it threw, if it did, and where (`file.js:line`) when its stack says. */
  readonly error: string | null;
  readonly at?: string | null;
  /** It called exec.test.abort(): the message ("" without one); null otherwise. */
  readonly aborted: string | null;
  /** It called exec.test.fail(): the first message ("" without one); null otherwise. The run goes on. */
  readonly markedFailed: string | null;
  /** What it measured, per step (phase-metrics.ts); empty when it measured nothing. */
  readonly cells: PhaseCells;
}

export async function runScriptPhase(
  env: Env,
  runId: string,
  spec: RunSpec,
  script: ScriptSpec,
  phase: "setup" | "teardown",
  setupData: string | null,
  ownedHosts?: readonly string[],
): Promise<ScriptPhaseResult> {
  const object = env.LOADER ? await env.SEEDS.get(scriptObjectKey(script.bundle)) : null;
  if (!env.LOADER || !object)
    return {
      ok: false,
      steps: [],
      captured: {},
      data: null,
      error: `script bundle ${script.bundle} cannot be loaded`,
      aborted: null,
      markedFailed: null,
      cells: [],
    };
  const entry = scriptEntrypoint(env.LOADER, `${runId}:${script.bundle}:${phase}`, await object.json<ScriptModules>());
  const toTargets = outbound(targetPolicy(env, ownedHosts));
  const recorder = phaseIO({
    fetcher: toTargets.fetch,
    timeoutMs: spec.timeoutMs,
    failsOn: "exception",
    nameOf: (_index, request) => `${request.method} ${new URL(request.url).pathname}`,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  });
  // The run's sub-metrics (those its thresholds name, and the one k6 shows for every script).
  const measured = phaseMetrics(recorder.io, phaseSubMetrics(spec), spec.timeoutMs);
  // k6 tags a phase's samples with no scenario (runner.go runPart): no default tags here.
  const host = new IterationHost(measured.io, toTargets, [], {});
  const outcome = await entry.phase(
    host,
    phase,
    {
      exec: phase,
      vu: 0,
      pool: { first: 0, size: 0, preAllocated: 0 },
      iterationInTest: 0,
      scenario: { name: phase, executor: "", startTimeMs: 0 },
      env: script.env,
      setupDataKey: null,
    },
    setupData,
  );
  // What it recorded after its last request (its checks, its metrics, its console lines).
  host.apply(outcome.samples);
  // k6 fails a test on an exception in setup(), not on a failed request or check in it.
  const aborted = outcome.aborted ?? null;
  return {
    ok: outcome.error === null && aborted === null,
    steps: recorder.steps(),
    captured: {},
    data: outcome.data,
    error: outcome.error,
    at: outcome.at ?? null,
    aborted,
    markedFailed: outcome.markedFailed ?? null,
    cells: measured.cells(),
  };
}
