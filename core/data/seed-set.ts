/**
 * Seed sets: the data files of the reference suite (AUTHRIM.md), validated and summarised.
 *
 * Five kinds, each accepted as an object with one list (the form edgeload's seeders write,
 * with a `metadata` block) or as a bare JSON array of the same entries:
 *
 * | kind           | object form                         | entry                                              |
 * |----------------|-------------------------------------|----------------------------------------------------|
 * | access-tokens  | `{tokens, metadata}` (Authrim's)    | `{access_token, type, user_id, jti, exp, …}`; a bare array holds JWT strings (valid) |
 * | users          | `{users, emails, metadata}`         | `{email, userId}`                                  |
 * | refresh-tokens | `{refresh_tokens, metadata}`        | `{token, jti, rtv, generation, shard_index, user_id, client_id, client_secret}` |
 * | sessions       | `{sessions, metadata}`              | `{session_id, user_id}`                            |
 * | auth-codes     | `{codes, metadata}`                 | `{code, code_verifier, redirect_uri, state, nonce, user_id, shard_index}` |
 *
 * A summary (kind, counts, total) is what listings show — never the entries, which are
 * credentials.
 */
import type { Problem } from "../spec/input-problem.ts";

/**
 * What turns Authrim's test endpoints (`/api/admin/test/*`) on, which seeders and the mail-OTP
 * login need: they are off by default (403 `access_denied`).
 */
export const TEST_ENDPOINTS_FIX = "set ENABLE_TEST_ENDPOINTS=true in Authrim's environment (ar-management) and deploy or restart it";

/**
 * What aligns Authrim's mail-OTP challenge shards. The worker that issues codes
 * (ar-management) and the one that verifies them (ar-auth) each route a code to
 * `fnv1a32(otpSessionId) % shards` with their own count, unless one is stored in KV: Authrim's
 * setup gives ar-auth 16 and leaves ar-management at 4, so a verify finds its code about one
 * login in four and answers `interaction_required` otherwise.
 */
export const CHALLENGE_SHARDS_FIX =
  'store one challenge-shard count for every worker (it wins over each worker\'s AUTHRIM_CHALLENGE_SHARDS): PUT /api/admin/settings/challenge-shards {"shards": 16}';

/**
 * How many codes a check verifies when it cannot read one stored count: with the counts
 * split, a code is found when both pick the same shard, at most half the time (one count a
 * multiple of the other; 1 in 4 for Authrim's 4 and 16), so seven found by chance is under
 * 1 % (0.5^7 = 0.8 %).
 */
export const CHALLENGE_SPLIT_CODES = 7;

/**
 * How many of its own codes a check verifies, given where Authrim's management worker says
 * its challenge-shard count comes from (`GET /api/admin/settings/challenge-shards`): one when
 * it is stored for every worker (`kv`), else CHALLENGE_SPLIT_CODES.
 */
export function codesToVerify(source: unknown): number {
  return source === "kv" ? 1 : CHALLENGE_SPLIT_CODES;
}

export const TOKEN_TYPES = ["valid", "valid_exchanged", "expired", "revoked", "wrong_audience", "wrong_client"] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

/** What introspection must answer (`active`) for each token type (AUTHRIM.md). */
export const ACTIVE_EXPECTED: Readonly<Record<TokenType, boolean>> = {
  valid: true,
  valid_exchanged: true,
  expired: false,
  revoked: false,
  wrong_audience: false,
  wrong_client: false,
};

/** Per-type correctness rates of introspection, named as in the reference suite. */
export const TYPE_RATE_METRIC: Readonly<Record<TokenType, string>> = {
  wrong_audience: "wrong_audience_rejected",
  wrong_client: "wrong_client_rejected",
  valid_exchanged: "exchanged_token_correct",
  valid: "valid_accepted",
  expired: "expired_rejected",
  revoked: "revoked_rejected",
};

/** The claims Authrim's introspect suite checks on every active answer (its claim_integrity). */
export const ACTIVE_ANSWER_CLAIMS = ["scope", "aud", "sub", "iss", "client_id"] as const;

/**
 * Whether an active introspection answer carries what it must: every claim of
 * ACTIVE_ANSWER_CLAIMS, and for a token-exchange token (RFC 8693) the acting party (`act`
 * with its `sub`) and the `resource` it was exchanged for. A provider that answers
 * `active: true` but drops these passes `active_correct` and fails this.
 */
