/**
 * k6/execution for one VU: what the VU, its scenario and the test are now (the test's
 * options as k6 consolidates them, ../../test-options.ts), exec.test.abort() and
 * exec.test.fail().
 */
import type { VuContext } from "./context.ts";

export function createExecution(vu: VuContext) {
  /** The VU's exec.test.options, made on first read and frozen, as k6 caches and freezes it. */
  let frozen: Readonly<Record<string, unknown>> | null = null;
  // One object each, read through getters, so that `import { scenario } from "k6/execution"`
  // (bound once, when the VU's init context runs) reads the running iteration, as in k6.
  return {
    vu: {
      get idInTest() {
        return vu.id;
      },
      get idInInstance() {
        return vu.id;
      },
      get iterationInInstance() {
        return vu.iteration;
      },
      get iterationInScenario() {
        return vu.iteration;
      },
      tags: {},
      metrics: { tags: {}, metadata: {} },
    },
    scenario: {
      get name() {
        return vu.scenario.name;
      },
      get executor() {
        return vu.scenario.executor;
      },
      get startTime() {
        return vu.scenario.startTimeMs;
      },
      progress: 0,
      get iterationInInstance() {
        return vu.iterationInTest;
      },
      get iterationInTest() {
        return vu.iterationInTest;
      },
    },
    instance: { iterationsCompleted: 0, iterationsInterrupted: 0, vusActive: 0, vusInitialized: 0, currentTestRunDuration: 0 },
    test: {
      abort(message?: unknown): never {
        // Kept on the VU, so an abort the script catches still stops the run (as in k6).
        vu.aborted = message === undefined ? "" : String(message);
        throw new Error(vu.aborted ? `test aborted: ${vu.aborted}` : "test aborted");
      },
      fail(message?: unknown): void {
        // k6 v1.8.1 (execution.go): refused outside VU code, logged at error level at each
        // call, and the test marked failed while it goes on to its end (exit code 110).
        if (!vu.host) throw new Error("execution.test.fail() called outside of VU context");
        const given = message === undefined || message === null ? "" : String(message);
        vu.samples.push({ type: "log", level: "error", message: given ? `test marked as failed: ${given}` : "test marked as failed", vu: vu.id });
        // Taken with the iteration's outcome (../entry.ts), which carries it to the coordinator.
        vu.markedFailed ??= given;
      },
      get options() {
        // k6 has no test options in the init context, and says so (k6 v1.8.1 execution.go).
        if (!vu.host) throw new Error("getting test options in the init context is not supported");
        return (frozen ??= deepFreeze(structuredClone(vu.testOptions ?? {})));
      },
    },
  };
}

/** Freezes `value` and everything in it (k6 deep-freezes exec.test.options). */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
