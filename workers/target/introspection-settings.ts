/**
 * Authrim's introspection settings, so that edgeload's seeders and scenarios meet the same
 * behaviour here as against a real Authrim (v0.1.15, mgmt/introspect.ts there):
 *
 * - strict validation, OFF by default: only with it does /introspect check a token's
 *   audience and client; without it `wrong_audience` and `wrong_client` tokens answer
 *   `active: true`. The local stack turns it on, as an operator must on Authrim.
 * - a positive-answer cache, ON by default for 60 s, keyed by jti and consulted before the
 *   strict checks (a hit rechecks only expiry and revocation): a token introspected while
 *   strict validation was off stays active for up to a minute after it is turned on.
 *
 * Settings live in D1 (`settings`); an isolate reads them at most once a second.
 */

export interface IntrospectionSettings {
  readonly strictValidation: boolean;
  readonly cache: { readonly enabled: boolean; readonly ttlSeconds: number };
}

export const DEFAULT_SETTINGS: IntrospectionSettings = { strictValidation: false, cache: { enabled: true, ttlSeconds: 60 } };

const READ_EVERY_MS = 1000;
let read: { atMs: number; settings: IntrospectionSettings } | null = null;

export async function introspectionSettings(db: D1Database, nowMs: number): Promise<IntrospectionSettings> {
  if (read && nowMs - read.atMs < READ_EVERY_MS) return read.settings;
  const rows = (
    await db
      .prepare("SELECT name, value FROM settings WHERE name IN ('introspection_validation', 'introspection_cache')")
      .all<{ name: string; value: string }>()
  ).results;
  const stored = Object.fromEntries(rows.map((r) => [r.name, JSON.parse(r.value) as Record<string, unknown>]));
  const validation = stored.introspection_validation ?? {};
  const cache = stored.introspection_cache ?? {};
  const settings: IntrospectionSettings = {
    strictValidation: typeof validation.strictValidation === "boolean" ? validation.strictValidation : DEFAULT_SETTINGS.strictValidation,
    cache: {
      enabled: typeof cache.enabled === "boolean" ? cache.enabled : DEFAULT_SETTINGS.cache.enabled,
      ttlSeconds: typeof cache.ttlSeconds === "number" && cache.ttlSeconds > 0 ? cache.ttlSeconds : DEFAULT_SETTINGS.cache.ttlSeconds,
    },
  };
  read = { atMs: nowMs, settings };
  return settings;
}

/** The rows of the `settings` table: these two, and feature-settings.ts's. */
export type SettingName = "introspection_validation" | "introspection_cache" | "token_exchange" | "oauth_config" | "test_endpoints" | "challenge_shards";

/** Stores one setting and forgets what this isolate had read. */
export async function storeSetting(db: D1Database, name: SettingName, value: Record<string, unknown>): Promise<void> {
  await db
    .prepare("INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value")
    .bind(name, JSON.stringify(value))
    .run();
  read = null;
}

/** Positive answers by jti: the claims answered and until when (epoch ms). */
const positive = new Map<string, { readonly claims: Record<string, unknown>; readonly untilMs: number }>();

export function cachedAnswer(jti: string, nowMs: number): Record<string, unknown> | null {
  const hit = positive.get(jti);
  if (!hit) return null;
  if (hit.untilMs <= nowMs) {
    positive.delete(jti);
    return null;
  }
  return hit.claims;
}

export function cacheAnswer(jti: string, claims: Record<string, unknown>, nowMs: number, ttlSeconds: number): void {
  positive.set(jti, { claims, untilMs: nowMs + ttlSeconds * 1000 });
}
