/**
 * Proof that a target's owner runs this deployment's load tests. A deployed edgeload can send
 * a million requests a second from Cloudflare's network, and Cloudflare allows load only
 * against what you control, so a deployed coordinator loads a host only once its owner has
 * published a token only this deployment can make: `edgeload-verification=<token>`, with
 * token = hex HMAC-SHA256(deployment key, "edgeload target v1\n" + host), either as a DNS
 * TXT record at `_edgeload.<host>` (read over DNS-over-HTTPS, JSON form) or as a line of
 * `https://<host>/.well-known/edgeload-verification`.
 *
 * Pure decisions only: which hosts need proof (TARGET_VERIFICATION and the mode), the token,
 * what to publish, reading a resolver's answer and a well-known body, and the judgement with
 * its expiry. Time is passed in; the coordinator fetches and stores
 * (coordinator/http/target-verification.ts, coordinator/store/verified-targets.ts).
 */
import { hmacSha256Hex } from "../data/web-crypto.ts";
import type { Mode } from "../run/protocol.ts";
import { isLoopback } from "./target-policy.ts";

/** What the HMAC covers before the host: a version, so a later scheme cannot be confused with this one. */
export const OWNERSHIP_TOKEN_LABEL = "edgeload target v1\n";
export const PROOF_PREFIX = "edgeload-verification=";
export const DNS_RECORD_LABEL = "_edgeload";
export const WELL_KNOWN_PATH = "/.well-known/edgeload-verification";
export const DEFAULT_DOH_RESOLVER = "https://cloudflare-dns.com/dns-query";
/** How long a found proof stands before the next run re-checks it: a withdrawn record stops load within a week. */
export const PROOF_LIFETIME_MS = 7 * 24 * 3600_000;

export type ProofMethod = "dns" | "well-known";
export type Result<T> = { ok: true; value: T } | { ok: false; detail: string };

/**
 * The deployment's TARGET_VERIFICATION var. Unset: proof is asked of every non-loopback
 * target of a deployed coordinator, none under wrangler dev. `on` asks it of non-loopback
 * targets in both modes, `off` of none (a single-owner account), `all` of every target,
 * loopback included (how the tests exercise the path under wrangler dev).
 */
export type VerificationSetting = "default" | "on" | "off" | "all";

export function parseVerificationSetting(raw: string | undefined): Result<VerificationSetting> {
  const value = (raw ?? "").trim().toLowerCase();
  if (value === "") return { ok: true, value: "default" };
  if (value === "on" || value === "off" || value === "all") return { ok: true, value };
  // A typo must not turn the check off: it is a configuration error, not a default.
  return { ok: false, detail: `TARGET_VERIFICATION is "${raw}"; use on, off or all (or leave it unset)` };
}

/** Whether `host` needs proof under `setting` in `mode`, and why, in words a refusal can carry. */
export function verificationRequirement(setting: VerificationSetting, mode: Mode, host: string): { required: boolean; why: string } {
  if (setting === "off") return { required: false, why: "TARGET_VERIFICATION=off: this deployment loads its allowed targets without proof" };
  if (setting === "all") return { required: true, why: "TARGET_VERIFICATION=all: every target needs proof, loopback included" };
  if (isLoopback(host)) return { required: false, why: "a loopback target needs no proof (TARGET_VERIFICATION=all asks it too)" };
  if (setting === "on") return { required: true, why: "TARGET_VERIFICATION=on: every non-loopback target needs proof" };
  return mode === "deployed"
    ? { required: true, why: "a deployed coordinator loads only targets whose owner proved control" }
    : { required: false, why: "under wrangler dev the load leaves from this machine, so no proof is asked (TARGET_VERIFICATION=on asks it)" };
}

/**
 * Why a URL a run leads to (a script's request, a redirect, a WebSocket) is refused for want
 * of proof, or null: the run was admitted with `ownedHosts`, the hosts whose proof stood at
 * admission, and a host that needs proof under this setting must be one of them. Admission
 * checks the target; this keeps a script or a redirect from loading another allowed host
 * whose owner never proved control.
 */
export function unprovenHostProblem(url: URL, setting: VerificationSetting, mode: Mode, ownedHosts: readonly string[]): string | null {
  const host = hostOfTarget(url);
  if (!verificationRequirement(setting, mode, host).required || ownedHosts.includes(host)) return null;
  return `${host} has no proof of ownership for this deployment (\`edgeload verify ${host}\` says what to publish)`;
}

/**
 * A host as given to the API or the CLI, in the form tokens are made for: lower case, no
 * trailing dot, ASCII (punycode), IPv6 in brackets. Anything else (a port, a path, a
 * scheme) is refused naming what is wrong, so two spellings never get two tokens.
 */