export function activeAnswerComplete(answer: Readonly<Record<string, unknown>>, type: TokenType): boolean {
  if (!ACTIVE_ANSWER_CLAIMS.every((claim) => answer[claim] !== undefined && answer[claim] !== null)) return false;
  if (type !== "valid_exchanged") return true;
  const act = answer.act as { sub?: unknown } | null | undefined;
  return typeof act === "object" && act !== null && typeof act.sub === "string" && typeof answer.resource === "string" && answer.resource !== "";
}

export const SEED_KINDS = ["access-tokens", "users", "refresh-tokens", "sessions", "auth-codes"] as const;
export type SeedKind = (typeof SEED_KINDS)[number];

export interface SeedToken {
  readonly access_token: string;
  readonly type: TokenType;
  readonly user_id?: string;
  readonly jti?: string;
  readonly exp?: number;
  readonly [extra: string]: unknown;
}

export interface SeedUser {
  readonly email: string;
  readonly userId: string;
}

export interface SeedRefreshToken {
  readonly token: string;
  readonly user_id: string;
  readonly client_id: string;
  readonly client_secret?: string;
  readonly jti?: string;
  readonly rtv?: number;
  readonly generation?: number;
  readonly shard_index?: number;
}

export interface SeedSession {
  readonly session_id: string;
  readonly user_id: string;
}

export interface SeedAuthCode {
  readonly code: string;
  readonly code_verifier: string;
  readonly redirect_uri: string;
  readonly state?: string;
  readonly nonce?: string;
  readonly user_id?: string;
  readonly shard_index?: number;
}

export type SeedData =
  | { readonly kind: "access-tokens"; readonly entries: readonly SeedToken[] }
  | { readonly kind: "users"; readonly entries: readonly SeedUser[] }
  | { readonly kind: "refresh-tokens"; readonly entries: readonly SeedRefreshToken[] }
  | { readonly kind: "sessions"; readonly entries: readonly SeedSession[] }
  | { readonly kind: "auth-codes"; readonly entries: readonly SeedAuthCode[] };

/** `authrim` and `array` are the two access-token shapes; other kinds use `object`/`array`. */
export type SeedFormat = "authrim" | "array" | "object";

export interface SeedSummary {
  readonly kind: SeedKind;
  readonly format: SeedFormat;
  readonly total: number;
  /** Entries by token type (access tokens only). */
  readonly counts: Readonly<Partial<Record<TokenType, number>>>;
}

export type SeedParse = { ok: true; summary: SeedSummary; data: SeedData } | { ok: false; problems: Problem[] };

/** Seed names: lower-case letters, digits, `.`, `_`, `-`; used in R2 keys and URLs. */
export const SEED_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** Where a seed set lives in the R2 bucket. */
export const seedObjectKey = (name: string) => `seeds/${name}.json`;

const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

type FieldCheck = (v: unknown) => boolean;
const str: FieldCheck = (v) => typeof v === "string" && v.length > 0;
const optStr: FieldCheck = (v) => v === undefined || typeof v === "string";
const optInt: FieldCheck = (v) => v === undefined || Number.isInteger(v);

/** Per kind: the list's key in the object form and the entry's required/optional fields. */
const ENTRY_FIELDS: Record<Exclude<SeedKind, "access-tokens">, { list: string; fields: Record<string, [FieldCheck, string]> }> = {
  users: { list: "users", fields: { email: [str, "an email address"], userId: [str, "the user's id"] } },
  "refresh-tokens": {
    list: "refresh_tokens",
    fields: {
      token: [str, "the refresh token"],
      user_id: [str, "the user's id"],
      client_id: [str, "the client's id"],
      client_secret: [optStr, "a string"],
      jti: [optStr, "a string"],
      rtv: [optInt, "an integer"],
      generation: [optInt, "an integer"],
      shard_index: [optInt, "an integer"],
    },
  },
  sessions: { list: "sessions", fields: { session_id: [str, "the session id"], user_id: [str, "the user's id"] } },
  "auth-codes": {
    list: "codes",
    fields: {
      code: [str, "the authorization code"],
      code_verifier: [str, "the PKCE verifier"],
      redirect_uri: [str, "the redirect URI"],
      state: [optStr, "a string"],
      nonce: [optStr, "a string"],
      user_id: [optStr, "a string"],
      shard_index: [optInt, "an integer"],
    },
  },
};

