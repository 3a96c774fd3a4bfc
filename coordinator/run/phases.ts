/**
 * A run's setup and teardown, run once by its coordinator: the spec's own steps
 * (scenarios/run-phase.ts) and a k6 script's setup() and teardown() (script-phase.ts).
 * Setup runs before any shard starts; what it captured (or setup() returned, which may be
 * a token) goes to the shards, not into the view. Teardown runs once the load is over,
 * whatever the outcome (as k6's does), unless setup failed.
 *
 * Each ends, whatever the script does: setup() and teardown() are cut at their timeouts
 * (k6's setupTimeout and teardownTimeout, 60 s unless the options say; exit 100 and 101),
 * and a phase that cannot run at all (its bundle unreadable, its isolate gone) ends the run
 * in error (103) with the reason, rather than leave it pending. A teardown() that throws or
 * calls exec.test.abort() ends the run as k6 does (107, 108); a setup() or teardown() that
 * calls exec.test.fail() marks it failed (RunRecord.markedFailed, 110) and it goes on.
 */
import { SETUP_DATA } from "../../core/spec/script-schema.ts";
import type { RunSpec } from "../../core/spec/run-spec.ts";
import type { ScriptTimeout } from "../../core/run/protocol.ts";
import { phaseFailure, runPhase } from "../../scenarios/run-phase.ts";
import type { Env } from "../../workers/env.ts";
import { outboundFetch } from "../../workers/outbound/outbound-fetch.ts";
import { targetPolicy } from "../../workers/outbound/policies.ts";
import { runScript, runScriptPhase, type ScriptPhaseResult } from "./script-phase.ts";
import { scriptFailReason } from "../../core/run/script-report.ts";
import { phaseView, START_LEAD_MS, type PhaseView, type RunRecord } from "./run-record.ts";
import type { PhaseCells } from "./phase-metrics.ts";

/** How one setup went: its view, why it failed (null when it did not), and the data for the shards. */
export interface SetupOutcome {
  readonly view: PhaseView;
  readonly failure: string | null;
  readonly setupData: Readonly<Record<string, string>>;
  /** A k6 script's setup() ended the run: it threw (exit 107) or called exec.test.abort() (108). */
  readonly byScript?: "exception" | "aborted";
  /** setup() ran past its setupTimeout (exit 100). */
  readonly timedOut?: ScriptTimeout;
  /** What a k6 script's setup() measured (phase-metrics.ts), for the run's totals. */
  readonly cells?: PhaseCells;
  /** setup() called exec.test.fail(): the reason the run will end failed with (RunRecord.markedFailed). */
  readonly markedFailed?: string;
}

/** The reason a phase's exec.test.fail() marks the run failed with, if it called it. */
const markedIn = (result: ScriptPhaseResult, phase: "setup" | "teardown") =>
  result.markedFailed === null ? {} : { markedFailed: `${scriptFailReason(result.markedFailed)} (in ${phase}())` };

/** A phase that failed before it could say anything: no steps. */
const NOTHING_RAN: PhaseView = { ok: false, steps: [] };

const TIMED_OUT = Symbol("timed out");

