/**
 * Users on an Authrim-style provider, named as the reference suite names them
 * (`otp-bench-00001@test.authrim.internal`, docs/authrim.md), and the users seed set
 * `{users: [{email, userId}], emails: [...], metadata}`.
 *
 * Every seeder gets its users from here: each is looked up by email before it is created,
 * so a re-run, a resumed run or another seeder reuses the same users and none is ever
 * created twice (a creation that loses a race to another run answers 409 and is looked up
 * again).
 */
import { CHALLENGE_SHARDS_FIX, codesToVerify, type SeedUser } from "../core/data/seed-set.ts";
import { json, pool, Provider, SeedError, type ProviderAccess } from "./provider-api.ts";
import { Checkpoint, seedMetadata, type SeedMetadata, type SeedRunOptions } from "./seed-run.ts";

/** The reference suite's users: `otp-bench-00001@test.authrim.internal`, … */
export const BENCH_USERS = "otp-bench";

/** The email of user `index` (0-based) of a group of users: `otp-bench-00001@test.authrim.internal` for 0. */
export function benchEmail(index: number, group = BENCH_USERS): string {
  return `${group}-${String(index + 1).padStart(5, "0")}@test.authrim.internal`;
}

/**
 * User `index`, looked up by email and created only when the provider has none.
 *
 * Authrim filters its user list by `search=` (a substring of the email or name) and
 * ignores `email=`, answering an unfiltered page instead: so the lookup searches, and
 * takes only a user whose email is exactly this one — never "the first user listed",
 * which on a provider with other users would put every seeded token on one account.
 * Creation answers `{user: {id}}` (Authrim) or `{id}` (simpler providers).
 */
export async function ensureUser(provider: Provider, index: number, group = BENCH_USERS): Promise<SeedUser> {
  const email = benchEmail(index, group);
  const lookup = async () => {
    const found = await provider.adminJson<{ users?: Array<{ id?: unknown; email?: unknown }> }>(
      "user lookup",
      `/api/admin/users?search=${encodeURIComponent(email)}&limit=100`,
    );
    const match = found.users?.find((u) => typeof u.email === "string" && u.email.toLowerCase() === email.toLowerCase());
    return typeof match?.id === "string" ? match.id : null;
  };
  const existing = await lookup();
  if (existing !== null) return { email, userId: existing };
  const path = "/api/admin/users";
  const init = { method: "POST", body: { email, name: `Bench ${index + 1}`, email_verified: true } };
  const response = await provider.adminRequest("user creation", path, init);
  let id: unknown;
  if (response.status === 409) {
    // Another run created it since the lookup: take that one.
    await response.body?.cancel();
    id = await lookup();
  } else if (response.ok) {
    const created = await json<{ user?: { id?: unknown }; id?: unknown }>("user creation", response);
    id = created.user?.id ?? created.id;
  } else {
    throw await provider.refused("user creation", "POST", path, response);
  }
  if (typeof id !== "string")
    throw new SeedError("user creation", `POST ${path} answered ${response.status} without the user's id (expected {"user": {"id": …}})`, response.status);
  return { email, userId: id };
}

/**
 * Refuses a set of users that is not as spread as asked: `users` found for `wanted`
 * accounts must be that many distinct ids. A provider whose search does not filter can
 * answer the same user for every email; a load test on one account measures one
 * account's caches, not the spread the user asked for.
 */
export function checkSpread(users: ReadonlyMap<number, SeedUser>, wanted: number): void {
  const distinct = new Set([...users.values()].map((u) => u.userId)).size;
  if (distinct < wanted) {
    throw new SeedError(
      "user lookup",
      `${wanted} accounts were asked for but the provider's answers map them to ${distinct} distinct user${distinct === 1 ? "" : "s"}: its user search does not find each email (GET /api/admin/users?search=<email>)`,
    );
  }
}

