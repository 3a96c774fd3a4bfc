/**
 * Refresh tokens on an Authrim-style provider, as its refresh seeder registers them
 * (docs/authrim.md): each one the first token of its own family, on a user of its own
 * (Authrim keeps one family per user and client), a JWT signed with the provider's own key
 * (Authrim v0.1.15 registers nothing else: an opaque token answers 400 "Invalid JWT
 * format") whose `jti` is `v{generation}_{shard}_{random}`, registered for the load-test
 * client through `POST /api/admin/test/tokens {token, userId, clientId, scope, ttl}`.
 * The seed set is `{refresh_tokens: [{token, jti, rtv, generation, shard_index, user_id,
 * client_id, client_secret}], metadata}`; like Authrim's, each entry carries the client
 * secret, so a k6 virtual user can rotate its family with HTTP Basic alone.
 *
 * The generation comes from `GET /api/admin/settings/refresh-token-sharding` (generation 1
 * and 8 shards where a provider does not have that endpoint), the shard index from
 * Authrim's own placement: SHA-256 of `userId:clientId`.
 */
import { randomBytes } from "node:crypto";
import { SignJWT } from "jose";
import type { SeedRefreshToken } from "../core/data/seed-set.ts";
import { refreshFamilyShard, sha256Hex } from "../core/data/web-crypto.ts";
import { Provider, type ProviderAccess, SeedError } from "./provider-api.ts";
import { Checkpoint, seedMetadata, type SeedMetadata, type SeedRunOptions } from "./seed-run.ts";
import { ensureUsers } from "./users.ts";

export interface RefreshTokenSeedOptions extends Required<ProviderAccess>, SeedRunOptions {
  /**
   * The set's name. Its families belong to users of its own (`rt-<name>-00001@…`): Authrim
   * keeps one family per user and client, so a set made over another set's users would
   * replace that set's families, and every token of it would then fail as a stolen one.
   */
  readonly setName?: string;
  /** Users the families are spread over: one per family, the default; fewer is refused (above). */
  readonly users?: number;
  readonly scope?: string;
  /** Token lifetime (default 30 days). */
  readonly ttlSeconds?: number;
}

export interface RefreshTokenSeedSet {
  readonly refresh_tokens: SeedRefreshToken[];
  readonly metadata: SeedMetadata & { readonly scope: string; readonly generation: number; readonly shard_count: number };
}

interface Sharding {
  readonly generation: number;
  readonly shardCount: number;
}

/**
 * The client's refresh-token sharding: this target answers `{generation, shardCount}`,
 * Authrim `{config: {currentGeneration, currentShardCount}}`; a provider without the
 * endpoint (404) gets Authrim's fallback.
 */
async function sharding(provider: Provider, clientId: string): Promise<Sharding> {
  const what = "refresh-token sharding settings";
  const path = `/api/admin/settings/refresh-token-sharding?clientId=${encodeURIComponent(clientId)}`;
  const fallback = { generation: 1, shardCount: 8 };
  const response = await provider.adminRequest(what, path);
  if (response.status === 404) {
    await response.body?.cancel();
    return fallback;
  }
  if (!response.ok) throw await provider.refused(what, "GET", path, response);
  const body = (await response.json().catch(() => ({}))) as {
    generation?: unknown;
    shardCount?: unknown;
    config?: { currentGeneration?: unknown; currentShardCount?: unknown };
  };
  const generation = body.generation ?? body.config?.currentGeneration;
  const shardCount = body.shardCount ?? body.config?.currentShardCount;
  return {
    generation: Number.isInteger(generation) ? (generation as number) : fallback.generation,
    shardCount: Number.isInteger(shardCount) && (shardCount as number) > 0 ? (shardCount as number) : fallback.shardCount,
  };
}

/**
 * Why `count` families cannot go over `users` users, or null: Authrim keeps one family per
 * user and client, so a token registered for a user replaces the user's earlier family,
 * whose token would then fail as a stolen one and revoke the family.
 */
export function refreshUsersProblem(count: number, users: number | undefined): string | null {
  if (users === undefined || users >= count) return null;
  return `${count} refresh-token families over ${users} users: Authrim keeps one family per user and client, so a token registered for a user replaces the user's earlier family, whose token then fails as a stolen one and revokes the family; leave --users out (one user per family) or ask for ${count}`;
}

/** The users of set `name`: `rt-<name>`, or `rt-<hash>` for a name too long for an email's local part (64). */
async function refreshUserGroup(name: string): Promise<string> {
  return name.length <= 48 ? `rt-${name}` : `rt-${(await sha256Hex(name)).slice(0, 16)}`;
}

/** `count` refresh-token families for the load-test client, resumable from `o.checkpoint`. */
export async function seedRefreshTokens(o: RefreshTokenSeedOptions): Promise<RefreshTokenSeedSet> {
  const tooFewUsers = refreshUsersProblem(o.count, o.users);
  if (tooFewUsers) throw new SeedError("refresh-token families", tooFewUsers);
  const provider = new Provider(o);
  const group = await refreshUserGroup(o.setName ?? "refresh-tokens");
  const scope = o.scope ?? "openid profile email";
  const ttl = o.ttlSeconds ?? 30 * 86_400;
  const checkpoint = await Checkpoint.open<SeedRefreshToken>(
    o.checkpoint,
    { kind: "refresh-tokens", baseUrl: provider.base, clientId: o.clientId, slots: o.count, users: o.count },
    o,
    "tokens",
  );
  await provider.checkClient();
  const { generation, shardCount } = await sharding(provider, o.clientId);
  const signer = await provider.signer();
  const accounts = await ensureUsers(provider, checkpoint.missing(), o, group);

  const tokens = await checkpoint.fill(o, "tokens", async (slot) => {
    const user = accounts.get(slot)!;
    // Authrim's placement: the shard of `userId:clientId`, named in the jti v{generation}_{shard}_{random}.
    const shard = await refreshFamilyShard(user.userId, o.clientId, shardCount);
    const jti = `v${generation}_${shard}_${randomBytes(16).toString("base64url")}`;
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ scope, client_id: o.clientId, rtv: 1 })
      .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: signer.kid })
      .setIssuer(signer.issuer)
      .setSubject(user.userId)
      .setAudience(o.clientId)
      .setIssuedAt(now)
      .setExpirationTime(now + ttl)
      .setJti(jti)
      .sign(signer.key);
    const answer = await provider.adminJson<{ version?: unknown }>("refresh-token registration", "/api/admin/test/tokens", {
      method: "POST",
      body: { token, userId: user.userId, clientId: o.clientId, scope, ttl },
    });
    return {
      token,
      jti,
      rtv: Number.isInteger(answer.version) ? (answer.version as number) : 1,
      generation,
      shard_index: shard,
      user_id: user.userId,
      client_id: o.clientId,
      client_secret: o.clientSecret,
    };
  });
  await checkpoint.remove();
  return { refresh_tokens: tokens, metadata: seedMetadata("refresh-tokens", provider, o, tokens.length, { scope, generation, shard_count: shardCount }) };
}
