/**
 * Proof of target ownership, the coordinator's part: the deployment's key (generated on first
 * use and kept in D1 `settings`, like the seed URL key), the two reads that look for the
 * proof (a DNS-over-HTTPS TXT lookup and the host's well-known file, both through the
 * outbound module), storing what they found, and the admission check that refuses a run
 * against a host without a standing proof. The decisions are core/spec/target-ownership.ts's.
 *
 * The key is a setting of its own, not the seed URL key: rotating SEED_URL_KEY revokes seed
 * URLs and must not make every owner publish a new record.
 */
import {
  dohQueryUrl,
  findInDohAnswer,
  findInWellKnown,
  hostOfTarget,
  judgeFindings,
  notVerifiedDetail,
  ownershipToken,
  parseResolverSetting,
  parseVerificationSetting,
  proofToPublish,
  standingOf,
  verificationRequirement,
  wellKnownOrigin,
  type ProofFinding,
  type ProofToPublish,
  type VerificationRecord,
  type VerificationSetting,
} from "../../core/spec/target-ownership.ts";
import { modeOf } from "../../core/spec/target-policy.ts";
import { outbound } from "../../workers/outbound/outbound-fetch.ts";
import { ownershipCheckPolicy } from "../../workers/outbound/policies.ts";
import type { Env } from "../../workers/env.ts";
import { generatedSecret } from "../store/settings.ts";
import { loadVerification, provenHosts, saveVerification } from "../store/verified-targets.ts";
import { forbidden, notConfigured } from "./api-errors.ts";

export type VerificationEnv = Pick<Env, "DB" | "EDGELOAD_MODE" | "TARGET_VERIFICATION" | "TARGET_VERIFICATION_DOH">;

/** Each read gives up after this long: a refused run should say why within seconds. */
const READ_TIMEOUT_MS = 5000;
/** A TXT answer or a well-known file is a few lines; more is not read. */
const MAX_BODY_BYTES = 16 * 1024;

/** The deployment's TARGET_VERIFICATION and resolver, or the 503 naming the var that is wrong. */
export function verificationSettings(env: VerificationEnv): { setting: VerificationSetting; resolver: string } {
  const setting = parseVerificationSetting(env.TARGET_VERIFICATION);
  if (!setting.ok) throw notConfigured(setting.detail);
  const resolver = parseResolverSetting(env.TARGET_VERIFICATION_DOH);
  if (!resolver.ok) throw notConfigured(resolver.detail);
  return { setting: setting.value, resolver: resolver.value };
}

/** Whether `host` needs proof on this deployment, and why. */
export function requirementFor(env: VerificationEnv, setting: VerificationSetting, host: string) {
  return verificationRequirement(setting, modeOf(env.EDGELOAD_MODE), host);
}

/** What `host`'s owner publishes for this deployment; a loopback host's file is read at `targetOrigin`. */
export async function proofFor(env: VerificationEnv, host: string, targetOrigin: string | null): Promise<ProofToPublish> {
  const key = await generatedSecret(env.DB, "target_verification_key", Date.now());
  return proofToPublish(host, await ownershipToken(key, host), wellKnownOrigin(host, targetOrigin));
}

/**
 * Looks for the proof both ways at once, keeps the judgement as the host's last check and
 * returns it with what each way found. `fetcher` stands for the platform's fetch in tests.
 */
export async function checkOwnership(
  env: VerificationEnv,
  proof: ProofToPublish,
  resolver: string,
  nowMs: number,
  fetcher?: typeof fetch,
): Promise<{ record: VerificationRecord; findings: ProofFinding[] }> {
  const findings = await Promise.all([dnsFinding(proof, resolver, fetcher), wellKnownFinding(proof, fetcher)]);
  const record = judgeFindings(proof.host, findings, nowMs);
  await saveVerification(env.DB, record);
  return { record, findings };
}

/**
 * The admission check (run-admission.ts): passes when the target needs no proof or has a
 * standing one; else it looks again (an expired proof, or a record published since the last
 * look) and refuses with 403 `target-not-verified`, naming the exact record to publish.
 * Passing, it gives the hosts proved now: the run's shards load no other host that needs
 * proof (RunRecord.ownedHosts). Undefined when the check is off.
 */
export async function requireOwnership(env: VerificationEnv, target: URL, nowMs: number): Promise<readonly string[] | undefined> {
  const { setting, resolver } = verificationSettings(env);
  // Without the check a run carries no owned hosts, and its shards check none.
  if (setting === "off") return undefined;
  const host = hostOfTarget(target);
  if (!requirementFor(env, setting, host).required) return provenHosts(env.DB, nowMs);
  if (standingOf(await loadVerification(env.DB, host), nowMs) === "verified") return provenHosts(env.DB, nowMs);
  const proof = await proofFor(env, host, target.origin);
  const { record } = await checkOwnership(env, proof, resolver, nowMs);
  if (standingOf(record, nowMs) === "verified") return provenHosts(env.DB, nowMs);
  const detail = notVerifiedDetail(proof, record);
  throw forbidden("target-not-verified", "Target not verified", detail, [{ field: "target", detail }]);
}

async function dnsFinding(proof: ProofToPublish, resolver: string, fetcher?: typeof fetch): Promise<ProofFinding> {
  const url = dohQueryUrl(resolver, proof.dns.name);
  const resolverOrigin = new URL(resolver).origin;
  try {
    const response = await outbound(ownershipCheckPolicy(url), fetcher).fetch(url, {
      headers: { accept: "application/dns-json" },
      signal: AbortSignal.timeout(READ_TIMEOUT_MS),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return { method: "dns", found: false, detail: `the resolver ${resolverOrigin} answered ${response.status} for ${proof.dns.name}` };
    }
    const text = await cappedText(response);
    return findInDohAnswer(parsedJson(text), proof);
  } catch (error) {
    return { method: "dns", found: false, detail: `the resolver ${resolverOrigin} could not be asked for ${proof.dns.name}: ${reason(error)}` };
  }
}

async function wellKnownFinding(proof: ProofToPublish, fetcher?: typeof fetch): Promise<ProofFinding> {
  const url = proof.wellKnown.url;
  try {
    const response = await outbound(ownershipCheckPolicy(url), fetcher).fetch(url, { signal: AbortSignal.timeout(READ_TIMEOUT_MS) });
    return findInWellKnown(response.status, await cappedText(response), proof);
  } catch (error) {
    return { method: "well-known", found: false, detail: `${url} could not be read: ${reason(error)}` };
  }
}

function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The body's first MAX_BODY_BYTES as text; the rest is not read. */
async function cappedText(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const bytes = new Uint8Array(MAX_BODY_BYTES);
  let size = 0;
  while (size < MAX_BODY_BYTES) {
    const { done, value } = await reader.read();
    if (done) return new TextDecoder().decode(bytes.subarray(0, size));
    const taken = value.subarray(0, MAX_BODY_BYTES - size);
    bytes.set(taken, size);
    size += taken.byteLength;
  }
  await reader.cancel();
  return new TextDecoder().decode(bytes);
}

function reason(error: unknown): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) return `no answer within ${READ_TIMEOUT_MS / 1000} s`;
  return error instanceof Error ? error.message : String(error);
}
