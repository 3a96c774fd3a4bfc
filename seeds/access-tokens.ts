/**
 * Access-token seed sets for an Authrim-style provider (AUTHRIM.md), made the way the
 * reference seeder makes them: tokens signed with the provider's own key (fetched from
 * its admin API), revoked ones truly revoked through POST /revoke, and a sample of every
 * type introspected afterwards to fill the `verification` block.
 *
 * Requests to the provider run with bounded concurrency and stop at the first refusal
 * with a message naming the call and its status. Re-running is safe: users are looked up
 * before they are created and revocation is idempotent.
 */
import { importPKCS8, SignJWT } from "jose";
import { TOKEN_TYPES, type SeedToken, type TokenType } from "../core/seed-set.ts";
import { DEFAULT_MIX, mixCounts } from "./token-mix.ts";

export interface AccessTokenSeedOptions {
  readonly baseUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly adminSecret: string;
  readonly count: number;
  readonly mix?: Readonly<Record<TokenType, number>>;
  readonly concurrency?: number;
  readonly testName?: string;
  /** Distinct users the tokens are spread over (created through the admin API). */
  readonly users?: number;
  /** Tokens introspected per type for the verification block. */
  readonly verifySample?: number;
  readonly onProgress?: (done: number, total: number, phase: string) => void;
}

export class SeedError extends Error {}

/** Active state introspection must report for each type. */
const EXPECTED_ACTIVE: Readonly<Record<TokenType, boolean>> = {
  valid: true, valid_exchanged: true, expired: false, revoked: false, wrong_audience: false, wrong_client: false,
};

/** Runs `work` over `items` with at most `concurrency` at a time, in order of start. */
async function pool<T>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      await work(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
}

export async function seedAccessTokens(o: AccessTokenSeedOptions) {
  const base = o.baseUrl.replace(/\/+$/, "");
  const concurrency = o.concurrency ?? 20;
  const progress = o.onProgress ?? (() => {});
  const call = async (what: string, path: string, init: RequestInit = {}): Promise<Response> => {
    let response: Response;
    try {
      response = await fetch(base + path, { ...init, signal: AbortSignal.timeout(30_000) });
    } catch (error) {
      throw new SeedError(`${what}: cannot reach ${base}${path} (${(error as Error).message})`);
    }
    if (!response.ok) throw new SeedError(`${what}: ${init.method ?? "GET"} ${path} answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
    return response;
  };
  const admin = (what: string, path: string, init: RequestInit = {}) =>
    call(what, path, { ...init, headers: { authorization: `Bearer ${o.adminSecret}`, "content-type": "application/json" } });
  const basic = `Basic ${btoa(`${o.clientId}:${o.clientSecret}`)}`;

  const issuer = ((await (await call("discovery", "/.well-known/openid-configuration")).json()) as { issuer: string }).issuer;
  const keyInfo = (await (await admin("signing key (POST /api/admin/signing-keys/rotate creates the first one)", "/api/admin/test/signing-key")).json()) as { kid: string; privatePEM: string };
  const key = await importPKCS8(keyInfo.privatePEM, "RS256");

  // Users: looked up first, so a re-run reuses them instead of creating duplicates.
  const userCount = Math.max(1, Math.min(o.users ?? 100, o.count));
  const userIds: string[] = new Array(userCount);
  await pool([...Array(userCount).keys()], concurrency, async (i) => {
    const email = `otp-bench-${String(i + 1).padStart(5, "0")}@test.authrim.internal`;
    const found = (await (await admin("user lookup", `/api/admin/users?email=${encodeURIComponent(email)}`)).json()) as { users: Array<{ id: string }> };
    userIds[i] = found.users[0]?.id ?? ((await (await admin("user creation", "/api/admin/users", { method: "POST", body: JSON.stringify({ email, name: `Bench ${i + 1}`, email_verified: true }) })).json()) as { id: string }).id;
    progress(i + 1, userCount, "users");
  });

  const counts = mixCounts(o.count, o.mix ?? DEFAULT_MIX);
  const now = Math.floor(Date.now() / 1000);
  const types = TOKEN_TYPES.flatMap((t) => Array.from({ length: counts[t] }, () => t));
  const tokens: SeedToken[] = [];
  for (const [i, type] of types.entries()) {
    const jti = crypto.randomUUID();
    const sub = userIds[i % userCount]!;
    const exp = type === "expired" ? now - 3600 : now + 30 * 86_400;
    const claims: Record<string, unknown> = { client_id: o.clientId, scope: "openid profile email" };
    let audience = issuer;
    const extra: Record<string, unknown> = {};
    if (type === "valid_exchanged") {
      claims.act = { sub: "client:edgeload-svc", client_id: "edgeload-svc" };
      claims.resource = "https://api.edgeload.internal";
      Object.assign(extra, { actor_client_id: "edgeload-svc", resource: "https://api.edgeload.internal" });
    }
    if (type === "wrong_audience") audience = "https://another-service.edgeload.internal";
    if (type === "wrong_client") claims.client_id = `nonexistent-client-${crypto.randomUUID().slice(0, 8)}`;
    const access_token = await new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", typ: "at+jwt", kid: keyInfo.kid })
      .setIssuer(issuer).setSubject(sub).setAudience(audience).setIssuedAt(now).setExpirationTime(exp).setJti(jti)
      .sign(key);
    tokens.push({ access_token, type, user_id: sub, jti, exp, shard_index: i % 8, region_key: "enam", ...extra });
  }
  progress(tokens.length, tokens.length, "signed");

  const revoked = tokens.filter((t) => t.type === "revoked");
  await pool(revoked, concurrency, async (t, i) => {
    await call("revocation", "/revoke", { method: "POST", headers: { authorization: basic }, body: new URLSearchParams({ token: t.access_token, token_type_hint: "access_token" }) });
    progress(i + 1, revoked.length, "revoked");
  });

  // Verification: introspect a sample of every type and compare with what it must say.
  const sampleSize = o.verifySample ?? 20;
  const results: Record<string, { expected: boolean; correct: number; incorrect: number; errors: number }> = {};
  const sample = TOKEN_TYPES.flatMap((type) => tokens.filter((t) => t.type === type).slice(0, sampleSize));
  await pool(sample, concurrency, async (t) => {
    const entry = (results[t.type] ??= { expected: EXPECTED_ACTIVE[t.type], correct: 0, incorrect: 0, errors: 0 });
    try {
      const body = (await (await call("introspection", "/introspect", { method: "POST", headers: { authorization: basic }, body: new URLSearchParams({ token: t.access_token }) })).json()) as { active?: unknown };
      if (body.active === entry.expected) entry.correct++;
      else entry.incorrect++;
    } catch {
      entry.errors++;
    }
  });
  const verified = Object.values(results).reduce((a, r) => a + r.correct, 0);
  const incorrect = Object.values(results).reduce((a, r) => a + r.incorrect + r.errors, 0);

  return {
    tokens,
    metadata: {
      version: 3,
      test_name: o.testName ?? "edgeload access tokens",
      generated_at: new Date().toISOString(),
      base_url: base,
      client_id: o.clientId,
      scope: "openid profile email",
      counts,
      total: tokens.length,
      token_mix: o.mix ?? DEFAULT_MIX,
      verification: { verified, incorrect, all_correct: incorrect === 0, results },
    },
  };
}