/** Which kind a bare array holds, judged by its first entry. */
function kindOfArray(first: unknown): SeedKind | null {
  if (typeof first === "string") return "access-tokens";
  if (typeof first !== "object" || first === null) return null;
  if ("access_token" in first) return "access-tokens";
  if ("session_id" in first) return "sessions";
  if ("code_verifier" in first) return "auth-codes";
  if ("token" in first) return "refresh-tokens";
  if ("email" in first) return "users";
  return null;
}

/** Which kind an object form holds, by its list key. */
function kindOfObject(doc: object): SeedKind | null {
  if (Array.isArray((doc as { tokens?: unknown }).tokens)) return "access-tokens";
  for (const [kind, { list }] of Object.entries(ENTRY_FIELDS)) {
    if (Array.isArray((doc as Record<string, unknown>)[list])) return kind as SeedKind;
  }
  return null;
}

/** Validates a parsed seed document of any kind, reporting every problem (up to 20) with its path. */
export function parseSeedSet(doc: unknown): SeedParse {
  const problems: Problem[] = [];
  const push = (field: string, detail: string) => {
    if (problems.length < 20) problems.push({ field, detail });
  };
  const isArray = Array.isArray(doc);
  const kind = isArray ? kindOfArray(doc[0]) : typeof doc === "object" && doc !== null ? kindOfObject(doc) : null;
  if (isArray && doc.length === 0) return { ok: false, problems: [{ field: "(body)", detail: "the seed set is empty" }] };
  if (!kind) {
    return {
      ok: false,
      problems: [
        {
          field: "(body)",
          detail:
            'expected a seed set: {"tokens": [...]}, {"users": [...]}, {"refresh_tokens": [...]}, {"sessions": [...]}, {"codes": [...]} or a bare JSON array of such entries (or of JWT strings)',
        },
      ],
    };
  }
  if (!isArray) {
    const metadata = (doc as { metadata?: unknown }).metadata;
    if (metadata !== undefined && (typeof metadata !== "object" || metadata === null)) push("metadata", "must be an object");
  }

  if (kind === "access-tokens") {
    const tokens: SeedToken[] = [];
    if (isArray) {
      doc.forEach((t, i) => {
        if (typeof t !== "string" || !JWT.test(t)) push(`[${i}]`, "must be a JWT string");
        else tokens.push({ access_token: t, type: "valid" });
      });
    } else {
      (doc as { tokens: unknown[] }).tokens.forEach((t, i) => {
        const token = t as Partial<SeedToken> | null;
        if (typeof token !== "object" || token === null) return push(`tokens[${i}]`, "must be an object");
        if (typeof token.access_token !== "string" || !JWT.test(token.access_token)) push(`tokens[${i}].access_token`, "must be a JWT string");
        if (!TOKEN_TYPES.includes(token.type as TokenType)) push(`tokens[${i}].type`, `must be one of ${TOKEN_TYPES.join(", ")}`);
        tokens.push(token as SeedToken);
      });
    }
    if (tokens.length === 0 && problems.length === 0) push(isArray ? "(body)" : "tokens", "the seed set is empty");
    if (problems.length) return { ok: false, problems };
    const counts: Partial<Record<TokenType, number>> = {};
    for (const t of tokens) counts[t.type] = (counts[t.type] ?? 0) + 1;
    return { ok: true, summary: { kind, format: isArray ? "array" : "authrim", total: tokens.length, counts }, data: { kind, entries: tokens } };
  }

  const { list, fields } = ENTRY_FIELDS[kind];
  const entries = (isArray ? doc : (doc as Record<string, unknown[]>)[list]!) as unknown[];
  const at = (i: number) => (isArray ? `[${i}]` : `${list}[${i}]`);
  entries.forEach((entry, i) => {
    if (typeof entry !== "object" || entry === null) return push(at(i), "must be an object");
    for (const [field, [ok, what]] of Object.entries(fields)) {
      if (!ok((entry as Record<string, unknown>)[field])) push(`${at(i)}.${field}`, `must be ${what}`);
    }
  });
  if (entries.length === 0 && problems.length === 0) push(isArray ? "(body)" : list, "the seed set is empty");
  if (problems.length) return { ok: false, problems };
  return {
    ok: true,
    summary: { kind, format: isArray ? "array" : "object", total: entries.length, counts: {} },
    data: { kind, entries } as SeedData,
  };
}

/** The bare-array form of a token set: the access tokens of one type (default: valid). */
export function tokensOfType(tokens: readonly SeedToken[], type: TokenType = "valid"): string[] {
  return tokens.filter((t) => t.type === type).map((t) => t.access_token);
}
