/**
 * RefreshTokens: refresh-token families, sharded over REFRESH_SHARDS Durable Objects.
 *
 * Each family lives in one shard, so rotation and reuse detection are one transaction:
 * presenting a token that was already rotated revokes the whole family (RFC 6819 §5.2.2.3,
 * as OAuth 2.1 asks), and every later use of any token of the family fails.
 *
 * As on Authrim v0.1.15, a user has one family per client: a family registered or issued
 * for a user replaces the user's earlier one, whose tokens then fail as stolen ones and
 * revoke the user's family with them (Authrim's rotator: "Token theft detected (JTI
 * mismatch)"). So a user's families all live in the shard of `userId:clientId`
 * (refreshFamilyShard), the shard a token names: `rt_<shard>_<random>` for tokens issued
 * here, the jti's `v{generation}_{shard}_…` for JWTs registered through the admin API;
 * a token naming no shard is placed by a hash of its text.
 *
 * RPC surface: register(), rotate().
 */
import { DurableObject } from "cloudflare:workers";
import { fromBase64Url } from "../../core/data/web-crypto.ts";
import { revocationShard } from "./revocations.ts";

export const REFRESH_SHARDS = 8;

export function refreshShard(token: string): number {
  const named = /^rt_(\d+)_/.exec(token)?.[1] ?? /^v\d+_(\d+)_/.exec(jwtId(token) ?? "")?.[1];
  return (named === undefined ? revocationShard(token) : Number(named)) % REFRESH_SHARDS;
}

/** A JWT's `jti`, read without verifying it (as Authrim reads a registered token's); null for anything else. */
function jwtId(token: string): string | null {
  const payload = token.split(".")[1];
  const bytes = payload === undefined ? null : fromBase64Url(payload);
  if (!bytes) return null;
  try {
    const jti = (JSON.parse(new TextDecoder().decode(bytes)) as { jti?: unknown }).jti;
    return typeof jti === "string" ? jti : null;
  } catch {
    return null;
  }
}

export interface RefreshGrant {
  readonly userId: string;
  readonly clientId: string;
  readonly scope: string;
}

export type RotateResult =
  | { ok: true; grant: RefreshGrant; next: string; generation: number }
  | { ok: false; reason: "unknown" | "expired" | "reused" | "superseded" | "family_revoked" | "wrong_client" };

export class RefreshTokens extends DurableObject {
  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS tokens (
      token TEXT PRIMARY KEY, family TEXT NOT NULL, generation INTEGER NOT NULL, used INTEGER NOT NULL DEFAULT 0,
      user_id TEXT NOT NULL, client_id TEXT NOT NULL, scope TEXT NOT NULL, expires_at INTEGER NOT NULL)`);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS revoked_families (family TEXT PRIMARY KEY)");
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS user_families (
      client_id TEXT NOT NULL, user_id TEXT NOT NULL, family TEXT NOT NULL, PRIMARY KEY (client_id, user_id))`);
  }

  /** Registers a token as the first of a new family, the user's for this client from now on. Idempotent. */
  async register(token: string, grant: RefreshGrant, ttlS: number): Promise<void> {
    const sql = this.ctx.storage.sql;
    const family = crypto.randomUUID();
    this.ctx.storage.transactionSync(() => {
      const inserted = sql.exec(
        "INSERT INTO tokens (token, family, generation, user_id, client_id, scope, expires_at) VALUES (?, ?, 1, ?, ?, ?, ?) ON CONFLICT (token) DO NOTHING",
        token,
        family,
        grant.userId,
        grant.clientId,
        grant.scope,
        Math.floor(Date.now() / 1000) + ttlS,
      ).rowsWritten;
      if (inserted === 0) return;
      sql.exec(
        "INSERT INTO user_families (client_id, user_id, family) VALUES (?, ?, ?) ON CONFLICT (client_id, user_id) DO UPDATE SET family = excluded.family",
        grant.clientId,
        grant.userId,
        family,
      );
    });
  }

  /** Uses `token` once: returns a successor in the same family, or why not. */
  async rotate(token: string, clientId: string, shard: number): Promise<RotateResult> {
    const sql = this.ctx.storage.sql;
    return this.ctx.storage.transactionSync((): RotateResult => {
      const row = sql
        .exec<{ family: string; generation: number; used: number; user_id: string; client_id: string; scope: string; expires_at: number }>(
          "SELECT family, generation, used, user_id, client_id, scope, expires_at FROM tokens WHERE token = ?",
          token,
        )
        .toArray()[0];
      if (!row) return { ok: false, reason: "unknown" };
      if (row.client_id !== clientId) return { ok: false, reason: "wrong_client" };
      if (sql.exec("SELECT 1 FROM revoked_families WHERE family = ?", row.family).toArray().length) return { ok: false, reason: "family_revoked" };
      const current = sql
        .exec<{ family: string }>("SELECT family FROM user_families WHERE client_id = ? AND user_id = ?", row.client_id, row.user_id)
        .toArray()[0]?.family;
      if (current !== undefined && current !== row.family) {
        // A family since replaced by a newer one for this user and client: Authrim takes the
        // token for a stolen one and revokes the user's family with it. (No row at all: a
        // family stored before families were kept per user, still the user's.)
        for (const family of [row.family, current]) sql.exec("INSERT INTO revoked_families (family) VALUES (?) ON CONFLICT DO NOTHING", family);
        return { ok: false, reason: "superseded" };
      }
      if (row.used) {
        sql.exec("INSERT INTO revoked_families (family) VALUES (?) ON CONFLICT DO NOTHING", row.family);
        return { ok: false, reason: "reused" };
      }
      if (row.expires_at < Math.floor(Date.now() / 1000)) return { ok: false, reason: "expired" };
      sql.exec("UPDATE tokens SET used = 1 WHERE token = ?", token);
      const next = `rt_${shard}_${crypto.randomUUID().replace(/-/g, "")}`;
      sql.exec(
        "INSERT INTO tokens (token, family, generation, user_id, client_id, scope, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        next,
        row.family,
        row.generation + 1,
        row.user_id,
        row.client_id,
        row.scope,
        row.expires_at,
      );
      return { ok: true, grant: { userId: row.user_id, clientId: row.client_id, scope: row.scope }, next, generation: row.generation + 1 };
    });
  }
}
