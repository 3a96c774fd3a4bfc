/**
 * An authorization request on its way from `/authorize` to its code, shared by `/authorize`
 * (login.ts) and the provider's own pages (sign-in-flow.ts): the challenges that keep the
 * request while the user signs in and consents, and the one way a code is issued for it.
 *
 * As on Authrim, `/authorize` keeps the request under a challenge id and sends the browser
 * to `/login?challenge_id=…` (no session) or `/consent?challenge_id=…` (a client that does
 * not skip consent); the pages post the id back. A challenge lives CHALLENGE_TTL_S and is
 * used once: a successful sign-in or a consent answer takes it.
 */
import type { AuthStore, CodeRecord } from "./auth-store.ts";

export const CODE_TTL_S = 60;
/** How long a user has to sign in or answer the consent screen (Authrim keeps its challenges 10 minutes). */
export const CHALLENGE_TTL_S = 600;

/** What a code is issued for, once the user is known: the validated request. */
export type PendingAuthorization = Omit<CodeRecord, "user_id"> & { readonly state: string | null };

/** The sign-in page's challenge: the original /authorize query, to go back to once signed in (as Authrim does). */
export interface LoginChallenge {
  readonly type: "login";
  readonly query: string;
  readonly client_name: string;
}

/** The consent screen's challenge: the validated request and who signed in. */
export interface ConsentChallenge {
  readonly type: "consent";
  readonly request: PendingAuthorization;
  readonly user_id: string;
  readonly client_name: string;
}

export type Challenge = LoginChallenge | ConsentChallenge;

/** A challenge of `type`, or null when it is unknown, expired or of the other type. */
export async function readChallenge<T extends Challenge["type"]>(
  store: AuthStore,
  id: string,
  type: T,
  take = false,
): Promise<Extract<Challenge, { type: T }> | null> {
  const found = take ? await store.take<Challenge>("challenge", id) : await store.get<Challenge>("challenge", id);
  return found?.type === type ? (found as Extract<Challenge, { type: T }>) : null;
}

/** Keeps a challenge; its id for the page's `challenge_id`. */
export async function keepChallenge(store: AuthStore, challenge: Challenge): Promise<string> {
  const id = crypto.randomUUID();
  await store.put("challenge", id, challenge, CHALLENGE_TTL_S);
  return id;
}

export function redirect(location: string, extraHeaders: Record<string, string> = {}): Response {
  return new Response(null, { status: 302, headers: { location, "cache-control": "no-store", ...extraHeaders } });
}

/** `uri` with `params` set in its query (null values left out). */
export function withParams(uri: string, params: Record<string, string | null>): string {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v);
  return url.href;
}

const randomCode = () => crypto.randomUUID().replace(/-/g, "") + crypto.randomUUID().replace(/-/g, "").slice(0, 16);

/**
 * The redirect back to the client with a new code for `userId` (or `server_error` when the
 * user holds `maxCodesPerUser` live codes), always with the request's state.
 */
export async function issueCode(store: AuthStore, maxCodesPerUser: number, request: PendingAuthorization, userId: string): Promise<Response> {
  const back = (params: Record<string, string>) => redirect(withParams(request.redirect_uri, { ...params, state: request.state }));
  const code = randomCode();
  if (!(await store.admitCode(userId, code, CODE_TTL_S, maxCodesPerUser))) {
    // Authrim's code store throws "Too many authorization codes for this user"; /authorize says only this.
    return back({ error: "server_error", error_description: "Failed to process authorization request" });
  }
  const { state: _state, ...bound } = request;
  const record: CodeRecord = { ...bound, user_id: userId };
  await store.put("code", code, record, CODE_TTL_S);
  return back({ code });
}
