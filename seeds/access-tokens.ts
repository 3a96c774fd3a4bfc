/**
 * Access-token seed sets for an Authrim-style provider (docs/authrim.md), made the way the
 * reference seeder makes them: tokens signed with the provider's own key (fetched from
 * its admin API), revoked ones truly revoked through POST /revoke, and a sample of every
 * type introspected afterwards to fill the `verification` block.
 *
 * Requests to the provider run with bounded concurrency and stop at the first refusal
 * with a message naming the call and its status. Re-running is safe: users are looked up
 * before they are created and revocation is idempotent.
 */
import { SignJWT } from "jose";
import { ACTIVE_EXPECTED, TOKEN_TYPES, type SeedToken, type TokenType } from "../core/data/seed-set.ts";
import { base64url } from "../core/data/web-crypto.ts";
import { pool, Provider, type ProviderAccess } from "./provider-api.ts";
import { DEFAULT_MIX, mixCounts } from "./token-mix.ts";
import { checkSpread, ensureUsers, userSpread } from "./users.ts";

export interface AccessTokenSeedOptions extends Required<ProviderAccess> {
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

export async function seedAccessTokens(o: AccessTokenSeedOptions) {
  const provider = new Provider(o);
  const concurrency = o.concurrency ?? 20;
  const progress = o.onProgress ?? (() => {});
  const basic = provider.basic;

  const signer = await provider.signer();

  // Users: looked up first, so a re-run reuses them instead of creating duplicates.
  const userCount = userSpread(o.count, o.users, 100);
  const accounts = await ensureUsers(provider, [...Array(userCount).keys()], { concurrency, onProgress: progress });
  checkSpread(accounts, userCount);
  const userIds = [...Array(userCount).keys()].map((i) => accounts.get(i)!.userId);

  const counts = mixCounts(o.count, o.mix ?? DEFAULT_MIX);
  const now = Math.floor(Date.now() / 1000);
  const types = TOKEN_TYPES.flatMap((t) => Array.from({ length: counts[t] }, () => t));
  const tokens: SeedToken[] = [];
  for (const [i, type] of types.entries()) {
    tokens.push(await signToken(signer, { index: i, type, sub: userIds[i % userCount]!, clientId: o.clientId, now }));
  }
  progress(tokens.length, tokens.length, "signed");

  await revokeAll(
    provider,
    basic,
    tokens.filter((t) => t.type === "revoked"),
    concurrency,
    progress,
  );
  const verification = await verifySample(provider, basic, tokens, o.verifySample ?? 20, concurrency);

  return {
    tokens,
    metadata: {
      version: 3,
      test_name: o.testName ?? "edgeload access tokens",
      generated_at: new Date().toISOString(),
      base_url: provider.base,
      client_id: o.clientId,
      scope: "openid profile email",
      counts,
      total: tokens.length,
      distinct_users: userCount,
      token_mix: o.mix ?? DEFAULT_MIX,
      verification,
    },
  };
}

type Signer = Awaited<ReturnType<Provider["signer"]>>;

/**
 * Token `index` of the set, signed with the provider's key as it signs its own access
 * tokens; its type says what is wrong with it, if anything (expired, issued for another
 * audience, for a client that does not exist) or what it carries (an exchanged token's actor).
 */
async function signToken(
  { issuer, kid, key }: Signer,
  t: { readonly index: number; readonly type: TokenType; readonly sub: string; readonly clientId: string; readonly now: number },
): Promise<SeedToken> {
  const { type, sub, now } = t;
  const { jti, shard, region } = regionalJti(t.index);
  const exp = type === "expired" ? now - 3600 : now + 30 * 86_400;
  const claims: Record<string, unknown> = { client_id: t.clientId, scope: "openid profile email" };
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
    .setProtectedHeader({ alg: "RS256", typ: "at+jwt", kid })
    .setIssuer(issuer)
    .setSubject(sub)
    .setAudience(audience)
    .setIssuedAt(now)
    .setExpirationTime(exp)
    .setJti(jti)
    .sign(key);
  return { access_token, type, user_id: sub, jti, exp, shard_index: shard, region_key: region, ...extra };
}

/** Revokes each token at the provider (POST /revoke, as the load-test client `basic`), so the set's revoked tokens truly are. */
async function revokeAll(
  provider: Provider,
  basic: string,
  revoked: readonly SeedToken[],
  concurrency: number,
  progress: (done: number, total: number, phase: string) => void,
): Promise<void> {
  await pool(revoked, concurrency, async (t, i) => {
    await provider.call("revocation", "/revoke", {
      method: "POST",
      headers: { authorization: basic },
      body: new URLSearchParams({ token: t.access_token, token_type_hint: "access_token" }),
    });
    progress(i + 1, revoked.length, "revoked");
  });
}

/**
 * The set's `verification` block: the first `sampleSize` tokens of every type introspected
 * and compared with what introspection must say of that type (ACTIVE_EXPECTED). A call that
 * fails is counted among its type's errors, and as incorrect in the total.
 */
async function verifySample(provider: Provider, basic: string, tokens: readonly SeedToken[], sampleSize: number, concurrency: number) {
  const results: Record<string, { expected: boolean; correct: number; incorrect: number; errors: number }> = {};
  const sample = TOKEN_TYPES.flatMap((type) => tokens.filter((t) => t.type === type).slice(0, sampleSize));
  await pool(sample, concurrency, async (t) => {
    const entry = (results[t.type] ??= { expected: ACTIVE_EXPECTED[t.type], correct: 0, incorrect: 0, errors: 0 });
    try {
      const body = (await (
        await provider.call("introspection", "/introspect", {
          method: "POST",
          headers: { authorization: basic },
          body: new URLSearchParams({ token: t.access_token }),
        })
      ).json()) as { active?: unknown };
      if (body.active === entry.expected) entry.correct++;
      else entry.incorrect++;
    } catch {
      entry.errors++;
    }
  });
  const verified = Object.values(results).reduce((a, r) => a + r.correct, 0);
  const incorrect = Object.values(results).reduce((a, r) => a + r.incorrect + r.errors, 0);
  return { verified, incorrect, all_correct: incorrect === 0, results };
}

/** Revocation shards Authrim's load-test seeder spreads jtis over, and each region's range of them. */
const JTI_SHARDS = 32;
const JTI_REGIONS: ReadonlyArray<readonly [region: string, lastShard: number]> = [
  ["enam", 12],
  ["weur", 25],
  ["apac", 31],
];

/**
 * Token `i`'s jti in Authrim's region-aware form, `g2:{region}:{shard}:at_{random}`: Authrim
 * routes a revocation (and its check on introspection) to the store of that region and
 * shard, so a seed set of such ids exercises its sharded revocation stores, where a bare
 * UUID would take its legacy path. Shards go round-robin over 0–31 (the reference seeder
 * draws them at random), the region from the shard's fixed range. Providers that treat
 * the jti as opaque (the local target) are unaffected.
 */
export function regionalJti(i: number): { jti: string; shard: number; region: string } {
  const shard = i % JTI_SHARDS;
  const region = JTI_REGIONS.find(([, last]) => shard <= last)![0];
  const random = base64url(crypto.getRandomValues(new Uint8Array(32)));
  return { jti: `g2:${region}:${shard}:at_${random}`, shard, region };
}
