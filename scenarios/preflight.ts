/**
 * The pre-flight probe's judgement, per built-in scenario: what one request before any load
 * answered, and whether that answer means the provider is set up so that the run cannot
 * pass — with the cause and the admin call or setting that fixes it on Authrim
 * (docs/authrim.md lists them). Pure: cli/preflight.ts sends the requests and reads these.
 *
 * Each judge takes what the probe saw and returns the finding, or null when the answer is
 * what a well-set-up provider gives. An answer it does not recognise is not a finding: the
 * run's own thresholds judge it.
 */

import { CHALLENGE_SHARDS_FIX, TEST_ENDPOINTS_FIX } from "../core/data/seed-set.ts";

/** A misconfiguration the probe recognised. */
export interface Finding {
  /** Stable name, e.g. "token-exchange-off" (tests and the summary line use it). */
  readonly cause: string;
  /** What the provider answered and what that means for the run, one sentence. */
  readonly said: string;
  /** The exact calls or settings that fix it, one per line. */
  readonly fix: readonly string[];
}

/** What the fix lines need to name. */
export interface ProbeContext {
  readonly target: string;
  readonly clientId: string;
}

/** What the probe saw of one answer. */
export interface ProbeAnswer {
  readonly status: number;
  /** The JSON body's `error` and `error_description`, when there were any. */
  readonly error?: string | null;
  readonly description?: string | null;
  /** For a redirect, the `error` in its Location's query. */
  readonly redirectError?: string | null;
}

const adminCall = (c: ProbeContext, method: string, path: string, body: string) =>
  `curl -X ${method} ${c.target}${path} -H "authorization: Bearer $ADMIN_API_SECRET" -H "content-type: application/json" -d '${body}'`;

/** A token signed by a key the provider does not have (Authrim: 500 "no public key available"). */
function unknownKey(a: ProbeAnswer): Finding | null {
  if (a.status !== 500 || !/no public key/i.test(a.description ?? "")) return null;
  return {
    cause: "unknown-signing-key",
    said: 'answered 500 "no public key available" for a valid token of the seed set: the set was signed by a key this provider does not have',
    fix: [
      "make the seed set against this provider (its key: GET /api/admin/test/signing-key), e.g.",
      "edgeload seed access-tokens --base-url <this provider> --client-id … --client-secret … --admin-secret …",
    ],
  };
}

/** userinfo with one `valid` token of the seed set. */
export function judgeUserinfo(a: ProbeAnswer): Finding | null {
  return unknownKey(a) ?? issuerUnset(a);
}

/**
 * Authrim's ar-userinfo answers every token 500 "Server configuration error" when its own
 * ISSUER_URL is unset (ar-lib-core token-introspection.ts): Authrim's setup sets it on auth,
 * token, discovery and management only.
 */
function issuerUnset(a: ProbeAnswer): Finding | null {
  if (a.status !== 500 || !/^server configuration error$/i.test(a.description ?? "")) return null;
  return {
    cause: "userinfo-issuer-unset",
    said: 'answered 500 "Server configuration error" for a valid token of the seed set: the userinfo worker has no ISSUER_URL',
    fix: ["set ISSUER_URL (the issuer discovery announces) in ar-userinfo's environment as on the other workers, and deploy or restart it"],
  };
}

/** introspect with one `wrong_audience` token: `active` as answered (strict validation off answers true). */
export function judgeIntrospect(c: ProbeContext, active: unknown, a: ProbeAnswer): Finding | null {
  const key = unknownKey(a);
  if (key || active !== true) return key;
  return {
    cause: "strict-validation-off",
    said: "answered active=true for a token minted for another audience: every wrong_audience and wrong_client token would count as a false positive",
    fix: [
      "turn strict introspection validation on (and wait 60 s for its positive-answer cache):",
      adminCall(c, "PUT", "/api/admin/settings/introspection-validation", '{"strictValidation": true}'),
    ],
  };
}

/**
 * Authrim keeps a revocation only for its access-token lifetime from the revocation
 * (TOKEN_EXPIRY, 3600 s by default), while seeded tokens live 30 days: an hour after seeding,
 * the set's revoked tokens are live again, and every one would count as accepted. The probe
 * asks with one `revoked` token of the seed set.
 */
export function judgeRevokedIntrospection(c: ProbeContext, active: unknown): Finding | null {
  return active === true ? revocationLapsed(c) : null;
}

/** The same, for token exchange of one `revoked` subject: exchanged (200) means it is live. */
export function judgeRevokedExchange(c: ProbeContext, a: ProbeAnswer): Finding | null {
  return a.status === 200 ? revocationLapsed(c) : null;
}

function revocationLapsed(c: ProbeContext): Finding {
  return {
    cause: "revocation-lapsed",
    said: "answered a revoked token of the seed set as live: the provider no longer holds its revocation (Authrim keeps one for TOKEN_EXPIRY, 3600 s by default, from when it was made), so every revoked token would count as accepted",
    fix: [
      "make the seed set again and run within the provider's access-token lifetime of seeding:",
      `edgeload seed access-tokens --base-url ${c.target} --client-id … --client-secret … --admin-secret …`,
      "or keep revocations longer (Authrim: up to 86400 s, before seeding):",
      adminCall(c, "PUT", "/api/admin/settings/oauth-config/TOKEN_EXPIRY", '{"value": 86400}'),
    ],
  };
}