/** Users by index for `indices`, made or found with bounded concurrency (progress phase "users"). */
export async function ensureUsers(
  provider: Provider,
  indices: readonly number[],
  o: Pick<SeedRunOptions, "concurrency" | "onProgress">,
  group = BENCH_USERS,
): Promise<Map<number, SeedUser>> {
  const users = new Map<number, SeedUser>();
  const wanted = [...new Set(indices)];
  await pool(wanted, o.concurrency ?? 20, async (index) => {
    users.set(index, await ensureUser(provider, index, group));
    o.onProgress?.(users.size, wanted.length, "users");
  });
  return users;
}

/**
 * How many users `count` entries are spread over: `requested` when given (at most one per
 * entry, at least one), otherwise `fallback`.
 */
export function userSpread(count: number, requested: number | undefined, fallback: number): number {
  return Math.max(1, Math.min(requested ?? fallback, count));
}

export type UserSeedOptions = Pick<ProviderAccess, "baseUrl" | "adminSecret"> & SeedRunOptions;

export interface UserSeedSet {
  readonly users: SeedUser[];
  readonly emails: string[];
  readonly metadata: SeedMetadata;
}

/** `count` users (`otp-bench-00001…`), reusing those that exist; resumable from `o.checkpoint`. */
export async function seedUsers(o: UserSeedOptions): Promise<UserSeedSet> {
  const provider = new Provider({ baseUrl: o.baseUrl, adminSecret: o.adminSecret });
  const checkpoint = await Checkpoint.open<SeedUser>(
    o.checkpoint,
    { kind: "users", baseUrl: provider.base, clientId: null, slots: o.count, users: o.count },
    o,
    "users",
  );
  const users = await checkpoint.fill(o, "users", (slot) => ensureUser(provider, slot));
  await checkOtpVerify(provider, users);
  await checkpoint.remove();
  return { users, emails: users.map((u) => u.email), metadata: seedMetadata("users", provider, o, users.length, {}) };
}

/**
 * Whether the provider's mail-OTP login can get the seeded users past its verify step: codes
 * it issues for them must be found by the worker that verifies them. A provider whose
 * challenge shards are split (CHALLENGE_SHARDS_FIX) refuses most of them with
 * `interaction_required`, and the set is refused with the call that aligns them. With the
 * test endpoints off nothing can be checked: the run's pre-flight probe says so.
 */
async function checkOtpVerify(provider: Provider, users: readonly SeedUser[]): Promise<void> {
  const settings = await provider.adminRequest("challenge shards", "/api/admin/settings/challenge-shards");
  const answer = (await settings.json().catch(() => null)) as { source?: unknown } | null;
  const tries = codesToVerify(settings.ok ? answer?.source : null);
  let refused = 0;
  for (let i = 0; i < tries && users.length > 0; i++) {
    const email = users[i % users.length]!.email;
    const issued = await provider.adminRequest("mail code", "/api/admin/test/email-codes", { method: "POST", body: { email, create_user: false } });
    if (!issued.ok) return void (await issued.body?.cancel());
    const { code, otpSessionId } = await json<{ code: string; otpSessionId: string }>("mail code", issued);
    const verified = await provider.request("mail-code verify", "/api/auth/email-codes/verify", {
      method: "POST",
      headers: { cookie: `authrim_otp_session=${otpSessionId}`, "content-type": "application/json" },
      body: JSON.stringify({ email, code }),
    });
    const error = ((await verified.json().catch(() => null)) as { error?: unknown } | null)?.error;
    if (error === "interaction_required") refused++;
  }
  if (refused > 0)
    throw new SeedError(
      "mail-code verify",
      `the provider refused ${refused} of ${tries} codes it had just issued (interaction_required): the worker that issues codes and the one that verifies them shard them differently; ${CHALLENGE_SHARDS_FIX}\n` +
        `  curl -X PUT ${provider.base}/api/admin/settings/challenge-shards -H "authorization: Bearer $ADMIN_API_SECRET" -H "content-type: application/json" -d '{"shards": 16}'`,
    );
}
