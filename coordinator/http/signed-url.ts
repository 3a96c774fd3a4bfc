/**
 * Signed, expiring seed URLs: whoever holds one may GET the seed set without the API token
 * (k6 reads it as `TOKEN_URL`). The signature is an HMAC-SHA256 over the seed name, the
 * served format, the token type and the expiry, so none of them can be changed; it is
 * checked with `crypto.subtle.verify`, which compares in constant time.
 *
 * The key is the secret SEED_URL_KEY when set, else one generated on first use and kept in
 * D1 (`settings`), so it survives redeploys and rotating EDGELOAD_API_TOKEN: a TOKEN_URL
 * handed to k6 stays valid until it expires. Rotating SEED_URL_KEY (or deleting the
 * `seed_url_key` row) is how every issued URL is revoked at once.
 */
import { base64url, fromBase64Url, hmacKey } from "../../core/data/web-crypto.ts";
import { generatedSecret } from "../store/settings.ts";

export interface SeedUrlFields {
  readonly name: string;
  /** "object" serves the stored document; "array" a bare array of one token type. */
  readonly format: "object" | "array";
  readonly type: string;
  /** Expiry, epoch seconds. */
  readonly exp: number;
}

const encoder = new TextEncoder();

export async function seedUrlKey(env: { SEED_URL_KEY?: string; DB: D1Database }): Promise<CryptoKey> {
  if (env.SEED_URL_KEY) return hmacKey(env.SEED_URL_KEY);
  return hmacKey(await generatedSecret(env.DB, "seed_url_key", Date.now()));
}

/** The exact bytes signed: unambiguous because names cannot contain "\n". */
function message(f: SeedUrlFields): Uint8Array {
  return encoder.encode(`edgeload-seed-v1\n${f.name}\n${f.format}\n${f.type}\n${f.exp}`);
}

export async function signSeedUrl(key: CryptoKey, origin: string, f: SeedUrlFields): Promise<string> {
  const sig = base64url(await crypto.subtle.sign("HMAC", key, message(f)));
  const params = new URLSearchParams({ exp: String(f.exp), sig });
  if (f.format === "array") {
    params.set("format", "array");
    params.set("type", f.type);
  }
  return `${origin}/seeds/${encodeURIComponent(f.name)}?${params}`;
}

export type SeedUrlCheck = { ok: true; fields: SeedUrlFields } | { ok: false; reason: "expired" | "bad_signature" | "malformed" };

/** Checks a signed URL's query for `name` at `nowS` (epoch seconds). */
export async function verifySeedUrl(key: CryptoKey, name: string, query: URLSearchParams, nowS: number): Promise<SeedUrlCheck> {
  const exp = Number(query.get("exp"));
  const sig = fromBase64Url(query.get("sig") ?? "");
  const format = query.get("format") === "array" ? "array" : "object";
  const type = format === "array" ? (query.get("type") ?? "valid") : "valid";
  if (!Number.isInteger(exp) || !sig || sig.length === 0) return { ok: false, reason: "malformed" };
  const fields: SeedUrlFields = { name, format, type, exp };
  if (!(await crypto.subtle.verify("HMAC", key, sig, message(fields)))) return { ok: false, reason: "bad_signature" };
  if (exp < nowS) return { ok: false, reason: "expired" };
  return { ok: true, fields };
}
