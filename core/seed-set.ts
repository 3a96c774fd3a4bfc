/**
 * Seed sets: the token files of the reference suite (AUTHRIM.md), validated and summarised.
 *
 * Two shapes are accepted: Authrim's `access_tokens.json` object (`{tokens: [...],
 * metadata: {...}}`) and a bare JSON array of JWT strings (its userinfo cloud script's
 * `TOKEN_URL` form). A summary (counts by type, total) is what listings show — never the
 * tokens, which are credentials.
 */
import type { Problem } from "./run-spec.ts";

export const TOKEN_TYPES = ["valid", "valid_exchanged", "expired", "revoked", "wrong_audience", "wrong_client"] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

export interface SeedToken {
  readonly access_token: string;
  readonly type: TokenType;
  readonly user_id?: string;
  readonly jti?: string;
  readonly exp?: number;
  readonly [extra: string]: unknown;
}

export type SeedFormat = "authrim" | "array";

export interface SeedSummary {
  readonly format: SeedFormat;
  readonly total: number;
  readonly counts: Readonly<Partial<Record<TokenType, number>>>;
}

export type SeedParse = { ok: true; summary: SeedSummary; tokens: readonly SeedToken[] } | { ok: false; problems: Problem[] };

/** Seed names: lower-case letters, digits, `.`, `_`, `-`; used in R2 keys and URLs. */
export const SEED_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Validates a parsed seed document, reporting every problem (up to 20) with its path. */
export function parseSeedSet(doc: unknown): SeedParse {
  const problems: Problem[] = [];
  const push = (field: string, detail: string) => {
    if (problems.length < 20) problems.push({ field, detail });
  };
  let tokens: SeedToken[] = [];
  let format: SeedFormat;
  if (Array.isArray(doc)) {
    format = "array";
    doc.forEach((t, i) => {
      if (typeof t !== "string" || !JWT.test(t)) push(`[${i}]`, "must be a JWT string");
      else tokens.push({ access_token: t, type: "valid" });
    });
  } else if (typeof doc === "object" && doc !== null && Array.isArray((doc as { tokens?: unknown }).tokens)) {
    format = "authrim";
    (doc as { tokens: unknown[] }).tokens.forEach((t, i) => {
      const token = t as Partial<SeedToken> | null;
      if (typeof token !== "object" || token === null) return push(`tokens[${i}]`, "must be an object");
      if (typeof token.access_token !== "string" || !JWT.test(token.access_token)) push(`tokens[${i}].access_token`, "must be a JWT string");
      if (!TOKEN_TYPES.includes(token.type as TokenType)) push(`tokens[${i}].type`, `must be one of ${TOKEN_TYPES.join(", ")}`);
      tokens.push(token as SeedToken);
    });
    const metadata = (doc as { metadata?: unknown }).metadata;
    if (metadata !== undefined && (typeof metadata !== "object" || metadata === null)) push("metadata", "must be an object");
  } else {
    return { ok: false, problems: [{ field: "(body)", detail: 'expected {"tokens": [...], "metadata": {...}} or a JSON array of JWT strings' }] };
  }
  if (tokens.length === 0 && problems.length === 0) push(format === "array" ? "(body)" : "tokens", "the seed set is empty");
  if (problems.length) return { ok: false, problems };
  const counts: Partial<Record<TokenType, number>> = {};
  for (const t of tokens) counts[t.type] = (counts[t.type] ?? 0) + 1;
  return { ok: true, summary: { format, total: tokens.length, counts }, tokens };
}

/** The bare-array form of a set: the access tokens of one type (default: valid). */
export function tokensOfType(tokens: readonly SeedToken[], type: TokenType = "valid"): string[] {
  return tokens.filter((t) => t.type === type).map((t) => t.access_token);
}
