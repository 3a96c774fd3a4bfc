/**
 * A run's setup and teardown (k6's setup() and teardown()): steps sent once, in order, by
 * the coordinator — not by every shard — before the load starts and after it ends.
 *
 * They are the same steps as the load's (templates, checks, captures; see
 * custom-steps.ts) run through that flow with an IO that keeps each request's outcome
 * instead of metrics. A step passes when its status is expected (200–399 by default) and
 * its checks and captures hold; the phase stops at the first step that does not, since
 * later steps usually depend on it. What setup captured becomes `{{setup.NAME}}`.
 *
 * A k6 script's setup() and teardown() (coordinator/run/script-phase.ts) send through the same
 * IO (`phaseIO`), judged as k6 judges them.
 */
import type { RunSpec, StepSpec } from "../core/spec/types.ts";
import { isExpectedStatus } from "../core/metrics/request-trail.ts";
import { customStepsFlow } from "./custom-steps.ts";
import type { OutboundFetch, OutboundInit, RedirectWatcher } from "../core/outbound/outbound-request.ts";
import { redirectInit, type FlowIO, type FlowRequest, type FlowResponse, type FollowedHop, type RedirectInit } from "./flow.ts";

export interface PhaseStepResult {
  readonly name: string;
  /** 0 when there was no response. */
  readonly status: number;
  readonly durationMs: number;
  readonly ok: boolean;
  /** Why it failed: status, failed check, missing capture, timeout, connection error. */
  readonly problem: string | null;
}

export interface PhaseResult {
  readonly ok: boolean;
  readonly steps: readonly PhaseStepResult[];
  /** Values captured by the steps (secret-bearing: never stored in D1). */
  readonly captured: Readonly<Record<string, string>>;
}

/**
 * How a phase judges its requests. edgeload's own steps ("first-problem"): a failed
 * status, check or capture fails the step and stops the phase, since later steps usually
 * depend on it. A k6 script's setup() and teardown() ("exception"): every request is
 * recorded and the function goes on; only an exception fails it, as in k6.
 */
export type PhaseFailsOn = "first-problem" | "exception";

export interface PhaseIOOptions {
  readonly fetcher: OutboundFetch;
  readonly timeoutMs: number;
  readonly failsOn: PhaseFailsOn;
  /** The name a step result carries: the spec step's own, or k6's "METHOD /path". */
  readonly nameOf: (index: number, request: FlowRequest) => string;
  /** Spec steps do not pace themselves in a phase; a script's sleep() sleeps. */
  readonly sleep: (ms: number) => Promise<void>;
  readonly clock?: () => number;
}

/**
 * The one IO both kinds of phase run through: it sends each request once, outside any
 * engine (no slots, no windows, no metrics), and keeps its outcome as a step result.
 */
export function phaseIO(options: PhaseIOOptions): { readonly io: FlowIO; readonly steps: () => PhaseStepResult[] } {
  const clock = options.clock ?? Date.now;
  const results: Array<{ name: string; status: number; durationMs: number; problem: string | null }> = [];
  const stopsOnProblem = options.failsOn === "first-problem";
  const io: FlowIO = {
    async send(index: number, request: FlowRequest): Promise<FlowResponse> {
      // The flow sends the next step even after a failed status; a phase of steps stops instead.
      if (stopsOnProblem && results.some((r) => r.problem !== null)) throw new PhaseStopped();
      const result = { name: options.nameOf(index, request), status: 0, durationMs: 0, problem: null as string | null };
      results.push(result);
      const sent = await sendOnce(request, request.timeoutMs ?? options.timeoutMs, options.fetcher, clock);
      Object.assign(result, { status: sent.response.status, durationMs: sent.response.durationMs, problem: sent.problem });
      return sent.response;
    },
    check(passed) {
      const last = results[results.length - 1];
      if (stopsOnProblem && !passed && last && last.problem === null) last.problem = "a check or capture failed";
    },
    count() {},
    rate() {},
    trend() {},
    sample() {},
    sleep: options.sleep,
    now: clock,
  };
  return { io, steps: () => results.map((r) => ({ ...r, ok: r.problem === null })) };
}