/** `phase` if it ends within `ms`, else TIMED_OUT (it goes on in its isolate; what it gives is dropped). */
async function within<T>(phase: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), ms)));
  try {
    return await Promise.race([phase, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
const seconds = (ms: number) => `${ms / 1000} s`;

/** The spec's setup steps; null when it has none. `ownedHosts`: the run's (RunRecord.ownedHosts). */
export async function runSetupSteps(env: Env, spec: RunSpec, ownedHosts?: readonly string[]): Promise<SetupOutcome | null> {
  const steps = spec.setup ?? [];
  if (!steps.length) return null;
  const setup = await runPhase(spec, steps, outboundFetch(targetPolicy(env, ownedHosts)));
  return { view: phaseView(setup), failure: setup.ok ? null : phaseFailure("setup", setup, steps), setupData: setup.captured };
}

/** A k6 script's setup(); null when the run has no script or it has no setup(). */
export async function runScriptSetup(env: Env, runId: string, spec: RunSpec, ownedHosts?: readonly string[]): Promise<SetupOutcome | null> {
  const script = runScript(spec);
  if (!script?.setup) return null;
  let setup: ScriptPhaseResult | typeof TIMED_OUT;
  try {
    setup = await within(runScriptPhase(env, runId, spec, script, "setup", null, ownedHosts), script.setupTimeout);
  } catch (error) {
    return { view: NOTHING_RAN, failure: `setup() could not run: ${messageOf(error)}`, setupData: {} };
  }
  if (setup === TIMED_OUT)
    return { view: NOTHING_RAN, failure: `setup() did not finish within ${seconds(script.setupTimeout)} (setupTimeout)`, setupData: {}, timedOut: "setup" };
  const view = phaseView({ ok: setup.ok, steps: setup.steps, captured: {} });
  const setupData: Readonly<Record<string, string>> = setup.data === null ? {} : { [SETUP_DATA]: setup.data };
  const { cells } = setup;
  const marked = markedIn(setup, "setup");
  if (setup.aborted !== null)
    return { view, failure: `script aborted${setup.aborted ? `: ${setup.aborted}` : ""} (in setup())`, setupData, byScript: "aborted", cells };
  if (setup.error !== null)
    return { view, failure: `setup() failed: ${setup.error}${setup.at ? ` at ${setup.at}` : ""}`, setupData, byScript: "exception", cells };
  return { view, failure: setup.ok ? null : "setup() failed", setupData, cells, ...marked };
}

/** How teardown went, and the end it gives the run when it failed as k6 fails a test. */
export interface TeardownOutcome {
  readonly view: PhaseView;
  readonly failure: { readonly status: "error" | "aborted"; readonly reason: string; readonly byScript?: true; readonly timedOut?: ScriptTimeout } | null;
  /** What a k6 script's teardown() measured (phase-metrics.ts), for the run's totals. */
  readonly cells?: PhaseCells;
  /** teardown() called exec.test.fail(): the reason the run ends failed with, unless it ends otherwise. */
  readonly markedFailed?: string;
}

/** The run's teardown, with what setup captured; null when there is none to run (or it ran). */
export async function runTeardown(env: Env, run: RunRecord): Promise<TeardownOutcome | null> {
  const steps = run.spec.teardown ?? [];
  const script = runScript(run.spec);
  if (run.phases?.teardown || run.phases?.setup?.ok === false) return null;
  if (script?.teardown) {
    let result: ScriptPhaseResult | typeof TIMED_OUT;
    try {
      result = await within(
        runScriptPhase(env, run.runId, run.spec, script, "teardown", run.spec.setupData?.[SETUP_DATA] ?? null, run.ownedHosts),
        script.teardownTimeout,
      );
    } catch (error) {
      return { view: NOTHING_RAN, failure: { status: "error", reason: `teardown() could not run: ${messageOf(error)}` } };
    }
    if (result === TIMED_OUT) {
      const reason = `teardown() did not finish within ${seconds(script.teardownTimeout)} (teardownTimeout)`;
      return { view: NOTHING_RAN, failure: { status: "error", reason, timedOut: "teardown" } };
    }
    const view = phaseView({ ok: result.ok, steps: result.steps, captured: {} });
    return { view, failure: scriptTeardownFailure(result), cells: result.cells, ...markedIn(result, "teardown") };
  }
  if (steps.length === 0) return null;
  // A spec's own teardown steps are reported, not judged: k6 has no such steps to follow.
  return { view: phaseView(await runPhase(run.spec, steps, outboundFetch(targetPolicy(env, run.ownedHosts)))), failure: null };
}

/** k6 ends a test whose teardown() threw (107) or called exec.test.abort() (108) so. */
function scriptTeardownFailure(result: ScriptPhaseResult): TeardownOutcome["failure"] {
  if (result.aborted !== null)
    return { status: "aborted", reason: `script aborted${result.aborted ? `: ${result.aborted}` : ""} (in teardown())`, byScript: true };
  if (result.error !== null) return { status: "error", reason: `teardown() failed: ${result.error}${result.at ? ` at ${result.at}` : ""}`, byScript: true };
  return null;
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
 * setup() is ScriptAborted, 108; an exception ScriptException, 107; a timeout SetupTimeout,
 * 100; a phase that could not run at all, an error, 103).
 */
export async function setUpRun(env: Env, run: RunRecord): Promise<{ run: RunRecord; failure: SetupFailure | null }> {
  let current = run;
  const phases = [() => runSetupSteps(env, run.spec, run.ownedHosts), () => runScriptSetup(env, run.runId, run.spec, run.ownedHosts)];
  for (const phase of phases) {
    const outcome = await phase().catch(
      (error: unknown): SetupOutcome => ({ view: NOTHING_RAN, failure: `setup could not run: ${messageOf(error)}`, setupData: {} }),
    );
    if (!outcome) continue;
    const { view, failure, setupData, byScript, timedOut, cells, markedFailed } = outcome;
    current = {
      ...current,
      phases: { setup: view },
      // Counted in the run's totals, as k6 counts setup()'s samples (phase-metrics.ts), even when it failed.
      ...(cells?.length ? { phaseStats: { setup: cells } } : {}),
      ...(byScript ? { endedByScript: true as const } : {}),
      ...(timedOut ? { scriptTimeout: timedOut } : {}),
      ...(markedFailed !== undefined ? { markedFailed } : {}),
    };
    if (failure) return { run: current, failure: { status: byScript === "aborted" ? "aborted" : "error", reason: failure } };
    const t0Ms = Math.max(current.t0Ms, Date.now() + START_LEAD_MS[current.mode]);
    current = { ...current, t0Ms, spec: { ...current.spec, setupData: { ...current.spec.setupData, ...setupData } } };
  }
  return { run: current, failure: null };
}