/** token exchange of one `valid` subject token of the seed set. */
export function judgeTokenExchange(c: ProbeContext, a: ProbeAnswer): Finding | null {
  if (a.status === 400 && a.error === "unsupported_grant_type") {
    return {
      cause: "token-exchange-off",
      said: "answered 400 unsupported_grant_type: token exchange is off (Authrim's default)",
      fix: ["turn it on (or set ENABLE_TOKEN_EXCHANGE=true):", adminCall(c, "PUT", "/api/admin/settings/token-exchange", '{"enabled": true}')],
    };
  }
  const row = (set: string) =>
    `wrangler d1 execute <Authrim's DB> --remote --command "UPDATE oauth_clients SET ${set} WHERE client_id = '${c.clientId}'"   (clients are cached up to an hour: do it before first use)`;
  if (a.status === 403 && a.error === "unauthorized_client") {
    return {
      cause: "client-not-allowed-to-exchange",
      said: `answered 403 unauthorized_client: client ${c.clientId} may not use token exchange`,
      fix: ["allow it on the client's row:", row("token_exchange_allowed = 1")],
    };
  }
  if (a.status === 403 && a.error === "invalid_target") {
    return {
      cause: "client-not-allowed-for-subject",
      said: `answered 403 invalid_target: client ${c.clientId} is neither in the subject token's aud nor in its allowed_subject_token_clients`,
      fix: [
        "allow the subjects' client (the seed set's client_id) on the exchanging client's row:",
        row(`allowed_subject_token_clients = '["${c.clientId}"]'`),
      ],
    };
  }
  return unknownKey(a);
}

/** silent authentication with one session of the seed set. */
export function judgeSilentAuth(c: ProbeContext, a: ProbeAnswer): Finding | null {
  if (a.redirectError === "consent_required") {
    return {
      cause: "consent-required",
      said: `answered error=consent_required: client ${c.clientId} is not trusted or does not skip consent`,
      fix: ["mark it trusted and consent-free:", adminCall(c, "PUT", `/api/admin/clients/${c.clientId}`, '{"is_trusted": true, "skip_consent": true}')],
    };
  }
  if (a.redirectError === "login_required") {
    return {
      cause: "session-unknown",
      said: "answered error=login_required: the provider does not know the seed set's sessions (expired, or made against another provider)",
      fix: ["make the sessions again against this provider:", "edgeload seed sessions --base-url <this provider> --admin-secret …"],
    };
  }
  return null;
}

/** The admin test API's mail-OTP call for one user of the seed set (the otp-login scenario's second step). */
export function judgeEmailCode(c: ProbeContext, a: ProbeAnswer): Finding | null {
  if (a.status === 403 || (a.status === 404 && !a.error)) {
    return {
      cause: "test-endpoints-off",
      said: `answered ${a.status} to POST /api/admin/test/email-codes: the provider's test endpoints are off`,
      fix: [TEST_ENDPOINTS_FIX],
    };
  }
  if (a.status === 401) {
    return {
      cause: "admin-secret-refused",
      said: "answered 401 to the admin API: the admin secret is wrong",
      fix: ["pass the provider's ADMIN_API_SECRET (--admin-secret)"],
    };
  }
  if (a.status === 404) {
    return {
      cause: "user-unknown",
      said: "answered 404: the seed set's users do not exist on this provider",
      fix: ["make the users against this provider:", `edgeload seed users --base-url ${c.target} --admin-secret …`],
    };
  }
  return null;
}

/** Authrim's `GET /api/admin/settings/challenge-shards`, as the management worker answers it. */
export interface ChallengeShardsAnswer {
  readonly current?: unknown;
  readonly source?: unknown;
}

/** The verify of mail codes the provider had just issued (the otp-login scenario's third step). */
export function judgeEmailVerify(c: ProbeContext, shards: ChallengeShardsAnswer | null, verifies: readonly ProbeAnswer[]): Finding | null {
  const refused = verifies.filter((v) => v.error === "interaction_required").length;
  if (refused === 0) return null;
  const issuing = typeof shards?.current === "number" ? `${shards.current} challenge shards, from ${String(shards.source)}` : "its challenge shards";
  return {
    cause: "challenge-shards-split",
    said:
      `refused ${refused} of ${verifies.length} mail codes it had just issued (POST /api/auth/email-codes/verify: interaction_required): ` +
      `the worker that issues them (ar-management, ${issuing}) and the one that verifies them (ar-auth) route codes to different challenge shards`,
    fix: [CHALLENGE_SHARDS_FIX, adminCall(c, "PUT", "/api/admin/settings/challenge-shards", '{"shards": 16}')],
  };
}

/** The lines the CLI prints for findings. */
export function findingLines(target: string, scenario: string, findings: readonly Finding[]): string[] {
  return findings.flatMap((f) => [`✗ pre-flight (${scenario}, ${f.cause}): ${target} ${f.said}.`, ...f.fix.map((line) => `    ${line}`)]);
}