/** Sends `steps` once, in order, against the spec's target; stops at the first failure. */
export async function runPhase(spec: RunSpec, steps: readonly StepSpec[], fetcher: OutboundFetch, clock: () => number = Date.now): Promise<PhaseResult> {
  if (steps.length === 0) return { ok: true, steps: [], captured: {} };
  const flow = customStepsFlow({ ...spec, steps, flow: "sequence", metrics: {} });
  const phase = phaseIO({ fetcher, timeoutMs: spec.timeoutMs, failsOn: "first-problem", nameOf: (index) => steps[index]!.name, sleep: async () => {}, clock });
  const captured = new Map<string, string>();
  try {
    await flow.run(phase.io, { global: 0, shard: 0, region: "coordinator", captured });
  } catch (error) {
    if (!(error instanceof PhaseStopped)) throw error;
  }
  const done = phase.steps();
  return { ok: done.length === steps.length && done.every((r) => r.ok), steps: done, captured: Object.fromEntries(captured) };
}

class PhaseStopped extends Error {}

/**
 * One request of a phase, outside the engine (no slots, no windows): its response, and
 * why it failed, if it did (an unexpected status, a timeout, a connection error).
 */
async function sendOnce(
  request: FlowRequest,
  timeoutMs: number,
  fetcher: OutboundFetch,
  clock: () => number = Date.now,
): Promise<{ response: FlowResponse; problem: string | null }> {
  // Each 3xx followed is a request of its own, timed from its own send (k6 counts every hop);
  // the response's time is the last hop's.
  const redirects: FollowedHop[] = [];
  let hopStarted = clock();
  const redirectWatcher: RedirectWatcher = {
    async followed(response, hop) {
      const bytes = (await response.arrayBuffer()).byteLength;
      redirects.push({ url: hop.url, method: hop.method, status: response.status, durationMs: clock() - hopStarted, bytes, to: hop });
    },
    leaving(next) {
      const last = redirects.pop();
      if (last) redirects.push({ ...last, to: { url: next.url, method: next.method } });
      hopStarted = clock();
      return undefined;
    },
  };
  try {
    const init: OutboundInit & RedirectInit = {
      method: request.method,
      signal: AbortSignal.timeout(timeoutMs),
      ...redirectInit(request),
      redirectWatcher,
    };
    if (request.headers) init.headers = request.headers;
    // Bytes as the script encoded them (never a SharedArrayBuffer's view, which DOM's BodyInit rules out).
    const sent = (request.bodyBytes as Uint8Array<ArrayBuffer> | undefined) ?? request.body;
    if (sent !== undefined) init.body = sent;
    const response = await fetcher(request.url, init);
    const body = await response.text();
    const ok = isExpectedStatus(response.status, request.expect);
    return {
      response: {
        status: response.status,
        error: null,
        headers: response.headers,
        body,
        durationMs: clock() - hopStarted,
        ...(response.url ? { url: response.url } : {}),
        ...(redirects.length > 0 ? { redirects } : {}),
      },
      problem: ok ? null : `status ${response.status}${body ? `: ${body.slice(0, 200)}` : ""}`,
    };
  } catch (error) {
    const timeout = (error as { name?: string } | null)?.name === "TimeoutError";
    return {
      response: {
        status: 0,
        error: timeout ? "timeout" : "connection",
        headers: null,
        body: null,
        durationMs: 0,
        ...(redirects.length > 0 ? { redirects } : {}),
      },
      problem: timeout ? `no response within ${timeoutMs} ms` : `connection failed: ${String(error)}`,
    };
  }
}

/** One line for a run's abort reason: which step failed and why. */
export function phaseFailure(phase: "setup" | "teardown", result: PhaseResult, steps: readonly StepSpec[]): string {
  const failed = result.steps.find((s) => !s.ok);
  if (failed) return `${phase} step ${failed.name} failed: ${failed.problem}`;
  const skipped = steps[result.steps.length];
  return `${phase} stopped before step ${skipped?.name ?? "?"}`;
}
