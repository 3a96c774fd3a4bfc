import { describe, expect, it } from "vitest";
import * as preflight from "./preflight.ts";

const c = { target: "https://auth.example", clientId: "cid-1" };
const causeOf = (f: preflight.Finding | null) => f?.cause ?? null;

describe("the pre-flight judges", () => {
  it.each<[string, preflight.ProbeAnswer, string | null]>([
    // [what the provider did, its answer to an exchange of a valid subject, the cause found]
    ["exchanged it", { status: 200 }, null],
    ["has exchange off (Authrim's default)", { status: 400, error: "unsupported_grant_type" }, "token-exchange-off"],
    ["does not let the client exchange", { status: 403, error: "unauthorized_client" }, "client-not-allowed-to-exchange"],
    ["does not let the client exchange this subject", { status: 403, error: "invalid_target" }, "client-not-allowed-for-subject"],
    [
      "has no key for the seed set",
      { status: 500, error: "server_error", description: "Server configuration error: no public key available" },
      "unknown-signing-key",
    ],
    ["refused the subject as invalid: for the run's thresholds to judge", { status: 400, error: "invalid_grant" }, null],
    ["failed otherwise: not a setup the probe knows", { status: 503 }, null],
  ])("token exchange: a provider that %s", (_, answer, cause) => {
    expect(causeOf(preflight.judgeTokenExchange(c, answer))).toBe(cause);
  });

  it("names the admin call and the client's row for each token-exchange cause", () => {
    expect(preflight.judgeTokenExchange(c, { status: 400, error: "unsupported_grant_type" })!.fix.join("\n")).toContain(
      `curl -X PUT https://auth.example/api/admin/settings/token-exchange -H "authorization: Bearer $ADMIN_API_SECRET" -H "content-type: application/json" -d '{"enabled": true}'`,
    );
    expect(preflight.judgeTokenExchange(c, { status: 403, error: "invalid_target" })!.fix.join("\n")).toContain(
      `UPDATE oauth_clients SET allowed_subject_token_clients = '["cid-1"]' WHERE client_id = 'cid-1'`,
    );
  });

  it("finds a revoked token of the set answered as live, with how to reseed or keep revocations longer", () => {
    expect(preflight.judgeRevokedIntrospection(c, false)).toBeNull();
    expect(preflight.judgeRevokedExchange(c, { status: 400, error: "invalid_grant" })).toBeNull();
    expect(preflight.judgeRevokedExchange(c, { status: 200 })?.cause).toBe("revocation-lapsed");
    const lapsed = preflight.judgeRevokedIntrospection(c, true)!;
    expect(lapsed.cause).toBe("revocation-lapsed");
    expect(lapsed.fix.join("\n")).toContain("edgeload seed access-tokens --base-url https://auth.example");
    expect(lapsed.fix.join("\n")).toContain(`/api/admin/settings/oauth-config/TOKEN_EXPIRY -H "authorization: Bearer $ADMIN_API_SECRET"`);
  });

  it.each<[string, preflight.ProbeAnswer, string | null]>([
    // [the provider's answer to silent authentication with a seeded session, the cause found]
    ["a code", { status: 302, redirectError: null }, null],
    ["consent_required (client not trusted or not skipping consent)", { status: 302, redirectError: "consent_required" }, "consent-required"],
    ["login_required (sessions unknown)", { status: 302, redirectError: "login_required" }, "session-unknown"],
  ])("silent auth answered %s", (_, answer, cause) => {
    expect(causeOf(preflight.judgeSilentAuth(c, answer))).toBe(cause);
  });

  it("says how to make the client trusted", () => {
    expect(preflight.judgeSilentAuth(c, { status: 302, redirectError: "consent_required" })!.fix.join("\n")).toContain(
      `curl -X PUT https://auth.example/api/admin/clients/cid-1 -H "authorization: Bearer $ADMIN_API_SECRET" -H "content-type: application/json" -d '{"is_trusted": true, "skip_consent": true}'`,
    );
  });

  it.each<[string, preflight.ProbeAnswer, string | null]>([
    ["a code (201)", { status: 201 }, null],
    ["403: test endpoints off (ENABLE_TEST_ENDPOINTS)", { status: 403, error: "access_denied" }, "test-endpoints-off"],
    ["401: the admin secret is wrong", { status: 401, error: "unauthorized" }, "admin-secret-refused"],
    ["404 with an error: the user does not exist", { status: 404, error: "invalid_request" }, "user-unknown"],
  ])("the admin test API's mail code answered %s", (_, answer, cause) => {
    expect(causeOf(preflight.judgeEmailCode(c, answer))).toBe(cause);
  });

  const verified: preflight.ProbeAnswer = { status: 200 };
  const refused: preflight.ProbeAnswer = { status: 400, error: "interaction_required" };
  it.each<[string, preflight.ChallengeShardsAnswer | null, preflight.ProbeAnswer[], string | null]>([
    ["every code found (one count stored in KV)", { current: 16, source: "kv" }, [verified], null],
    ["all seven found, the counts not stored", { current: 4, source: "default" }, Array(7).fill(verified), null],
    ["one of seven refused: the counts are split", { current: 4, source: "default" }, [...Array(6).fill(verified), refused], "challenge-shards-split"],
    ["refused where the route is missing", null, [refused], "challenge-shards-split"],
    ["another 400 (a wrong code would be the run's)", { current: 4, source: "env" }, [{ status: 400, error: "invalid_request" }], null],
  ])("the verify of the provider's own mail codes: %s", (_, shards, verifies, cause) => {
    expect(causeOf(preflight.judgeEmailVerify(c, shards, verifies))).toBe(cause);
  });

  it("names the split, management's count and its source, and the call that aligns the counts", () => {
    const finding = preflight.judgeEmailVerify(c, { current: 4, source: "default" }, [refused, verified, refused]);
    expect(finding?.said).toContain("refused 2 of 3 mail codes it had just issued");
    expect(finding?.said).toContain("ar-management, 4 challenge shards, from default");
    expect(finding?.fix.at(-1)).toBe(
      `curl -X PUT https://auth.example/api/admin/settings/challenge-shards -H "authorization: Bearer $ADMIN_API_SECRET" -H "content-type: application/json" -d '{"shards": 16}'`,
    );
  });

  it.each<[string, unknown, preflight.ProbeAnswer, string | null]>([
    ["rejects a wrong-audience token", false, { status: 200 }, null],
    ["accepts it (strict validation off)", true, { status: 200 }, "strict-validation-off"],
    ["has no key for the seed set", undefined, { status: 500, description: "no public key available" }, "unknown-signing-key"],
  ])("introspection that %s", (_, active, answer, cause) => {
    expect(causeOf(preflight.judgeIntrospect(c, active, answer))).toBe(cause);
  });

  it.each<[string, preflight.ProbeAnswer, string | null]>([
    ["answers the subject", { status: 200 }, null],
    [
      "has no key for the seed set (500)",
      { status: 500, error: "server_error", description: "Server configuration error: no public key available" },
      "unknown-signing-key",
    ],
    ["refuses the token (401): for the run's thresholds", { status: 401, error: "invalid_token" }, null],
    // Authrim's ar-userinfo without ISSUER_URL answers every token so.
    ["has no ISSUER_URL (500)", { status: 500, error: "server_error", description: "Server configuration error" }, "userinfo-issuer-unset"],
  ])("userinfo that %s", (_, answer, cause) => {
    expect(causeOf(preflight.judgeUserinfo(answer))).toBe(cause);
  });
});
