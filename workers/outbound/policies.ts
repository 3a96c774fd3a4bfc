/**
 * The policy of each outbound path: which URLs it may reach (outbound-fetch.ts asks before
 * the first request and every redirect hop). Each reads the deployment's secrets and mode
 * when it is made, so an allow-list that shrank applies to the next request a path makes.
 * The decisions themselves are pure and live in core (target-policy.ts, schedule-input.ts).
 *
 *   load, setup and teardown, WebSockets   ALLOWED_TARGETS (loopback under wrangler dev)
 *   webhooks                               ALLOWED_WEBHOOKS (loopback under wrangler dev)
 *   push outputs                           ALLOWED_OUTPUTS (loopback under wrangler dev)
 *   the colo probe                         its one trace URL
 *   a target ownership check               the resolver's origin, or the host's own (one each)
 */
import { checkTarget, modeOf, outputHostProblem } from "../../core/spec/target-policy.ts";
import { parseVerificationSetting, unprovenHostProblem } from "../../core/spec/target-ownership.ts";
import { webhookHostProblem } from "../../core/watch/schedule-input.ts";
import type { Env } from "../env.ts";
import type { OutboundPolicy } from "./outbound-fetch.ts";

type PolicyEnv = Pick<Env, "ALLOWED_TARGETS" | "ALLOWED_WEBHOOKS" | "ALLOWED_OUTPUTS" | "EDGELOAD_MODE" | "TARGET_VERIFICATION">;

/**
 * Where a run's load and its setup, teardown and WebSockets may go: its deployment's targets,
 * and of those that need proof of ownership, the hosts proved when the run was admitted
 * (`ownedHosts`; absent for a run admitted without the check).
 */
export function targetPolicy(
  env: Pick<PolicyEnv, "ALLOWED_TARGETS" | "EDGELOAD_MODE" | "TARGET_VERIFICATION">,
  ownedHosts?: readonly string[],
): OutboundPolicy {
  const mode = modeOf(env.EDGELOAD_MODE);
  const setting = parseVerificationSetting(env.TARGET_VERIFICATION);
  return (url) => {
    const refusal = checkTarget(url.href, env.ALLOWED_TARGETS, mode)?.detail ?? null;
    if (refusal !== null || ownedHosts === undefined) return refusal;
    // A setting gone bad since admission refuses rather than loads unchecked.
    if (!setting.ok) return setting.detail;
    return unprovenHostProblem(url, setting.value, mode, ownedHosts);
  };
}

/** Where a schedule's webhooks may go. */
export function webhookPolicy(env: Pick<PolicyEnv, "ALLOWED_WEBHOOKS" | "EDGELOAD_MODE">): OutboundPolicy {
  const mode = modeOf(env.EDGELOAD_MODE);
  return (url) => webhookHostProblem(url, env.ALLOWED_WEBHOOKS, mode);
}

/** Where a run's push outputs may go. */
export function pushOutputPolicy(env: Pick<PolicyEnv, "ALLOWED_OUTPUTS" | "EDGELOAD_MODE">): OutboundPolicy {
  const mode = modeOf(env.EDGELOAD_MODE);
  return (url) => outputHostProblem(url, env.ALLOWED_OUTPUTS, mode);
}

/** Only `traceUrl`'s origin: the colo probe reads one page. */
export function onlyOrigin(traceUrl: string): OutboundPolicy {
  const origin = new URL(traceUrl).origin;
  return (url) => (url.origin === origin ? null : `only ${origin} is read here`);
}

/**
 * An ownership check (coordinator/http/target-verification.ts) reads one thing: the
 * DNS-over-HTTPS resolver's answer, or the host's well-known file. Each read gets this policy
 * of its own URL, so a redirect to anywhere else (another host, a metadata address) is not
 * followed. outboundFetch asks a policy once per origin, so a redirect within the host's own
 * origin stays the host owner's choice.
 */
export function ownershipCheckPolicy(url: string): OutboundPolicy {
  const origin = new URL(url).origin;
  return (next) => (next.origin === origin ? null : `an ownership check reads only ${origin}`);
}
