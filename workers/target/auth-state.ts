/**
 * AuthState: short-lived login state, sharded over AUTH_STATE_SHARDS Durable Objects by a
 * hash of (kind, key): login sessions (`authrim_session` cookie), pre-login OTP sessions
 * mail OTP codes (by OTP session, the `authrim_otp_session` cookie), authorization codes,
 * the sign-in and consent challenges of the browser flow (by challenge id: sign-in-flow.ts),
 * and each user's live authorization codes (in the user's shard, for Authrim's per-user
 * code limit). Every record expires; `take` reads and deletes in one step, so a code can
 * be used once.
 *
 * RPC surface: put(), get(), take(), admitCode(), releaseCode().
 */
import { DurableObject } from "cloudflare:workers";
import { revocationShard } from "./revocations.ts";

export const AUTH_STATE_SHARDS = 8;
export type AuthKind = "session" | "email_code" | "code" | "user_codes" | "challenge";

export function authStateShard(kind: AuthKind, key: string): number {
  return revocationShard(`${kind}:${key}`) % AUTH_STATE_SHARDS;
}

export class AuthState extends DurableObject {
  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS records (kind TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (kind, key))",
    );
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS user_codes (user_id TEXT NOT NULL, code TEXT NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (user_id, code))",
    );
  }

  /** Counts a new code for a user unless the user already has `limit` unexpired, unredeemed ones. */
  async admitCode(userId: string, code: string, ttlS: number, limit: number): Promise<boolean> {
    const now = Math.floor(Date.now() / 1000);
    return this.ctx.storage.transactionSync(() => {
      const sql = this.ctx.storage.sql;
      sql.exec("DELETE FROM user_codes WHERE user_id = ? AND expires_at < ?", userId, now);
      const live = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM user_codes WHERE user_id = ?", userId).one().n;
      if (live >= limit) return false;
      sql.exec("INSERT INTO user_codes (user_id, code, expires_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", userId, code, now + ttlS);
      return true;
    });
  }

  async releaseCode(userId: string, code: string): Promise<void> {
    this.ctx.storage.sql.exec("DELETE FROM user_codes WHERE user_id = ? AND code = ?", userId, code);
  }

  async put(kind: AuthKind, key: string, value: unknown, ttlS: number): Promise<void> {
    const now = Math.floor(Date.now() / 1000);
    const sql = this.ctx.storage.sql;
    sql.exec(
      "INSERT INTO records (kind, key, value, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at",
      kind,
      key,
      JSON.stringify(value),
      now + ttlS,
    );
    sql.exec("DELETE FROM records WHERE expires_at < ?", now - 60);
  }

  async get<T>(kind: AuthKind, key: string): Promise<T | null> {
    const row = this.ctx.storage.sql
      .exec<{ value: string }>("SELECT value FROM records WHERE kind = ? AND key = ? AND expires_at >= ?", kind, key, Math.floor(Date.now() / 1000))
      .toArray()[0];
    return row ? (JSON.parse(row.value) as T) : null;
  }

  /** Reads and deletes a record atomically: the second take of the same key gets null. */
  async take<T>(kind: AuthKind, key: string): Promise<T | null> {
    return this.ctx.storage.transactionSync(() => {
      const sql = this.ctx.storage.sql;
      const row = sql.exec<{ value: string; expires_at: number }>("SELECT value, expires_at FROM records WHERE kind = ? AND key = ?", kind, key).toArray()[0];
      if (!row) return null;
      sql.exec("DELETE FROM records WHERE kind = ? AND key = ?", kind, key);
      return row.expires_at >= Math.floor(Date.now() / 1000) ? (JSON.parse(row.value) as T) : null;
    });
  }
}
