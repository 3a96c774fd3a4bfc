import { describe, expect, it } from "vitest";
import { exitCodeOf, type RunStatus } from "./protocol.ts";

describe("exitCodeOf", () => {
  it.each<[RunStatus, boolean, number | null]>([
    // Aborted by the API, Ctrl-C or an abortOnFail threshold: k6's ExternalAbort.
    ["aborted", false, 105],
    // Aborted by the script's exec.test.abort(): k6's ScriptAborted.
    ["aborted", true, 108],
    // In error by a shard or the coordinator: k6's GenericEngine.
    ["error", false, 103],
    // In error by an exception in the script's setup(): k6's ScriptException.
    ["error", true, 107],
    // The script's end does not change a pass.
    ["passed", true, 0],
    // Failed by thresholds (or an abortOnFail threshold): k6's ThresholdsHaveFailed.
    ["failed", false, 99],
    // Failed by the script's exec.test.fail(), thresholds failing too or not: k6's MarkedAsFailed.
    ["failed", true, 110],
    // Still going: no code yet.
    ["running", true, null],
  ])("%s (ended by the script: %s) exits %s", (status, byScript, code) => {
    expect(exitCodeOf(status, byScript)).toBe(code);
  });
});
