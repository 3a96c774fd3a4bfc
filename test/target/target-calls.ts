/**
 * Calls into the target Worker under test (inside workerd, through its default export) and
 * the things most of its tests make first: a client, a user, the signing key, an access
 * token signed as Authrim's seeder signs it.
 */
import { exports } from "cloudflare:workers";
import { importPKCS8, SignJWT } from "jose";

export const ADMIN = "admin-test-secret";
export const BASE = "http://target.test";
/** Authrim's issuer: the base URL with http: → https:. */
export const ISSUER = "https://target.test";

export function call(path: string, init: RequestInit = {}): Promise<Response> {
  return (exports as unknown as { default: Fetcher }).default.fetch(new Request(BASE + path, init));
}

export const admin = (path: string, init: RequestInit = {}) =>
  call(path, { ...init, headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json", ...(init.headers as Record<string, string>) } });

export const basic = (id: string, secret: string) => `Basic ${btoa(`${id}:${secret}`)}`;

export interface TestClient {
  readonly client_id: string;
  readonly client_secret: string;
}

/** A client created through the admin API with `fields` added to a minimal body. */
export async function newClient(fields: Record<string, unknown> = {}, redirectUri = "https://app.test/cb"): Promise<TestClient> {
  const response = await admin("/api/admin/clients", {
    method: "POST",
    body: JSON.stringify({ client_name: "test client", redirect_uris: [redirectUri], scope: "openid profile email", ...fields }),
  });
  if (response.status !== 201) throw new Error(`client creation answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { client: TestClient }).client;
}

export async function newUser(email: string): Promise<{ id: string; email: string }> {
  const response = await admin("/api/admin/users", { method: "POST", body: JSON.stringify({ email, email_verified: true }) });
  if (response.status !== 201) throw new Error(`user creation answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { user: { id: string; email: string } }).user;
}

/** The current signing key (created first when there is none), as seeders fetch it. */
export async function signingKey(): Promise<{ kid: string; key: CryptoKey }> {
  let answer = await admin("/api/admin/test/signing-key");
  if (answer.status === 404) {
    await (await admin("/api/admin/signing-keys/rotate", { method: "POST" })).text();
    answer = await admin("/api/admin/test/signing-key");
  }
  const { kid, privatePEM } = (await answer.json()) as { kid: string; privatePEM: string };
  return { kid, key: await importPKCS8(privatePEM, "RS256") };
}

/** An access token for `sub` of `clientId`, audience the issuer unless `aud` says otherwise. */
export function accessToken(
  signer: { kid: string; key: CryptoKey },
  claims: { sub: string; client_id: string; aud?: string | string[]; exp?: number },
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ client_id: claims.client_id, scope: "openid profile email" })
    .setProtectedHeader({ alg: "RS256", typ: "at+jwt", kid: signer.kid })
    .setIssuer(ISSUER)
    .setSubject(claims.sub)
    .setAudience(claims.aud ?? ISSUER)
    .setIssuedAt(now)
    .setExpirationTime(claims.exp ?? now + 3600)
    .setJti(crypto.randomUUID())
    .sign(signer.key);
}

/** A PKCE S256 challenge for a verifier (RFC 7636 §4.2). */
export async function s256Challenge(verifier: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  return btoa(String.fromCharCode(...digest))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}
