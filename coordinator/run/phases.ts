/**
 * A run's setup and teardown, run once by its coordinator: the spec's own steps
 * (scenarios/run-phase.ts) and a k6 script's setup() and teardown() (script-phase.ts).
 * Setup runs before any shard starts; what it captured (or setup() returned, which may be
 * a token) goes to the shards, not into the view. Teardown runs once the load is over,
 * whatever the outcome (as k6's does), unless setup failed.
 */
import { SETUP_DATA } from "../../core/spec/script-schema.ts";
import type { RunSpec } from "../../core/spec/run-spec.ts";
import { phaseFailure, runPhase } from "../../scenarios/run-phase.ts";
import type { Env } from "../../workers/env.ts";
import { outboundFetch } from "../../workers/outbound/outbound-fetch.ts";
import { targetPolicy } from "../../workers/outbound/policies.ts";
import { runScript, runScriptPhase } from "./script-phase.ts";
import { phaseView, START_LEAD_MS, type PhaseView, type RunRecord } from "./run-record.ts";

/** How one setup went: its view, why it failed (null when it did not), and the data for the shards. */
export interface SetupOutcome {
  readonly view: PhaseView;
  readonly failure: string | null;
  readonly setupData: Readonly<Record<string, string>>;
  /** A k6 script's setup() ended the run: it threw (exit 107) or called exec.test.abort() (108). */
  readonly byScript?: "exception" | "aborted";
}

/** The spec's setup steps; null when it has none. */
export async function runSetupSteps(env: Env, spec: RunSpec): Promise<SetupOutcome | null> {
  const steps = spec.setup ?? [];
  if (!steps.length) return null;
  const setup = await runPhase(spec, steps, outboundFetch(targetPolicy(env)));
  return { view: phaseView(setup), failure: setup.ok ? null : phaseFailure("setup", setup, steps), setupData: setup.captured };
}

/** A k6 script's setup(); null when the run has no script or it has no setup(). */
export async function runScriptSetup(env: Env, runId: string, spec: RunSpec): Promise<SetupOutcome | null> {
  const script = runScript(spec);
  if (!script?.setup) return null;
  const setup = await runScriptPhase(env, runId, spec, script, "setup", null);
  const view = phaseView({ ok: setup.ok, steps: setup.steps, captured: {} });
  const setupData: Readonly<Record<string, string>> = setup.data === null ? {} : { [SETUP_DATA]: setup.data };
  if (setup.aborted !== null)
    return { view, failure: `script aborted${setup.aborted ? `: ${setup.aborted}` : ""} (in setup())`, setupData, byScript: "aborted" };
  if (setup.error !== null) return { view, failure: `setup() failed: ${setup.error}${setup.at ? ` at ${setup.at}` : ""}`, setupData, byScript: "exception" };
  return { view, failure: setup.ok ? null : "setup() failed", setupData };
}

/** The run's teardown, with what setup captured; null when there is none to run (or it ran). */
export async function runTeardown(env: Env, run: RunRecord): Promise<PhaseView | null> {
  const steps = run.spec.teardown ?? [];
  const script = runScript(run.spec);
  if (run.phases?.teardown || run.phases?.setup?.ok === false) return null;
  if (script?.teardown) {
    const result = await runScriptPhase(env, run.runId, run.spec, script, "teardown", run.spec.setupData?.[SETUP_DATA] ?? null);
    return phaseView({ ok: result.ok, steps: result.steps, captured: {} });
  }
  if (steps.length === 0) return null;
  return phaseView(await runPhase(run.spec, steps, outboundFetch(targetPolicy(env))));
}

/** A setup that ended the run: the status it ends with and why. */
export interface SetupFailure {
  readonly status: "aborted" | "error";
  readonly reason: string;
}

/**
 * Runs the run's setup once, before any shard starts: the spec's setup steps, then a k6
 * script's setup() (both given the spec as it was before either ran). Returns the record
 * with what setup produced — its view, the data for the shards, a T0 moved to after setup
 * with the usual lead — and the failure that ends the run, if one did (k6: an abort in
 * setup() is ScriptAborted, 108; an exception ScriptException, 107).
 */
export async function setUpRun(env: Env, run: RunRecord): Promise<{ run: RunRecord; failure: SetupFailure | null }> {
  let current = run;
  const phases = [() => runSetupSteps(env, run.spec), () => runScriptSetup(env, run.runId, run.spec)];
  for (const phase of phases) {
    const outcome = await phase();
    if (!outcome) continue;
    const { view, failure, setupData, byScript } = outcome;
    current = { ...current, phases: { setup: view }, ...(byScript ? { endedByScript: true as const } : {}) };
    if (failure) return { run: current, failure: { status: byScript === "aborted" ? "aborted" : "error", reason: failure } };
    const t0Ms = Math.max(current.t0Ms, Date.now() + START_LEAD_MS[current.mode]);
    current = { ...current, t0Ms, spec: { ...current.spec, setupData: { ...current.spec.setupData, ...setupData } } };
  }
  return { run: current, failure: null };
}
