/**
 * The token mix of Authrim's access-token seed (docs/authrim.md): shares per token type, the
 * counts floor(N × share) with the remainder going to `wrong_client`, exactly as the
 * reference seeder computes them.
 */
import { TOKEN_TYPES, type TokenType } from "../core/data/seed-set.ts";

export const DEFAULT_MIX: Readonly<Record<TokenType, number>> = {
  valid: 60,
  valid_exchanged: 5,
  expired: 12,
  revoked: 12,
  wrong_audience: 6,
  wrong_client: 5,
};

/**
 * Parses `valid=60,expired=12,…` (percentages; omitted types are 0).
 * @example parseMix("valid=90,expired=10") → { valid: 90, expired: 10, … 0 }
 */
export function parseMix(text: string): { ok: true; mix: Record<TokenType, number> } | { ok: false; error: string } {
  const mix = Object.fromEntries(TOKEN_TYPES.map((t) => [t, 0])) as Record<TokenType, number>;
  for (const part of text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [type, value] = part.split("=");
    if (!TOKEN_TYPES.includes(type as TokenType)) return { ok: false, error: `--mix: unknown token type "${type}"; use ${TOKEN_TYPES.join(", ")}` };
    const n = Number(value);
    if (!Number.isFinite(n) || n < 0) return { ok: false, error: `--mix: "${part}" needs a non-negative number` };
    mix[type as TokenType] = n;
  }
  const total = Object.values(mix).reduce((a, b) => a + b, 0);
  if (Math.abs(total - 100) > 1e-9) return { ok: false, error: `--mix: shares add up to ${total}, not 100` };
  return { ok: true, mix };
}

/** Counts per type for `n` tokens: floor(n × share), the remainder to wrong_client. */
export function mixCounts(n: number, mix: Readonly<Record<TokenType, number>> = DEFAULT_MIX): Record<TokenType, number> {
  const counts = Object.fromEntries(TOKEN_TYPES.map((t) => [t, Math.floor((n * mix[t]) / 100)])) as Record<TokenType, number>;
  const assigned = TOKEN_TYPES.filter((t) => t !== "wrong_client").reduce((a, t) => a + counts[t], 0);
  counts.wrong_client = n - assigned;
  return counts;
}
