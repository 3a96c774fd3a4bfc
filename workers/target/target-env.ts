/**
 * The target Worker's bindings and where each piece of its state lives: the signing keys in
 * one Durable Object, refresh-token families, revocations and login state each spread over
 * their shards. Shared by the OIDC endpoints (oidc-app.ts) and the admin API (admin-app.ts),
 * so both reach the same object for the same key.
 */
import { authStateShard, type AuthKind, type AuthState } from "./auth-state.ts";
import type { ConfigHub } from "./config-hub.ts";
import type { AuthStore } from "./auth-store.ts";
import type { RefreshTokens } from "./refresh-tokens.ts";
import type { RequestLedger } from "./request-ledger.ts";
import { revocationShard, type Revocations } from "./revocations.ts";
import type { SigningKeys } from "./signing-keys.ts";

export interface TargetEnv {
  readonly TARGET_DB: D1Database;
  readonly SIGNING_KEYS: DurableObjectNamespace<SigningKeys>;
  readonly REVOCATIONS: DurableObjectNamespace<Revocations>;
  readonly REFRESH_TOKENS: DurableObjectNamespace<RefreshTokens>;
  readonly AUTH_STATE: DurableObjectNamespace<AuthState>;
  readonly CONFIG_HUB: DurableObjectNamespace<ConfigHub>;
  readonly REQUEST_LEDGER: DurableObjectNamespace<RequestLedger>;
  readonly ADMIN_API_SECRET?: string;
  /** "true" turns token exchange on unless the stored setting says otherwise (feature-settings.ts). */
  readonly ENABLE_TOKEN_EXCHANGE?: string;
  /** "false" turns the test endpoints off, as Authrim's default (feature-settings.ts). */
  readonly ENABLE_TEST_ENDPOINTS?: string;
  /** The challenge shards of the worker that issues mail-OTP codes (default 4) and of the one that verifies them (default 16): challenge-shards.ts. */
  readonly MANAGEMENT_CHALLENGE_SHARDS?: string;
  readonly AUTH_CHALLENGE_SHARDS?: string;
  /** Bearer token of POST /app/messages/send; any non-empty token when unset. */
  readonly APP_MESSAGING_TOKEN?: string;
}

export const keysOf = (env: TargetEnv) => env.SIGNING_KEYS.get(env.SIGNING_KEYS.idFromName("signing-keys"));
/** Login state spread over its shards: each record goes to the shard of its (kind, key). */
export function authStore(env: TargetEnv): AuthStore {
  const stub = (kind: AuthKind, key: string) => env.AUTH_STATE.get(env.AUTH_STATE.idFromName(`auth-${authStateShard(kind, key)}`));
  return {
    put: (kind, key, value, ttlS) => stub(kind, key).put(kind, key, value, ttlS),
    get: <T>(kind: AuthKind, key: string) => stub(kind, key).get(kind, key) as Promise<T | null>,
    take: <T>(kind: AuthKind, key: string) => stub(kind, key).take(kind, key) as Promise<T | null>,
    admitCode: (userId, code, ttlS, limit) => stub("user_codes", userId).admitCode(userId, code, ttlS, limit),
    releaseCode: (userId, code) => stub("user_codes", userId).releaseCode(userId, code),
  };
}

export const refreshTokensIn = (env: TargetEnv, shard: number) => env.REFRESH_TOKENS.get(env.REFRESH_TOKENS.idFromName(`refresh-${shard}`));
export const revocationsFor = (env: TargetEnv, jti: string) => env.REVOCATIONS.get(env.REVOCATIONS.idFromName(`revocations-${revocationShard(jti)}`));
