/**
 * Login sessions on an Authrim-style provider, as its silent-auth seeder makes them
 * (`POST /api/admin/test/sessions {user_id, ttl_seconds}` → `{session_id}`, docs/authrim.md):
 * the seed set `{sessions: [{session_id, user_id}], metadata}`. A session id is used as
 * the `authrim_session` cookie, e.g. for `GET /authorize?prompt=none`.
 */
import type { SeedSession } from "../core/data/seed-set.ts";
import { Provider, SeedError, type ProviderAccess } from "./provider-api.ts";
import { Checkpoint, seedMetadata, type SeedMetadata, type SeedRunOptions } from "./seed-run.ts";
import { ensureUsers, userSpread } from "./users.ts";

export const SESSION_COOKIE = "authrim_session";
const DEFAULT_SESSION_TTL_S = 24 * 3600;

export interface SessionSeedOptions extends Pick<ProviderAccess, "baseUrl" | "adminSecret">, SeedRunOptions {
  /** Users the sessions are spread over (default: one user per session). */
  readonly users?: number;
  /** Session lifetime (default 24 h). */
  readonly ttlSeconds?: number;
}

export interface SessionSeedSet {
  readonly sessions: SeedSession[];
  readonly metadata: SeedMetadata & { readonly ttl_seconds: number; readonly cookie_name: string };
}

/**
 * Fills `checkpoint`'s slots with sessions, slot i for user i mod `users`, creating or
 * finding only the users of the empty slots.
 */
export async function makeSessions(
  provider: Provider,
  checkpoint: Checkpoint<SeedSession>,
  users: number,
  ttlSeconds: number,
  o: SeedRunOptions,
): Promise<SeedSession[]> {
  const accounts = await ensureUsers(
    provider,
    checkpoint.missing().map((slot) => slot % users),
    o,
  );
  return checkpoint.fill(o, "sessions", async (slot) => {
    const user = accounts.get(slot % users)!;
    const made = await provider.adminJson<{ session_id?: unknown }>("session creation", "/api/admin/test/sessions", {
      method: "POST",
      body: { user_id: user.userId, ttl_seconds: ttlSeconds },
    });
    if (typeof made.session_id !== "string" || !made.session_id)
      throw new SeedError("session creation", "POST /api/admin/test/sessions answered without a session_id");
    return { session_id: made.session_id, user_id: user.userId };
  });
}

/** `count` sessions, resumable from `o.checkpoint`. */
export async function seedSessions(o: SessionSeedOptions): Promise<SessionSeedSet> {
  const provider = new Provider({ baseUrl: o.baseUrl, adminSecret: o.adminSecret });
  const users = userSpread(o.count, o.users, o.count);
  const ttlSeconds = o.ttlSeconds ?? DEFAULT_SESSION_TTL_S;
  const checkpoint = await Checkpoint.open<SeedSession>(
    o.checkpoint,
    { kind: "sessions", baseUrl: provider.base, clientId: null, slots: o.count, users },
    o,
    "sessions",
  );
  const sessions = await makeSessions(provider, checkpoint, users, ttlSeconds, o);
  await checkpoint.remove();
  return { sessions, metadata: seedMetadata("sessions", provider, o, sessions.length, { ttl_seconds: ttlSeconds, cookie_name: SESSION_COOKIE }) };
}