export function parseOwnershipHost(raw: string): Result<string> {
  const candidate = raw.trim().toLowerCase().replace(/\.$/, "");
  if (candidate === "") return { ok: false, detail: "a host name is required, e.g. api.example.com" };
  if (/[/?#@\s]|:\/\//.test(candidate)) return { ok: false, detail: `"${raw}" is not a bare host name: give only the host, e.g. api.example.com` };
  let url: URL;
  try {
    url = new URL(`http://${candidate}/`);
  } catch {
    return { ok: false, detail: `"${raw}" is not a host name${candidate.includes(":") ? " (an IPv6 address goes in brackets, without a port)" : ""}` };
  }
  if (url.port !== "") return { ok: false, detail: `"${raw}" has a port; proof is per host, whatever the port` };
  if (url.hostname !== candidate) return { ok: false, detail: `"${raw}" is written ${url.hostname} in a URL; use that form` };
  return { ok: true, value: candidate };
}

/** The host of a target URL, in parseOwnershipHost's form (URL already lowercases and punycodes). */
export function hostOfTarget(target: URL): string {
  return target.hostname.replace(/\.$/, "");
}

/** The token for `host` under the deployment's key: hex HMAC-SHA256 of the label and the host. */
export function ownershipToken(deploymentKey: string, host: string): Promise<string> {
  return hmacSha256Hex(deploymentKey, OWNERSHIP_TOKEN_LABEL + host);
}

/** What the owner of a host publishes, in either form. */
export interface ProofToPublish {
  readonly host: string;
  /** `edgeload-verification=<token>`: the TXT value, and a line of the well-known file. */
  readonly line: string;
  readonly dns: { readonly name: string; readonly type: "TXT"; readonly value: string };
  readonly wellKnown: { readonly url: string; readonly line: string };
}

/**
 * Where the well-known file is read: `https://<host>` for a real host, whatever the target's
 * port; a loopback target's own origin (its scheme and port), since nothing serves https on
 * loopback's port 443.
 */
export function wellKnownOrigin(host: string, targetOrigin: string | null): string {
  return isLoopback(host) && targetOrigin ? targetOrigin : `https://${host}`;
}

export function proofToPublish(host: string, token: string, origin: string): ProofToPublish {
  const line = PROOF_PREFIX + token;
  return {
    host,
    line,
    dns: { name: `${DNS_RECORD_LABEL}.${host}`, type: "TXT", value: line },
    wellKnown: { url: origin + WELL_KNOWN_PATH, line },
  };
}

/** Both forms in one sentence, for a refusal and the CLI. */
export function publishInstructions(p: ProofToPublish): string {
  return `publish a DNS TXT record at ${p.dns.name} with the value "${p.line}", or serve ${p.wellKnown.url} with the line ${p.line} in its body`;
}

/** The resolver's JSON API URL for the TXT record (`?name=…&type=TXT`), as Cloudflare's and Google's take it. */
export function dohQueryUrl(resolver: string, recordName: string): string {
  const url = new URL(resolver);
  url.searchParams.set("name", recordName);
  url.searchParams.set("type", "TXT");
  return url.href;
}

/** The TARGET_VERIFICATION_DOH var: an http(s) URL of a JSON DNS-over-HTTPS resolver. */
export function parseResolverSetting(raw: string | undefined): Result<string> {
  const value = raw?.trim() || DEFAULT_DOH_RESOLVER;
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))
    return {
      ok: false,
      detail: `TARGET_VERIFICATION_DOH is "${raw}"; it must be the http(s) URL of a DNS-over-HTTPS JSON resolver, e.g. ${DEFAULT_DOH_RESOLVER}`,
    };
  return { ok: true, value };
}

/** What one way of proving found. `detail` says it in words a user can act on. */
export interface ProofFinding {
  readonly method: ProofMethod;
  readonly found: boolean;
  readonly detail: string;
}

/** DNS RCODEs a resolver reports in `Status` (RFC 1035 §4.1.1, RFC 6895). */
const DNS_STATUS: Readonly<Record<number, string>> = { 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 5: "REFUSED" };
const TXT_TYPE = 16;

/**
 * Reads a resolver's JSON answer (`{Status: 0, Answer: [{type: 16, data: "\"…\""}]}`) for
 * the proof line. A TXT record is one or more quoted strings that together are its value
 * (RFC 1035 §3.3.14); resolvers print them quoted and escaped as in a zone file.
 */
