/**
 * The spent nonces of dashboard view links (migration 0011): a link opens one browser
 * session, once. A nonce is kept until its link would have expired, then swept, so the
 * table holds at most the links of the last VIEW_LINK_TTL_S.
 */

/** Marks a link's nonce spent; false when it already was (the link was opened before). */
export async function spendViewLink(db: D1Database, nonce: string, expiresAtS: number, nowS: number): Promise<boolean> {
  const [, inserted] = await db.batch([
    db.prepare("DELETE FROM spent_view_links WHERE expires_at < ?").bind(nowS),
    db.prepare("INSERT INTO spent_view_links (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING").bind(nonce, expiresAtS),
  ]);
  return (inserted?.meta.changes ?? 0) === 1;
}
