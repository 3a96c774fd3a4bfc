/**
 * The provider switches besides introspection's (introspection-settings.ts) that decide
 * whether a load test's requests can succeed at all, with Authrim v0.1.15's defaults, so a
 * target set up carelessly refuses what a carelessly set-up Authrim refuses:
 *
 * - token exchange (RFC 8693), OFF by default: `PUT /api/admin/settings/token-exchange
 *   {"enabled": true}` (or `ENABLE_TOKEN_EXCHANGE=true`; the stored setting wins, as
 *   Authrim's KV wins over its env). Off, `/token` answers 400 `unsupported_grant_type`.
 * - Authrim's OAuth config, `PUT /api/admin/settings/oauth-config/<NAME> {"value": N}`, two of
 *   its names: `MAX_CODES_PER_USER` (default 100): a user with that many unredeemed, unexpired
 *   authorization codes gets no more (Authrim's AuthorizationCodeStore; /authorize answers
 *   `error=server_error`); `TOKEN_EXPIRY` (default 3600 s): how long a revocation is kept from
 *   when it is made, as Authrim's /revoke keeps one, whatever the token's own `exp`.
 *
 * - the test endpoints (`/api/admin/test/*`, which the seeders and otp-login use): Authrim
 *   serves them only with `ENABLE_TEST_ENDPOINTS=true` in its environment and answers 403
 *   (`access_denied`, AR050001) otherwise. This target serves them unless its
 *   `ENABLE_TEST_ENDPOINTS` is "false", and stands in for a redeploy with a switch of its own,
 *   `PUT /api/admin/settings/test-endpoints {"enabled": false}` (Authrim has no such route).
 *
 * - the challenge shards of mail-OTP codes, split between the worker that issues them and
 *   the one that verifies them until one count is stored (challenge-shards.ts).
 *
 * Stored in D1's `settings`, read by an isolate at most once a second.
 */
import { challengeShardsOf, type ChallengeShards, type ChallengeShardsEnv } from "./challenge-shards.ts";
import { storeSetting } from "./introspection-settings.ts";

export interface FeatureSettings {
  readonly tokenExchangeEnabled: boolean;
  /** Authrim's OAuth config values, stored or default: TOKEN_EXPIRY is how long a revocation is kept (s). */
  readonly oauthConfig: Readonly<Record<OAuthConfigName, number>>;
  readonly testEndpointsEnabled: boolean;
  readonly challengeShards: ChallengeShards;
}

/** The OAuth config names this target knows, with Authrim's defaults and bounds. */
export const OAUTH_CONFIG = {
  MAX_CODES_PER_USER: { default: 100, min: 1, max: 1_000_000 },
  TOKEN_EXPIRY: { default: 3600, min: 60, max: 86_400 },
} as const;
export type OAuthConfigName = keyof typeof OAUTH_CONFIG;

const READ_EVERY_MS = 1000;
let read: { atMs: number; settings: FeatureSettings } | null = null;

export async function featureSettings(
  db: D1Database,
  env: { readonly ENABLE_TOKEN_EXCHANGE?: string; readonly ENABLE_TEST_ENDPOINTS?: string } & ChallengeShardsEnv,
  nowMs: number,
): Promise<FeatureSettings> {
  if (read && nowMs - read.atMs < READ_EVERY_MS) return read.settings;
  const rows = (
    await db
      .prepare("SELECT name, value FROM settings WHERE name IN ('token_exchange', 'oauth_config', 'test_endpoints', 'challenge_shards')")
      .all<{ name: string; value: string }>()
  ).results;
  const stored = Object.fromEntries(rows.map((r) => [r.name, JSON.parse(r.value) as Record<string, unknown>]));
  const exchange = stored.token_exchange?.enabled;
  const config = (name: OAuthConfigName) => {
    const value = stored.oauth_config?.[name];
    return typeof value === "number" ? value : OAUTH_CONFIG[name].default;
  };
  const oauthConfig = Object.fromEntries(Object.keys(OAUTH_CONFIG).map((name) => [name, config(name as OAuthConfigName)])) as Record<OAuthConfigName, number>;
  const testEndpoints = stored.test_endpoints?.enabled;
  const storedShards = stored.challenge_shards?.shards;
  const settings: FeatureSettings = {
    tokenExchangeEnabled: typeof exchange === "boolean" ? exchange : env.ENABLE_TOKEN_EXCHANGE === "true",
    oauthConfig,
    testEndpointsEnabled: typeof testEndpoints === "boolean" ? testEndpoints : env.ENABLE_TEST_ENDPOINTS !== "false",
    challengeShards: challengeShardsOf(typeof storedShards === "number" ? storedShards : null, env),
  };
  read = { atMs: nowMs, settings };
  return settings;
}

/** Sets one OAuth config name, keeping the others. */
export async function storeOAuthConfig(db: D1Database, name: OAuthConfigName, value: number): Promise<void> {
  const row = await db.prepare("SELECT value FROM settings WHERE name = 'oauth_config'").first<{ value: string }>();
  const current = row ? (JSON.parse(row.value) as Record<string, unknown>) : {};
  await storeFeatureSetting(db, "oauth_config", { ...current, [name]: value });
}

/** Stores a feature setting and forgets what this isolate had read. */
export async function storeFeatureSetting(
  db: D1Database,
  name: "token_exchange" | "oauth_config" | "test_endpoints" | "challenge_shards",
  value: Record<string, unknown>,
): Promise<void> {
  await storeSetting(db, name, value);
  read = null;
}

/** Removes a stored feature setting: its default (or the environment's) holds again. */
export async function forgetFeatureSetting(db: D1Database, name: "challenge_shards"): Promise<void> {
  await db.prepare("DELETE FROM settings WHERE name = ?").bind(name).run();
  read = null;
}
