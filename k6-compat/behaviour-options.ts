/**
 * k6 options that change how a script's iterations behave rather than how much load they
 * make, checked before any load. Each is acted on as k6 acts on it (k6 v1.x, internal/js/
 * runner.go and js/modules/k6/http/request.go) or refused, naming why:
 *
 * - `throw`, `noCookiesReset` and `discardResponseBodies` are the VUs' own: each reads them from
 *   the script's options (runtime/vu-options.ts), as it reads maxRedirects.
 * - `minIterationDuration` goes into the run spec's script (core/spec/script-schema.ts): the
 *   shard pauses a VU after an iteration shorter than it (workers/shard/iteration-io.ts).
 * - `insecureSkipTLSVerify: true` is refused: a Worker's fetch() always verifies a target's
 *   certificate and has no switch to stop it, so the script would meet TLS errors k6 skips.
 * - `hosts` naming any host is refused: a Worker's fetch() resolves names through Cloudflare's
 *   DNS and cannot be sent to another address for a name (`cf.resolveOverride` takes only a
 *   hostname of the same zone), nor can a Browser Run browser be given resolver rules.
 *
 * @example
 * behaviourProblems({ insecureSkipTLSVerify: true }) // ["options.insecureSkipTLSVerify: …"]
 * scriptBehaviour({ minIterationDuration: "2s" })      // { minIterationDuration: "2s" }
 */
import { parseDurationMs } from "../core/spec/duration.ts";

/** The options this module decides on. */
export const BEHAVIOUR_OPTIONS: readonly string[] = [
  "minIterationDuration",
  "throw",
  "noCookiesReset",
  "discardResponseBodies",
  "insecureSkipTLSVerify",
  "hosts",
];

const BOOLEANS = ["throw", "noCookiesReset", "discardResponseBodies", "insecureSkipTLSVerify"] as const;

/** Why the script's behaviour options cannot run on edgeload: empty when they can. */
export function behaviourProblems(raw: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  for (const key of BOOLEANS) {
    const value = raw[key];
    // k6 reads them as booleans and refuses anything else when the test starts.
    if (value !== undefined && value !== null && typeof value !== "boolean")
      problems.push(`options.${key} must be true or false, got ${JSON.stringify(value)}`);
  }
  if (raw.insecureSkipTLSVerify === true) {
    problems.push(
      "options.insecureSkipTLSVerify: a Worker's fetch() always verifies the target's TLS certificate and cannot be told not to, " +
        "so requests k6 would send would fail here; give the target a certificate a public CA signed (or test it over http://), or run this script under k6",
    );
  }
  const hosts = raw.hosts;
  if (hosts !== undefined && hosts !== null && (typeof hosts !== "object" || Object.keys(hosts).length > 0)) {
    problems.push(
      "options.hosts: a Worker's fetch() resolves a name through Cloudflare's DNS and cannot be sent to another address for it " +
        "(cf.resolveOverride only points at a hostname of the same zone, and a Browser Run browser takes no resolver rules), " +
        "so requests would reach other servers than under k6; put the address the name should reach in the URLs (or give it a DNS record), or run this script under k6",
    );
  }
  const min = raw.minIterationDuration;
  if (min !== undefined && min !== null && parseDurationMs(min) === undefined) {
    problems.push(`options.minIterationDuration: ${JSON.stringify(min)} is not a duration like "2s", "1m30s" or "500ms" (or a number of ms)`);
  }
  return problems;
}

/** What the run spec's script carries of these options (minIterationDuration; the rest are the VUs'). */
export function scriptBehaviour(raw: Readonly<Record<string, unknown>>): { minIterationDuration?: unknown } {
  const min = raw.minIterationDuration;
  return min === undefined || min === null ? {} : { minIterationDuration: min };
}
