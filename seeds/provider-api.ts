/**
 * Talking to an Authrim-style provider while seeding (docs/authrim.md; the admin routes
 * are listed in workers/target/README.md): one client for its admin API (Bearer ADMIN_API_SECRET) and its OAuth
 * endpoints (HTTP Basic client authentication), the one error every seeder raises, and the
 * bounded-concurrency pool the seeders share.
 *
 * Errors name what was being done, the method, the path and the status, e.g.
 * "user creation: POST /api/admin/users answered 401: {"error":"unauthorized"}", so an
 * operator knows which credential or endpoint to look at.
 */
import { importPKCS8 } from "jose";
import { TEST_ENDPOINTS_FIX } from "../core/data/seed-set.ts";

/** Why seeding stopped: the call that failed and, when the provider answered, its status. */
export class SeedError extends Error {
  /** What was being done, e.g. "user creation". */
  readonly call: string;
  /** The provider's HTTP status; null when it was not reached or did not answer as expected. */
  readonly status: number | null;

  constructor(call: string, detail: string, status: number | null = null) {
    super(`${call}: ${detail}`);
    this.call = call;
    this.status = status;
  }
}

/**
 * Runs `work` over `items` with at most `concurrency` at a time, in order of start. After
 * the first failure no new item starts; the pool waits for those under way (so whatever
 * they made is known to the caller) and then rejects with that first error.
 */
export async function pool<T>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | null = null;
  const lane = async () => {
    while (failure === null && next < items.length) {
      const i = next++;
      try {
        await work(items[i]!, i);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, lane));
  if (failure !== null) throw (failure as { error: unknown }).error;
}

/** Where the provider is and the credentials a seeder may need. */
export interface ProviderAccess {
  readonly baseUrl: string;
  /** The provider's ADMIN_API_SECRET. */
  readonly adminSecret: string;
  /** The load-test client (seeders that only create users do without it). */
  readonly clientId?: string;
  readonly clientSecret?: string;
}

/** JSON bodies are serialised by `admin`; other bodies go as they are. */
type AdminInit = Omit<RequestInit, "body"> & { readonly body?: unknown };

export class Provider {
  /** The base URL without trailing slashes. */
  readonly base: string;
  readonly clientId: string | undefined;
  readonly #access: ProviderAccess;

  constructor(access: ProviderAccess) {
    this.base = access.baseUrl.replace(/\/+$/, "");
    this.clientId = access.clientId;
    this.#access = access;
  }

  /** `Authorization: Basic …` for the load-test client (RFC 6749 §2.3.1). */
  get basic(): string {
    const { clientId, clientSecret } = this.#access;
    if (clientId === undefined || clientSecret === undefined) throw new Error("this seeder needs the client id and secret");
    return `Basic ${btoa(`${clientId}:${clientSecret}`)}`;
  }

  /** Sends a request; only a provider that cannot be reached is an error here. */
  async request(what: string, path: string, init: RequestInit = {}): Promise<Response> {
    try {
      return await fetch(this.base + path, { ...init, signal: AbortSignal.timeout(30_000) });
    } catch (error) {
      throw new SeedError(what, `cannot reach ${this.base}${path} (${(error as Error).message})`);
    }
  }

  /** A SeedError for an answer the seeder cannot use, naming the call, method, path and status. */
  async refused(what: string, method: string, path: string, response: Response, why = ""): Promise<SeedError> {
    const body = (await response.text().catch(() => "")).slice(0, 200);
    return new SeedError(what, `${method} ${path} answered ${response.status}${why ? ` ${why}` : ""}${body ? `: ${body}` : ""}`, response.status);
  }

  /** Sends a request and requires a 2xx answer. */
  async call(what: string, path: string, init: RequestInit = {}): Promise<Response> {
    const response = await this.request(what, path, init);
    if (!response.ok) throw await this.refused(what, init.method ?? "GET", path, response, testEndpointsAdvice(path, response.status));
    return response;
  }

  /** An admin API call (Bearer ADMIN_API_SECRET, JSON body) that must answer 2xx. */
  admin(what: string, path: string, init: AdminInit = {}): Promise<Response> {
    return this.call(what, path, this.#adminInit(init));
  }

  /** An admin API call whose answer is checked by the caller (e.g. 409 or 404 mean something). */
  adminRequest(what: string, path: string, init: AdminInit = {}): Promise<Response> {
    return this.request(what, path, this.#adminInit(init));
  }

  /** An admin call's JSON answer, or a SeedError when it is not JSON. */
  async adminJson<T>(what: string, path: string, init: AdminInit = {}): Promise<T> {
    return json<T>(what, await this.admin(what, path, init));
  }

  /**
   * Checks the load-test client's credentials before anything is made: a refresh grant with
   * a token that cannot exist answers 400 (`invalid_grant`) to an authenticated client and
   * 401 (`invalid_client`) otherwise. A seed set for a client that cannot log in is useless.
   */
  async checkClient(): Promise<void> {
    const init = {
      method: "POST",
      headers: { authorization: this.basic },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: "edgeload-client-check" }),
    };
    const response = await this.request("client authentication", "/token", init);
    if (response.status === 401) throw await this.refused("client authentication", "POST", "/token", response, "(check the client id and secret)");
    await response.body?.cancel();
  }

  /**
   * What a seeder signs tokens with, as Authrim's seeders do: the issuer from discovery and
   * the provider's current private key from its admin test API.
   */
  async signer(): Promise<{ issuer: string; kid: string; key: CryptoKey }> {
    const issuer = ((await (await this.call("discovery", "/.well-known/openid-configuration")).json()) as { issuer: string }).issuer;
    const keyInfo = await this.adminJson<{ kid: string; privatePEM: string }>(
      "signing key (POST /api/admin/signing-keys/rotate creates the first one)",
      "/api/admin/test/signing-key",
    );
    return { issuer, kid: keyInfo.kid, key: await importPKCS8(keyInfo.privatePEM, "RS256") };
  }

  #adminInit(init: AdminInit): RequestInit {
    const { body, ...rest } = init;
    return {
      ...rest,
      headers: { authorization: `Bearer ${this.#access.adminSecret}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    };
  }
}

/**
 * Authrim answers its test endpoints (`/api/admin/test/*`, which the seeders use) 403 (or 404
 * before v0.1.15) unless `ENABLE_TEST_ENDPOINTS=true`, its default being off.
 */
export function testEndpointsAdvice(path: string, status: number): string {
  if (!path.startsWith("/api/admin/test/") || (status !== 403 && status !== 404)) return "";
  return `(the provider's test endpoints are off: ${TEST_ENDPOINTS_FIX})`;
}

/** A response's JSON body, or a SeedError naming the call when it is not JSON. */
export async function json<T>(what: string, response: Response): Promise<T> {
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new SeedError(what, `${response.url} answered ${response.status} with something that is not JSON: ${text.slice(0, 200)}`, response.status);
  }
}
