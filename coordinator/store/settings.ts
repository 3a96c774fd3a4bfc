/**
 * Deployment settings kept in D1 (`settings`, migration 0007): secrets a deployment makes
 * for itself on first use and keeps across redeploys and rotations of its API token. Today
 * the seed URL key (`seed_url_key`, coordinator/http/signed-url.ts) and the key of target
 * ownership tokens (`target_verification_key`, coordinator/http/target-verification.ts).
 */
import { base64url } from "../../core/data/web-crypto.ts";

/** The settings that hold a generated secret: each its own, so revoking one leaves the others. */
export type GeneratedSecretName = "seed_url_key" | "target_verification_key";

/**
 * The secret `name`, generated on first use: 32 random bytes (base64url), made by whichever
 * request comes first. A racing request's INSERT is ignored and both read back the one row,
 * so nothing is ever signed with a key that was then lost.
 */
export async function generatedSecret(db: D1Database, name: GeneratedSecretName, nowMs: number): Promise<string> {
  const fresh = base64url(crypto.getRandomValues(new Uint8Array(32)));
  await db.prepare("INSERT OR IGNORE INTO settings (name, value, created_at) VALUES (?, ?, ?)").bind(name, fresh, nowMs).run();
  const row = await db.prepare("SELECT value FROM settings WHERE name = ?").bind(name).first<{ value: string }>();
  if (!row) throw new Error(`the generated secret ${name} could not be stored in D1 (settings)`);
  return row.value;
}
