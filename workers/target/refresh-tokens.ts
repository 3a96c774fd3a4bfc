/**
 * RefreshTokens: refresh-token families, sharded over REFRESH_SHARDS Durable Objects.
 *
 * Each family lives in one shard, so rotation and reuse detection are one transaction:
 * presenting a token that was already rotated revokes the whole family (RFC 6819 §5.2.2.3,
 * as OAuth 2.1 asks), and every later use of any token of the family fails. Tokens issued
 * here are `rt_<shard>_<random>` so rotation stays in the family's shard; tokens
 * registered through the admin API are placed by a hash of their text.
 *
 * RPC surface: register(), rotate().
 */
import { DurableObject } from "cloudflare:workers";
import { revocationShard } from "./revocations.ts";

export const REFRESH_SHARDS = 8;

export function refreshShard(token: string): number {
  const m = /^rt_(\d+)_/.exec(token);
  return m ? Number(m[1]) % REFRESH_SHARDS : revocationShard(token) % REFRESH_SHARDS;
}

export interface RefreshGrant {
  readonly userId: string;
  readonly clientId: string;
  readonly scope: string;
}

export type RotateResult =
  | { ok: true; grant: RefreshGrant; next: string; generation: number }
  | { ok: false; reason: "unknown" | "expired" | "reused" | "family_revoked" | "wrong_client" };

export class RefreshTokens extends DurableObject {
  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS tokens (
      token TEXT PRIMARY KEY, family TEXT NOT NULL, generation INTEGER NOT NULL, used INTEGER NOT NULL DEFAULT 0,
      user_id TEXT NOT NULL, client_id TEXT NOT NULL, scope TEXT NOT NULL, expires_at INTEGER NOT NULL)`);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS revoked_families (family TEXT PRIMARY KEY)");
  }

  /** Registers a token as the first of a new family (admin API). Idempotent. */
  async register(token: string, grant: RefreshGrant, ttlS: number): Promise<void> {
    this.ctx.storage.sql.exec(
      "INSERT INTO tokens (token, family, generation, user_id, client_id, scope, expires_at) VALUES (?, ?, 1, ?, ?, ?, ?) ON CONFLICT (token) DO NOTHING",
      token,
      crypto.randomUUID(),
      grant.userId,
      grant.clientId,
      grant.scope,
      Math.floor(Date.now() / 1000) + ttlS,
    );
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
