/** Deployment settings kept in D1 (`settings`, migration 0007): today the generated seed URL key. */

/**
 * The stored seed URL key, storing `fresh` first if there is none. A racing request's
 * INSERT is ignored and both read back the one row.
 */
export async function seedUrlKeyRow(db: D1Database, fresh: string, nowMs: number): Promise<string | null> {
  await db.prepare("INSERT OR IGNORE INTO settings (name, value, created_at) VALUES ('seed_url_key', ?, ?)").bind(fresh, nowMs).run();
  const row = await db.prepare("SELECT value FROM settings WHERE name = 'seed_url_key'").first<{ value: string }>();
  return row?.value ?? null;
}
