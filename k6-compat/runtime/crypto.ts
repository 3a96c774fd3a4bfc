/**
 * `k6/crypto`: k6's synchronous hashes, HMACs and random bytes. WebCrypto's digests are
 * async, so these use `node:crypto` (Node in the init context, workerd's nodejs_compat in
 * the script's isolate), whose createHash and createHmac are synchronous as k6's are.
 * Output encodings as k6 names them: "hex", "base64", "base64url", "base64rawurl", "binary".
 */
import { createHash, createHmac, getRandomValues } from "node:crypto";
import { hex } from "../../core/data/web-crypto.ts";

type Input = string | ArrayBuffer | ArrayBufferView;
type Encoding = "hex" | "base64" | "base64url" | "base64rawurl" | "binary";

const ALGORITHMS = {
  md4: "md4",
  md5: "md5",
  sha1: "sha1",
  sha256: "sha256",
  sha384: "sha384",
  sha512: "sha512",
  sha512_224: "sha512-224",
  sha512_256: "sha512-256",
  ripemd160: "ripemd160",
} as const;
type Algorithm = keyof typeof ALGORITHMS;

function bytesOf(input: Input): Uint8Array {
  if (typeof input === "string") return new TextEncoder().encode(input);
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
}

function encode(digest: Uint8Array, encoding: Encoding): string | ArrayBuffer {
  const b64 = () => btoa(String.fromCharCode(...digest));
  switch (encoding) {
    case "hex":
      return hex(digest);
    case "base64":
      return b64();
    case "base64url":
      return b64().replace(/\+/g, "-").replace(/\//g, "_");
    case "base64rawurl":
      return b64().replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    case "binary":
      return digest.slice().buffer;
    default:
      throw new Error(`k6/crypto: unknown output encoding "${String(encoding)}" (hex, base64, base64url, base64rawurl, binary)`);
  }
}

function algorithm(name: string): string {
  const a = ALGORITHMS[name as Algorithm];
  if (!a) throw new Error(`k6/crypto: unknown algorithm "${name}" (${Object.keys(ALGORITHMS).join(", ")})`);
  return a;
}

/**
 * k6's Hasher: `digest()` may be called again, and `update()` after it goes on from what
 * was hashed (Go's hash.Sum does not finish the hash; node's digest() does, and refuses a
 * second call). So the input is kept and hashed afresh at each digest (vu-modules.test.ts).
 */
function hasher(start: () => { update(data: Uint8Array): unknown; digest(): Uint8Array }) {
  const chunks: Uint8Array[] = [];
  return {
    update(input: Input) {
      chunks.push(bytesOf(input).slice());
      return this;
    },
    digest(encoding: Encoding) {
      const h = start();
      for (const chunk of chunks) h.update(chunk);
      return encode(new Uint8Array(h.digest()), encoding);
    },
  };
}

const hash = (name: Algorithm) => (input: Input, encoding: Encoding) =>
  encode(new Uint8Array(createHash(algorithm(name)).update(bytesOf(input)).digest()), encoding);

export const crypto = {
  md4: hash("md4"),
  md5: hash("md5"),
  sha1: hash("sha1"),
  sha256: hash("sha256"),
  sha384: hash("sha384"),
  sha512: hash("sha512"),
  sha512_224: hash("sha512_224"),
  sha512_256: hash("sha512_256"),
  ripemd160: hash("ripemd160"),
  hmac: (name: string, secret: Input, data: Input, encoding: Encoding) =>
    encode(new Uint8Array(createHmac(algorithm(name), bytesOf(secret)).update(bytesOf(data)).digest()), encoding),
  randomBytes: (size: number) => getRandomValues(new Uint8Array(size)).buffer,
  createHash: (name: string) => hasher(() => createHash(algorithm(name))),
  createHMAC(name: string, secret: Input) {
    const key = bytesOf(secret).slice();
    return hasher(() => createHmac(algorithm(name), key));
  },
};
