/**
 * Routes under /v1/targets: proof that a target's owner runs this deployment
 * (target-verification.ts, core/spec/target-ownership.ts).
 *
 *   GET  /v1/targets/:host/verification   what to publish, whether this deployment asks it of
 *                                          the host, and the host's last check (reads only)
 *   POST /v1/targets/:host/verification   checks now, keeps the result and answers the same,
 *                                          with what each way found
 *
 * `?target=<url>` names the target the host is loaded as: a loopback host's well-known file
 * is read at that origin, and POST holds that URL (else https://<host>) to ALLOWED_TARGETS,
 * so the check reads nothing the deployment could not load anyway.
 */
import { Hono, type Context } from "hono";
import {
  hostOfTarget,
  parseOwnershipHost,
  publishInstructions,
  standingOf,
  wellKnownOrigin,
  type ProofFinding,
  type ProofToPublish,
  type VerificationRecord,
} from "../../core/spec/target-ownership.ts";
import type { RoutesEnv } from "./routes-env.ts";
import { targetPolicy } from "../../workers/outbound/policies.ts";
import { badRequest, forbidden } from "./api-errors.ts";
import { loadVerification } from "../store/verified-targets.ts";
import { checkOwnership, proofFor, requirementFor, verificationSettings } from "./target-verification.ts";

type App = { Bindings: RoutesEnv };

export const targetsApi = new Hono<App>();

targetsApi.get("/:host/verification", async (c) => {
  const { host, targetOrigin } = hostOf(c);
  const { setting } = verificationSettings(c.env);
  const proof = await proofFor(c.env, host, targetOrigin);
  return c.json(verificationView(proof, requirementFor(c.env, setting, host), await loadVerification(c.env.DB, host), Date.now()));
});

targetsApi.post("/:host/verification", async (c) => {
  const { host, targetOrigin } = hostOf(c);
  const { setting, resolver } = verificationSettings(c.env);
  const refusal = targetPolicy(c.env)(new URL(wellKnownOrigin(host, targetOrigin)));
  if (refusal) throw forbidden("target-not-allowed", "Target not allowed", refusal, [{ field: "host", detail: refusal }]);
  const proof = await proofFor(c.env, host, targetOrigin);
  const nowMs = Date.now();
  const { record, findings } = await checkOwnership(c.env, proof, resolver, nowMs);
  return c.json({ ...verificationView(proof, requirementFor(c.env, setting, host), record, nowMs), findings: findings.map(findingView) });
});

/** The route's host, and the origin of `?target=` when given (it must be a URL of that host). */
function hostOf(c: Context<App>): { host: string; targetOrigin: string | null } {
  const parsed = parseOwnershipHost(c.req.param("host") ?? "");
  if (!parsed.ok) throw badRequest("bad host", [{ field: "host", detail: parsed.detail }]);
  const target = c.req.query("target");
  if (target === undefined) return { host: parsed.value, targetOrigin: null };
  const url = URL.canParse(target) ? new URL(target) : null;
  if (!url || !/^https?:$/.test(url.protocol) || hostOfTarget(url) !== parsed.value)
    throw badRequest("bad target", [{ field: "target", detail: `must be an http(s) URL of ${parsed.value}, not "${target}"` }]);
  return { host: parsed.value, targetOrigin: url.origin };
}

/**
 * What a user needs to act: whether proof is asked here and why, the host's standing
 * (verified, expired: checked again at the next run, unverified) and the exact record.
 */
function verificationView(proof: ProofToPublish, requirement: { required: boolean; why: string }, record: VerificationRecord | null, nowMs: number) {
  const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());
  return {
    host: proof.host,
    required: requirement.required,
    why: requirement.why,
    state: standingOf(record, nowMs),
    method: record?.method ?? null,
    verifiedAt: iso(record?.verifiedAtMs),
    expiresAt: iso(record?.expiresAtMs),
    checkedAt: iso(record?.checkedAtMs),
    lastCheck: record?.detail ?? null,
    publish: { dns: proof.dns, wellKnown: proof.wellKnown },
    instructions: publishInstructions(proof),
  };
}

function findingView(f: ProofFinding) {
  return { method: f.method, found: f.found, detail: f.detail };
}
