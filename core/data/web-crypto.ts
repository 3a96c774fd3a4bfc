/**
 * WebCrypto helpers shared by the coordinator, the scenarios and the target Worker: hashing,
 * base64url and comparing secrets without leaking their length or content through timing.
 * Plain Web APIs (crypto.subtle, TextEncoder), so they live in core and run in Node too.
 */

const encoder = new TextEncoder();
type Bytes = string | ArrayBuffer | Uint8Array<ArrayBuffer>;
const bytesOf = (data: Bytes) => (typeof data === "string" ? encoder.encode(data) : data);

export function sha256(data: Bytes): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", bytesOf(data));
}

export async function sha256Hex(data: Bytes): Promise<string> {
  return hex(await sha256(data));
}

/** Bytes as lowercase hex, two digits a byte. */
export function hex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = "";
  for (const b of view) out += b.toString(16).padStart(2, "0");
  return out;
}

/** `byteCount` random bytes as hex: generated secrets and ids. */
export function randomHex(byteCount: number): string {
  return hex(crypto.getRandomValues(new Uint8Array(byteCount)));
}

/** HMAC-SHA256 of `text` under `secret`, as hex. */
export async function hmacSha256Hex(secret: string, text: string): Promise<string> {
  return hex(await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(text)));
}

/** base64url without padding (RFC 4648 §5), as JOSE and PKCE use it. */
export function base64url(data: ArrayBuffer | Uint8Array): string {
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** base64url (padded or not) back to bytes; null when it is not base64url. */
export function fromBase64Url(text: string): Uint8Array | null {
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

export function hmacKey(secret: string | Uint8Array<ArrayBuffer> | ArrayBuffer): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", bytesOf(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

/**
 * A key of its own for one purpose, derived from a secret (HMAC of a fixed label): signed
 * dashboard links get one from the API token, so that signature cannot stand for the
 * token, and rotating the token invalidates every link.
 */
export async function derivedHmacKey(secret: string, label: string): Promise<CryptoKey> {
  return hmacKey(await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(label)));
}

/** The PKCE S256 code challenge of a verifier: base64url(SHA-256(verifier)), RFC 7636 §4.2. */
export async function s256(verifier: string): Promise<string> {
  return base64url(await sha256(verifier));
}

/**
 * Whether a presented secret equals the expected one, in constant time: both are hashed
 * first so lengths never differ, then compared with timingSafeEqual. An empty expected
 * secret matches nothing.
 */
export async function secretsEqual(presented: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([sha256(presented), sha256(expected)]);
  // timingSafeEqual is a Workers extension of SubtleCrypto (absent from Node's types).
  const subtle = crypto.subtle as SubtleCrypto & { timingSafeEqual(a: ArrayBuffer, b: ArrayBuffer): boolean };
  return subtle.timingSafeEqual(a, b) && expected.length > 0;
}

/**
 * Authrim's shard of a user's refresh-token family for a client: the first 4 bytes of
 * SHA-256(`userId:clientId`) as an int32, absolute, modulo `shardCount`. Authrim keeps one
 * family per user and client, in that shard's rotator; its seeder names the shard in the
 * token's jti (`v{generation}_{shard}_…`), and so do edgeload's seeder and the local target.
 */
export async function refreshFamilyShard(userId: string, clientId: string, shardCount: number): Promise<number> {
  const hash = new DataView(await sha256(`${userId}:${clientId}`));
  return Math.abs(hash.getInt32(0)) % shardCount;
}
