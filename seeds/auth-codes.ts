/**
 * Authorization codes from an Authrim-style provider, made as its code seeder makes them
 * (docs/authrim.md): a login session per user (`POST /api/admin/test/sessions`), then for each
 * code `GET /authorize?…&prompt=none` with that session as the `authrim_session` cookie and
 * a fresh PKCE S256 verifier (RFC 7636), the code and state taken from the 302's Location.
 * The seed set is `{codes: [{code, code_verifier, redirect_uri, state, nonce, user_id}],
 * metadata}`.
 *
 * Codes are single use and short-lived (60 s on the local target): the set must be used at
 * once. So the checkpoint keeps only the sessions, which last; codes are always made
 * afresh, in the last step of a run.
 */
import { createHash, randomBytes } from "node:crypto";
import type { SeedAuthCode, SeedSession } from "../core/data/seed-set.ts";
import { pool, Provider, SeedError, type ProviderAccess } from "./provider-api.ts";
import { Checkpoint, seedMetadata, type SeedMetadata, type SeedRunOptions } from "./seed-run.ts";
import { makeSessions, SESSION_COOKIE } from "./sessions.ts";
import { userSpread } from "./users.ts";

/** The local target keeps codes for 60 s; Authrim's own code seeder assumes the same. */
export const CODE_LIFETIME_S = 60;

export interface AuthCodeSeedOptions extends Required<ProviderAccess>, SeedRunOptions {
  /** A redirect URI registered for the client. */
  readonly redirectUri: string;
  /** Users (one session each) the codes are spread over (default: min(count, 100)). */
  readonly users?: number;
  readonly scope?: string;
  /** How long the provider keeps a code, for the metadata (default 60 s). */
  readonly codeLifetimeS?: number;
}

export interface AuthCodeSeedSet {
  readonly codes: SeedAuthCode[];
  readonly metadata: SeedMetadata & {
    readonly redirect_uri: string;
    readonly scope: string;
    readonly code_lifetime_s: number;
    /** When the first code expires (the earliest made). */
    readonly expires_at: string;
    readonly single_use: true;
    readonly note: string;
  };
}

/** One code through silent authentication with `session`. */
async function authorizeOnce(provider: Provider, o: AuthCodeSeedOptions, scope: string, session: SeedSession): Promise<SeedAuthCode> {
  const code_verifier = randomBytes(32).toString("base64url");
  const state = randomBytes(12).toString("hex");
  const nonce = randomBytes(12).toString("hex");
  const query = new URLSearchParams({
    response_type: "code",
    client_id: o.clientId,
    redirect_uri: o.redirectUri,
    scope,
    state,
    nonce,
    prompt: "none",
    code_challenge: createHash("sha256").update(code_verifier).digest("base64url"),
    code_challenge_method: "S256",
  });
  const path = `/authorize?${query}`;
  const what = "authorization";
  const init = { redirect: "manual" as const, headers: { cookie: `${SESSION_COOKIE}=${session.session_id}` } };
  const response = await provider.request(what, path, init);
  const location = response.headers.get("location");
  if (response.status !== 302 || location === null) throw await provider.refused(what, "GET", "/authorize", response, "instead of a redirect with a code");
  await response.body?.cancel();
  const params = new URL(location, provider.base).searchParams;
  const error = params.get("error");
  if (error !== null)
    throw new SeedError(
      what,
      `GET /authorize redirected with error=${error}${params.get("error_description") ? ` (${params.get("error_description")})` : ""}`,
      response.status,
    );
  const code = params.get("code");
  if (!code) throw new SeedError(what, "GET /authorize redirected without a code", response.status);
  if (params.get("state") !== state) throw new SeedError(what, "GET /authorize redirected with another state than it was sent", response.status);
  return { code, code_verifier, redirect_uri: o.redirectUri, state, nonce, user_id: session.user_id };
}

/**
 * `count` codes over min(count, `users`) sessions. The sessions are resumable from
 * `o.checkpoint`; the codes are made at the end, all in one go.
 */
export async function seedAuthCodes(o: AuthCodeSeedOptions): Promise<AuthCodeSeedSet> {
  const provider = new Provider(o);
  const users = userSpread(o.count, o.users, 100);
  const scope = o.scope ?? "openid profile email";
  const lifetimeS = o.codeLifetimeS ?? CODE_LIFETIME_S;
  const checkpoint = await Checkpoint.open<SeedSession>(
    o.checkpoint,
    { kind: "auth-codes", baseUrl: provider.base, clientId: o.clientId, slots: users, users },
    o,
    "sessions",
  );
  await provider.checkClient();
  const sessions = await makeSessions(provider, checkpoint, users, 24 * 3600, o);
  // Every session is on disk before the codes are made: a failure there resumes with them all.
  await checkpoint.save();

  const firstMadeMs = Date.now();
  const codes = new Array<SeedAuthCode>(o.count);
  let done = 0;
  await pool([...codes.keys()], o.concurrency ?? 20, async (i) => {
    codes[i] = await authorizeOnce(provider, o, scope, sessions[i % sessions.length]!);
    o.onProgress?.(++done, o.count, "codes");
  });
  await checkpoint.remove();
  return {
    codes,
    metadata: seedMetadata("auth-codes", provider, o, codes.length, {
      redirect_uri: o.redirectUri,
      scope,
      code_lifetime_s: lifetimeS,
      expires_at: new Date(firstMadeMs + lifetimeS * 1000).toISOString(),
      single_use: true as const,
      note: `authorization codes are single use and expire ${lifetimeS} s after they were made (local target): start the load test at once`,
    }),
  };
}