export function findInDohAnswer(answer: unknown, p: ProofToPublish): ProofFinding {
  const at = `at ${p.dns.name}`;
  const fail = (detail: string): ProofFinding => ({ method: "dns", found: false, detail });
  if (typeof answer !== "object" || answer === null || typeof (answer as { Status?: unknown }).Status !== "number")
    return fail(`the resolver's answer for the TXT record ${at} is not DNS JSON`);
  const { Status: status, Answer: records } = answer as { Status: number; Answer?: unknown };
  if (status === 3) return fail(`no TXT record ${at} (NXDOMAIN)`);
  if (status !== 0) return fail(`the resolver answered ${DNS_STATUS[status] ?? `DNS status ${status}`} for the TXT record ${at}`);
  const values = (Array.isArray(records) ? records : [])
    .filter((r): r is { type: number; data: string } => r?.type === TXT_TYPE && typeof r?.data === "string")
    .map((r) => txtValue(r.data).trim());
  if (values.includes(p.line)) return { method: "dns", found: true, detail: `TXT record ${at}` };
  return fail(otherTokenOr(values, `no ${PROOF_PREFIX}… TXT record ${at}`, `the TXT record ${at}`));
}

/** A TXT record's value from its presentation form: its quoted strings joined, escapes undone. */
export function txtValue(data: string): string {
  if (!data.trimStart().startsWith('"')) return data;
  let out = "";
  for (const [, chunk] of data.matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
    out += chunk!.replace(/\\(\d{3}|.)/g, (_, e: string) => (e.length === 3 ? String.fromCharCode(Number(e)) : e));
  }
  return out;
}

/** The well-known file proves control when one of its lines is the proof line; a 2xx only counts. */
export function findInWellKnown(status: number, body: string, p: ProofToPublish): ProofFinding {
  const url = p.wellKnown.url;
  if (status < 200 || status > 299) return { method: "well-known", found: false, detail: `${url} answered ${status}` };
  const lines = body.split(/\r?\n/).map((l) => l.trim());
  if (lines.includes(p.line)) return { method: "well-known", found: true, detail: url };
  return { method: "well-known", found: false, detail: otherTokenOr(lines, `${url} has no ${p.line} line`, url) };
}

/** A stale or another deployment's token says so: the fix is a different value, not a new record. */
function otherTokenOr(values: readonly string[], absent: string, where: string): string {
  const other = values.find((v) => v.startsWith(PROOF_PREFIX));
  return other ? `${where} holds ${other.slice(0, PROOF_PREFIX.length + 12)}…, not this deployment's token for the host` : absent;
}

/** What is kept of a host's last check (D1 `verified_targets`). */
export interface VerificationRecord {
  readonly host: string;
  /** How it was proved; null when the last check found no proof. */
  readonly method: ProofMethod | null;
  readonly verifiedAtMs: number | null;
  readonly expiresAtMs: number | null;
  readonly checkedAtMs: number;
  /** What the last check found, in words. */
  readonly detail: string;
}

/**
 * The outcome of a check at `nowMs`: proved by the first finding that found it (DNS first),
 * standing for PROOF_LIFETIME_MS; or not proved, with every finding's reason. A check
 * that finds nothing replaces an earlier proof: a withdrawn record is no longer a proof.
 */
export function judgeFindings(host: string, findings: readonly ProofFinding[], nowMs: number): VerificationRecord {
  const proof = findings.find((f) => f.found);
  if (proof) return { host, method: proof.method, verifiedAtMs: nowMs, expiresAtMs: nowMs + PROOF_LIFETIME_MS, checkedAtMs: nowMs, detail: proof.detail };
  const detail = findings.length ? findings.map((f) => f.detail).join("; ") : "nothing was checked";
  return { host, method: null, verifiedAtMs: null, expiresAtMs: null, checkedAtMs: nowMs, detail };
}

/** verified until `expiresAt`; expired from then on (re-checked at the next run); else unverified. */
export type Standing = "verified" | "expired" | "unverified";

export function standingOf(record: VerificationRecord | null, nowMs: number): Standing {
  if (!record || record.verifiedAtMs === null || record.expiresAtMs === null) return "unverified";
  return nowMs < record.expiresAtMs ? "verified" : "expired";
}

/** The 403 a run against an unproved host gets: the exact record to publish, and what the last check saw. */
export function notVerifiedDetail(p: ProofToPublish, record: VerificationRecord | null): string {
  const seen = record ? ` (last check: ${record.detail})` : "";
  return (
    `${p.host} has not been proved to be yours: ${publishInstructions(p)}; ` +
    `then run \`edgeload verify ${p.host}\` (POST /v1/targets/${p.host}/verification)${seen}`
  );
}
