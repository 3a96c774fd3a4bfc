/**
 * SigningKeys: one Durable Object holding the target's RS256 signing keys.
 *
 * Like Authrim, the first key is created by `POST /api/admin/signing-keys/rotate`, and
 * seeders fetch the current private key from `/api/admin/test/signing-key` to sign access
 * tokens themselves (header `typ: "at+jwt"`). Rotation keeps earlier keys in the JWKS so
 * tokens signed before a rotation still verify.
 *
 * RPC surface: rotate(), current(), jwks().
 */
import { DurableObject } from "cloudflare:workers";
import { exportJWK, exportPKCS8, generateKeyPair, type JWK } from "jose";

export interface SigningKey {
  readonly kid: string;
  readonly privatePEM: string;
  readonly publicJWK: JWK;
  readonly createdAt: number;
}

/** How many keys the JWKS keeps (the current one and the ones before it). */
const KEYS_KEPT = 3;

export class SigningKeys extends DurableObject {
  /** Creates a new current key; returns its kid. */
  async rotate(): Promise<{ kid: string }> {
    const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true, modulusLength: 2048 });
    const kid = crypto.randomUUID();
    const publicJWK = { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" };
    const key: SigningKey = { kid, privatePEM: await exportPKCS8(privateKey), publicJWK, createdAt: Date.now() };
    const keys = [key, ...this.#keys()].slice(0, KEYS_KEPT);
    this.ctx.storage.kv.put("keys", keys);
    return { kid };
  }

  async current(): Promise<SigningKey | null> {
    return this.#keys()[0] ?? null;
  }

  async jwks(): Promise<{ keys: JWK[] }> {
    return { keys: this.#keys().map((k) => k.publicJWK) };
  }

  #keys(): SigningKey[] {
    return this.ctx.storage.kv.get<SigningKey[]>("keys") ?? [];
  }
}
