/**
 * The exit codes of every `edgeload` command, in one table: k6's where k6 has one
 * (go.k6.io/k6/errext/exitcodes), so a pipeline written for k6 reads edgeload's the same
 * way. k6 has no code for a refused credential, and folding one into 104 ("invalid
 * config") sent people hunting through a spec that was fine: it gets sysexits.h's
 * EX_NOPERM (77) instead, and a result that could not be established EX_TEMPFAIL (75,
 * core/run/verdict.ts). docs/cli.md prints this table (cli/help.ts).
 */

import { VERDICT_EXIT_CODES } from "../core/run/verdict.ts";

/** The codes by name, as the commands return them. */
export const EXIT = {
  ok: 0,
  failure: 1,
  inconclusive: VERDICT_EXIT_CODES.inconclusive,
  authFailed: 77,
  thresholdsFailed: 99,
  setupTimeout: 100,
  teardownTimeout: 101,
  runError: 103,
  invalidConfig: 104,
  aborted: 105,
  scriptException: 107,
  scriptAborted: 108,
  markedFailed: 110,
} as const;

export type ExitName = keyof typeof EXIT;

/** Each code with what it means and where it comes from, in the order docs/cli.md lists them. */
export const EXIT_CODES: ReadonlyArray<{ readonly name: ExitName; readonly code: number; readonly meaning: string; readonly source: string }> = [
  { name: "ok", code: EXIT.ok, meaning: "the run passed its thresholds; any other command did what it was asked", source: "k6" },
  {
    name: "inconclusive",
    code: EXIT.inconclusive,
    meaning:
      "the result could not be established, so it is not a pass: shards that never reported, a threshold whose metric has no data, a timing threshold failed while the generator was saturated, more of the schedule not sent by edgeload itself than `maxNotSentShare` allows (1 % by default); `compare` or `crosscheck` with nothing (or part) to compare, a target that moved too much (`--abba`); a ladder whose first step broke. The reasons are printed, and in the summary JSON and the API's answer (`verdict`)",
    source: "sysexits.h EX_TEMPFAIL (k6 has none)",
  },
  {
    name: "thresholdsFailed",
    code: EXIT.thresholdsFailed,
    meaning: "a threshold failed (also: `compare` found a regression, `crosscheck` a disagreement, `--abba` a difference beyond the target's noise)",
    source: "k6 ThresholdsHaveFailed",
  },
  {
    name: "setupTimeout",
    code: EXIT.setupTimeout,
    meaning: "a k6 script's setup() ran past its setupTimeout (60 s unless the options say): the run ended in error before any load",
    source: "k6 SetupTimeout",
  },
  {
    name: "teardownTimeout",
    code: EXIT.teardownTimeout,
    meaning: "a k6 script's teardown() ran past its teardownTimeout (60 s unless the options say): the run ended in error",
    source: "k6 TeardownTimeout",
  },
  {
    name: "runError",
    code: EXIT.runError,
    meaning: "the run ended in error (a shard or the coordinator failed, setup could not run or did not end)",
    source: "k6 GenericEngine",
  },
  {
    name: "invalidConfig",
    code: EXIT.invalidConfig,
    meaning:
      "invalid input: an unknown or inapplicable flag, a file not found, a spec or script edgeload cannot run, a run over the deployment's caps or budget, a target whose owner has not proved control (`edgeload verify`), a built-in scenario's provider that the pre-flight probe found set up so that the run cannot pass (the cause and its fix are printed; docs/authrim.md)",
    source: "k6 InvalidConfig",
  },
  { name: "aborted", code: EXIT.aborted, meaning: "the run was aborted (Ctrl-C, `edgeload abort`, an abortOnFail threshold)", source: "k6 ExternalAbort" },
  {
    name: "scriptException",
    code: EXIT.scriptException,
    meaning:
      "a k6 script threw in its init context, in setup() or in teardown() (an exception in an iteration is printed and counted, as in k6, and does not end the run)",
    source: "k6 ScriptException",
  },
  {
    name: "scriptAborted",
    code: EXIT.scriptAborted,
    meaning: "a k6 script called `exec.test.abort()` (in an iteration, setup() or teardown())",
    source: "k6 ScriptAborted",
  },
  {
    name: "markedFailed",
    code: EXIT.markedFailed,
    meaning:
      "a k6 script called `exec.test.fail()` (in an iteration, setup() or teardown()): the run went on to its end and failed, whatever its thresholds said; an abort or an error ends it with its own code instead",
    source: "k6 MarkedAsFailed",
  },
  {
    name: "authFailed",
    code: EXIT.authFailed,
    meaning: "the API refused the credentials (HTTP 401, or 403 for a token that may not do this)",
    source: "sysexits.h EX_NOPERM (k6 has none)",
  },
  { name: "failure", code: EXIT.failure, meaning: "anything else: no API to talk to, the API or a provider failed", source: "k6 (any other error)" },
];

/**
 * 403 problem types that are about the run, not the caller (coordinator/http/api.ts): a target
 * outside ALLOWED_TARGETS or whose owner has not proved control (`edgeload verify`), a push
 * output outside ALLOWED_OUTPUTS, a run over the deployment's caps, a seed URL refused. They are
 * input to fix, so 104; any other 403 is a credential that may not do this.
 */
const POLICY_PROBLEMS = /\/problems\/(target-not-allowed|target-not-verified|output-not-allowed|cap-exceeded|seed-url-[a-z-]+)$/;

/** The exit code for an API refusal of `status` with problem `type` (RFC 9457). */
export function exitCodeOfApiStatus(status: number, type: string): number {
  if (status === 401) return EXIT.authFailed;
  if (status === 403) return POLICY_PROBLEMS.test(type) ? EXIT.invalidConfig : EXIT.authFailed;
  if (status === 400 || status === 404 || status === 409 || status === 413 || status === 422) return EXIT.invalidConfig;
  return EXIT.failure;
}
