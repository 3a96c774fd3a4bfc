/**
 * k6/execution for one VU: what the VU, its scenario and the test are now, and
 * exec.test.abort().
 */
import type { VuContext } from "./context.ts";

export function createExecution(vu: VuContext) {
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
      get options() {
        return {};
      },
    },
  };
}
