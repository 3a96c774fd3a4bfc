/**
 * WebCrypto helpers shared by the coordinator and the target Worker: hashing, base64url
 * and comparing secrets without leaking their length or content through timing.
 */

const encoder = new TextEncoder();
const bytesOf = (data: string | ArrayBuffer | Uint8Array) => (typeof data === "string" ? encoder.encode(data) : data);

export function sha256(data: string | ArrayBuffer | Uint8Array): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", bytesOf(data));
}

export async function sha256Hex(data: string | ArrayBuffer | Uint8Array): Promise<string> {
  return [...new Uint8Array(await sha256(data))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** base64url without padding (RFC 4648 §5), as JOSE and PKCE use it. */
export function base64url(data: ArrayBuffer | Uint8Array): string {
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * Whether a presented secret equals the expected one, in constant time: both are hashed
 * first so lengths never differ, then compared with timingSafeEqual. An empty expected
 * secret matches nothing.
 */
export async function secretsEqual(presented: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([sha256(presented), sha256(expected)]);
  return crypto.subtle.timingSafeEqual(a, b) && expected.length > 0;
}
