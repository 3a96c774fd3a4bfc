/**
 * Revocations: revoked access-token ids (`jti`), spread over REVOCATION_SHARDS Durable
 * Objects by a hash of the jti, as a real provider shards hot state. An entry counts until
 * the time it was given (the provider's access-token lifetime from the revocation, as on
 * Authrim: a token that outlives it is live again).
 *
 * RPC surface: revoke(), isRevoked().
 */
import { DurableObject } from "cloudflare:workers";
import { fnv1a32 } from "../../core/data/fnv1a.ts";

export const REVOCATION_SHARDS = 8;

/** Which revocation shard holds a jti (FNV-1a, stable across isolates). */
export function revocationShard(jti: string): number {
  return fnv1a32(jti) % REVOCATION_SHARDS;
}

export class Revocations extends DurableObject {
  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS revoked (jti TEXT PRIMARY KEY, expires_at INTEGER NOT NULL)");
  }

  /** Records a revocation until `expiresAtS` (epoch seconds); revoking again keeps it until the new time. */
  async revoke(jti: string, expiresAtS: number): Promise<void> {
    const sql = this.ctx.storage.sql;
    sql.exec("INSERT INTO revoked (jti, expires_at) VALUES (?, ?) ON CONFLICT (jti) DO UPDATE SET expires_at = excluded.expires_at", jti, expiresAtS);
    sql.exec("DELETE FROM revoked WHERE expires_at < ?", Math.floor(Date.now() / 1000) - 60);
  }

  async isRevoked(jti: string): Promise<boolean> {
    return this.ctx.storage.sql.exec("SELECT 1 FROM revoked WHERE jti = ? AND expires_at > ?", jti, Math.floor(Date.now() / 1000)).toArray().length > 0;
  }
}
