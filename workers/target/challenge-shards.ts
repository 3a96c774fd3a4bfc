/**
 * Authrim's challenge shards, as a real deployment has them: the worker that issues mail-OTP
 * codes (ar-management, through its test API) and the one that verifies them (ar-auth) each
 * route a code to a ChallengeStore shard by `fnv1a32(otpSessionId) % shards`, each with its
 * own count: the KV setting `challenge_shards` when stored (it wins in every worker), else the
 * worker's AUTHRIM_CHALLENGE_SHARDS, else 4 (Authrim v0.1.15, ar-lib-core
 * utils/challenge-sharding.ts). Authrim's setup gives ar-auth 16 and leaves ar-management at
 * the default, so out of the box a verify finds its code only when both counts pick the same
 * shard — about one login in four — and answers `interaction_required` otherwise.
 *
 * This target keeps the two counts apart too: MANAGEMENT_CHALLENGE_SHARDS (default 4) and
 * AUTH_CHALLENGE_SHARDS (default 16), until `PUT /api/admin/settings/challenge-shards
 * {"shards": N}` stores one count for both, as Authrim's KV does. `GET` answers as Authrim's
 * management worker does: its own count, and where it came from.
 */
import { fnv1a32 } from "../../core/data/fnv1a.ts";

/** Authrim's default when neither KV nor the environment says (DEFAULT_CHALLENGE_SHARD_COUNT). */
export const DEFAULT_CHALLENGE_SHARDS = 4;
/** What Authrim's setup writes into ar-auth's AUTHRIM_CHALLENGE_SHARDS. */
export const AUTH_SETUP_CHALLENGE_SHARDS = 16;

export interface ChallengeShardsEnv {
  readonly MANAGEMENT_CHALLENGE_SHARDS?: string;
  readonly AUTH_CHALLENGE_SHARDS?: string;
}

/** Each worker's count, and where the management worker's came from (what GET shows). */
export interface ChallengeShards {
  readonly management: number;
  readonly auth: number;
  readonly source: "kv" | "env" | "default";
  readonly stored: number | null;
}

const positive = (text: string | undefined) => {
  const n = Number(text);
  return Number.isInteger(n) && n > 0 ? n : null;
};

export function challengeShardsOf(stored: number | null, env: ChallengeShardsEnv): ChallengeShards {
  const managementEnv = positive(env.MANAGEMENT_CHALLENGE_SHARDS);
  if (stored !== null) return { management: stored, auth: stored, source: "kv", stored };
  return {
    management: managementEnv ?? DEFAULT_CHALLENGE_SHARDS,
    auth: positive(env.AUTH_CHALLENGE_SHARDS) ?? AUTH_SETUP_CHALLENGE_SHARDS,
    source: managementEnv !== null ? "env" : "default",
    stored: null,
  };
}

/** The shard a worker with `shards` routes an OTP session's code to (Authrim: fnv1a32 of the id). */
export function challengeShard(otpSessionId: string, shards: number): number {
  return fnv1a32(otpSessionId) % shards;
}
