/**
 * The last ownership check of each host (D1 `verified_targets`, migration 0009): whether it
 * found a proof, when, and until when that proof stands. The decisions are
 * core/spec/target-ownership.ts's; this module only reads and writes the rows.
 */
import type { ProofMethod, VerificationRecord } from "../../core/spec/target-ownership.ts";

interface Row {
  host: string;
  method: string | null;
  verified_at: number | null;
  expires_at: number | null;
  checked_at: number;
  detail: string;
}

/** The host's last check, or null when none was ever made. */
export async function loadVerification(db: D1Database, host: string): Promise<VerificationRecord | null> {
  const row = await db.prepare("SELECT * FROM verified_targets WHERE host = ?").bind(host).first<Row>();
  if (!row) return null;
  return {
    host: row.host,
    method: row.method === "dns" || row.method === "well-known" ? (row.method as ProofMethod) : null,
    verifiedAtMs: row.verified_at,
    expiresAtMs: row.expires_at,
    checkedAtMs: row.checked_at,
    detail: row.detail,
  };
}

/** Keeps `record` as the host's last check: a check that found nothing replaces an earlier proof. */
export async function saveVerification(db: D1Database, record: VerificationRecord): Promise<void> {
  await db
    .prepare(
      `INSERT INTO verified_targets (host, method, verified_at, expires_at, checked_at, detail) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (host) DO UPDATE SET method = excluded.method, verified_at = excluded.verified_at,
         expires_at = excluded.expires_at, checked_at = excluded.checked_at, detail = excluded.detail`,
    )
    .bind(record.host, record.method, record.verifiedAtMs, record.expiresAtMs, record.checkedAtMs, record.detail)
    .run();
}

/** The hosts whose proof stands at `nowMs`: what a run admitted now may load of those that need proof. */
export async function provenHosts(db: D1Database, nowMs: number): Promise<string[]> {
  const { results } = await db.prepare("SELECT host FROM verified_targets WHERE expires_at > ? ORDER BY host").bind(nowMs).all<{ host: string }>();
  return results.map((r) => r.host);
}
