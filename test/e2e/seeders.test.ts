/**
 * End to end: the seeders for users, refresh tokens, sessions and authorization codes
 * against the real local target (started as `edgeload dev` starts it), checked the way a
 * load test will use their data: every document passes parseSeedSet as its kind, and the
 * data truly works at the target (users exist, a refresh token rotates once, a session
 * logs in silently, a code redeems with its verifier). Also: a run interrupted part-way
 * resumes from its checkpoint making only what is missing, refusals name the call and
 * status, and `edgeload seed` stores a set behind a signed URL.
 */
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parseSeedSet, type SeedKind } from "../../core/data/seed-set.ts";
import { DEV_FILE } from "../../cli/dev-file.ts";
import type { LocalStack } from "../../cli/local-stack.ts";
import { seedAuthCodes } from "../../seeds/auth-codes.ts";
import { SeedError } from "../../seeds/provider-api.ts";
import { decodeJwt } from "jose";
import { seedRefreshTokens } from "../../seeds/refresh-tokens.ts";
import { seedSessions } from "../../seeds/sessions.ts";
import { benchEmail, seedUsers } from "../../seeds/users.ts";
import { runCli } from "./cli-process.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

let stack: LocalStack;
let stateDir: string;
let access: { baseUrl: string; adminSecret: string; clientId: string; clientSecret: string };
/** The redirect URI registered for the load-test client. */
let redirectUri: string;

const fixture = useLocalStack("edgeload-seeders-");

beforeAll(() => {
  ({ stack, stateDir } = fixture);
  access = {
    baseUrl: stack.targetUrl,
    adminSecret: stack.targetAdminSecret,
    clientId: stack.targetClient.clientId,
    clientSecret: stack.targetClient.clientSecret,
  };
  redirectUri = stack.targetClient.redirectUri;
});

/** The id the target has for a user's email, or null (searched as on Authrim, matched exactly). */
async function userIdOf(email: string): Promise<string | null> {
  const response = await fetch(`${stack.targetUrl}/api/admin/users?search=${encodeURIComponent(email)}&limit=100`, {
    headers: { authorization: `Bearer ${stack.targetAdminSecret}` },
  });
  const body = (await response.json()) as { users: Array<{ id: string; email: string }> };
  return body.users.find((u) => u.email === email)?.id ?? null;
}

/** POST /token as the load-test client (HTTP Basic). */
async function token(form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${stack.targetUrl}/token`, {
    method: "POST",
    headers: { authorization: `Basic ${btoa(`${access.clientId}:${access.clientSecret}`)}` },
    body: new URLSearchParams(form),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function expectKind(doc: unknown, kind: SeedKind, total: number): void {
  const parsed = parseSeedSet(doc);
  expect(parsed.ok ? parsed.summary : parsed.problems).toMatchObject({ kind, total });
  expect((doc as { metadata: unknown }).metadata).toMatchObject({ version: 1, kind, base_url: stack.targetUrl, total });
}

describe("seedUsers", () => {
  it("makes the users, which the target then knows, and a second run reuses every one of them", async () => {
    const doc = await seedUsers({ ...access, count: 12, testName: "e2e users" });
    expectKind(doc, "users", 12);
    expect(doc.emails).toEqual(Array.from({ length: 12 }, (_, i) => benchEmail(i)));
    for (const user of doc.users) expect(await userIdOf(user.email)).toBe(user.userId);

    const again = await seedUsers({ ...access, count: 12 });
    expect(again.users).toEqual(doc.users);
  });
});

describe("seedRefreshTokens", () => {
  it("registers one family per token for the load-test client; a token rotates once and is then refused", async () => {
    const doc = await seedRefreshTokens({ ...access, count: 6 });
    expectKind(doc, "refresh-tokens", 6);
    expect(doc.metadata).toMatchObject({ client_id: access.clientId, generation: 1, shard_count: 8 });
    expect(new Set(doc.refresh_tokens.map((t) => t.token)).size).toBe(6);
    expect(new Set(doc.refresh_tokens.map((t) => t.user_id)).size).toBe(6);
    for (const t of doc.refresh_tokens) {
      // A signed JWT, as Authrim v0.1.15 registers nothing else ("Invalid JWT format"), its jti naming generation and shard.
      expect(decodeJwt(t.token)).toMatchObject({ jti: t.jti, sub: t.user_id, client_id: access.clientId, rtv: 1 });
      expect(t.jti).toMatch(new RegExp(`^v1_${t.shard_index}_`));
      expect(t).toMatchObject({ rtv: 1, generation: 1, client_id: access.clientId, client_secret: access.clientSecret });
      expect(t.shard_index).toBeGreaterThanOrEqual(0);
      expect(t.shard_index).toBeLessThan(8);
    }

    const [first, second] = doc.refresh_tokens;
    const rotated = await token({ grant_type: "refresh_token", refresh_token: first!.token });
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).toEqual(expect.any(String));
    expect(rotated.body.refresh_token).not.toBe(first!.token);
    const reused = await token({ grant_type: "refresh_token", refresh_token: first!.token });
    expect(reused).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    // Families are independent: revoking the first leaves the second usable.
    expect((await token({ grant_type: "refresh_token", refresh_token: second!.token })).status).toBe(200);
  });
  it("gives each set users of its own, so a second set for the client leaves the first's families whole (Authrim keeps one per user)", async () => {
    const first = await seedRefreshTokens({ ...access, count: 3, setName: "e2e-rt-first" });
    const second = await seedRefreshTokens({ ...access, count: 3, setName: "e2e-rt-second" });
    const owners = (doc: typeof first) => doc.refresh_tokens.map((t) => t.user_id);
    expect(owners(first).filter((u) => owners(second).includes(u))).toEqual([]);
    expect(await userIdOf("rt-e2e-rt-first-00001@test.authrim.internal")).toBe(first.refresh_tokens[0]!.user_id);
    for (const t of [...first.refresh_tokens, ...second.refresh_tokens])
      expect((await token({ grant_type: "refresh_token", refresh_token: t.token })).status).toBe(200);
  });

  it("refuses more families than users before asking the provider anything", async () => {
    await expect(seedRefreshTokens({ ...access, baseUrl: "http://127.0.0.1:9", count: 4, users: 2 })).rejects.toThrow(
      /4 refresh-token families over 2 users: Authrim keeps one family per user and client/,
    );
  });
});

describe("seedSessions", () => {
  it("makes sessions that log in silently at /authorize?prompt=none", async () => {
    const doc = await seedSessions({ ...access, count: 5 });
    expectKind(doc, "sessions", 5);
    expect(doc.metadata.ttl_seconds).toBe(24 * 3600);
    for (const [i, session] of doc.sessions.entries()) expect(session.user_id).toBe(await userIdOf(benchEmail(i)));

    const query = new URLSearchParams({
      response_type: "code",
      client_id: access.clientId,
      redirect_uri: redirectUri,
      scope: "openid",
      state: "s-1",
      nonce: "n-1",
      prompt: "none",
      code_challenge: createHash("sha256").update("a-verifier-of-forty-three-characters-at-least").digest("base64url"),
      code_challenge_method: "S256",
    });
    for (const session of doc.sessions) {
      const response = await fetch(`${stack.targetUrl}/authorize?${query}`, {
        redirect: "manual",
        headers: { cookie: `authrim_session=${session.session_id}` },
      });
      expect(response.status).toBe(302);
      const location = new URL(response.headers.get("location")!);
      expect(location.searchParams.get("code")).toBeTruthy();
      expect(location.searchParams.get("state")).toBe("s-1");
    }
  });
});

describe("seedAuthCodes", () => {
  it("makes codes that redeem once at /token with their own verifier, and says they expire", async () => {
    const doc = await seedAuthCodes({ ...access, count: 6, users: 2, redirectUri });
    expectKind(doc, "auth-codes", 6);
    expect(doc.metadata).toMatchObject({ client_id: access.clientId, code_lifetime_s: 60, single_use: true, redirect_uri: redirectUri });
    expect(Date.parse(doc.metadata.expires_at) - Date.now()).toBeLessThanOrEqual(60_000);
    expect(new Set(doc.codes.map((c) => c.code)).size).toBe(6);
    expect(new Set(doc.codes.map((c) => c.code_verifier)).size).toBe(6);
    expect(new Set(doc.codes.map((c) => c.user_id))).toEqual(new Set([await userIdOf(benchEmail(0)), await userIdOf(benchEmail(1))]));

    const [first, ...rest] = doc.codes;
    // Another code's verifier is refused (and spends that code).
    expect(
      (await token({ grant_type: "authorization_code", code: first!.code, redirect_uri: redirectUri, code_verifier: rest[0]!.code_verifier })).status,
    ).toBe(400);
    for (const code of rest) {
      const redeemed = await token({ grant_type: "authorization_code", code: code.code, redirect_uri: code.redirect_uri, code_verifier: code.code_verifier });
      expect(redeemed.status).toBe(200);
      expect(redeemed.body.access_token).toEqual(expect.any(String));
    }
    const again = await token({ grant_type: "authorization_code", code: rest[0]!.code, redirect_uri: redirectUri, code_verifier: rest[0]!.code_verifier });
    expect(again).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
  });
});

interface CheckpointOnDisk {
  readonly made: Array<{ session_id: string; user_id: string } | null>;
}

/** Runs seedSessions into `checkpoint` and stops it (by throwing from onProgress) after `stopAt` sessions. */
async function interruptedSessions(checkpoint: string, count: number, users: number, stopAt: number): Promise<CheckpointOnDisk> {
  const stop = new Error("interrupted on purpose");
  await expect(
    seedSessions({
      ...access,
      count,
      users,
      checkpoint,
      concurrency: 4,
      onProgress: (done, _total, phase) => {
        if (phase === "sessions" && done === stopAt) throw stop;
      },
    }),
  ).rejects.toBe(stop);
  return JSON.parse(await readFile(checkpoint, "utf8")) as CheckpointOnDisk;
}

describe("resuming from a checkpoint", () => {
  it("keeps what an interrupted run made and a re-run makes exactly the missing ones, with the same users", async () => {
    const checkpoint = join(stateDir, "seeding", "sessions-resume.json");
    const saved = await interruptedSessions(checkpoint, 80, 8, 55);
    expect((await stat(checkpoint)).mode & 0o777).toBe(0o600);
    const kept = saved.made.filter((s) => s !== null);
    // The 55 made before the interruption, plus those already under way (at most 3 more).
    expect(kept.length).toBeGreaterThanOrEqual(55);
    expect(kept.length).toBeLessThanOrEqual(58);

    const resumed: unknown[] = [];
    const sessionSteps: number[] = [];
    const doc = await seedSessions({
      ...access,
      count: 80,
      users: 8,
      checkpoint,
      onResume: (...args) => resumed.push(args),
      onProgress: (done, _total, phase) => {
        if (phase === "sessions") sessionSteps.push(done);
      },
    });
    expect(resumed).toEqual([[kept.length, 80, "sessions"]]);
    expect(sessionSteps).toHaveLength(80 - kept.length);
    expect(Math.max(...sessionSteps)).toBe(80);
    expectKind(doc, "sessions", 80);
    // Every session of the first run is in the set at its place; none was made twice.
    saved.made.forEach((s, slot) => {
      if (s) expect(doc.sessions[slot]).toEqual(s);
    });
    expect(new Set(doc.sessions.map((s) => s.session_id)).size).toBe(80);
    // Slot i belongs to user i mod 8, in both runs: the same eight users, none created twice.
    const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => userIdOf(benchEmail(i))));
    doc.sessions.forEach((s, slot) => expect(s.user_id).toBe(ids[slot % 8]));
    await expect(stat(checkpoint)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("refuses a checkpoint made for another run instead of mixing two sets", async () => {
    const checkpoint = join(stateDir, "seeding", "sessions-other.json");
    await interruptedSessions(checkpoint, 60, 3, 52);
    const refused = await seedSessions({ ...access, count: 61, users: 3, checkpoint }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SeedError);
    expect(refused).toMatchObject({ call: "checkpoint" });
  });
});

describe("refusals", () => {
  it("a refused admin call stops the seeder with a SeedError naming the call, method, path and status", async () => {
    const error = await seedSessions({ ...access, adminSecret: "not-the-secret", count: 2 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SeedError);
    expect(error).toMatchObject({ call: "user lookup", status: 401 });
    expect((error as Error).message).toMatch(/^user lookup: GET \/api\/admin\/users\?search=\S+ answered 401/);
  });

  it("a wrong client secret is caught before anything is registered", async () => {
    const error = await seedRefreshTokens({ ...access, clientSecret: "wrong", count: 2 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ call: "client authentication", status: 401 });
  });
});

const cli = (args: string[]) => runCli(args, { EDGELOAD_URL: stack.apiUrl, EDGELOAD_TOKEN: stack.token });

describe("edgeload seed <kind>", () => {
  // Explicit provider flags: the dev file may belong to someone's running `edgeload dev`.
  const provider = () => ["--base-url", stack.targetUrl, "--admin-secret", stack.targetAdminSecret];

  it("seeds sessions, stores them and prints a signed URL that serves the set", async () => {
    const result = await cli(["seed", "sessions", "--count", "5", "--name", "e2e-cli-sessions", ...provider()]);
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("seed set e2e-cli-sessions: 5 sessions");
    const url = /signed URL \(expires [^)]+\):\n {2}(\S+)/.exec(result.stdout)![1]!;
    const doc = await (await fetch(url)).json();
    expectKind(doc, "sessions", 5);
  });

  it("seeds auth codes and says they are single use and about to expire", async () => {
    const result = await cli([
      "seed",
      "auth-codes",
      "--count",
      "3",
      "--name",
      "e2e-cli-codes",
      ...provider(),
      "--client-id",
      access.clientId,
      "--client-secret",
      access.clientSecret,
      "--redirect-uri",
      redirectUri,
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^note: authorization codes are single use and expire 60 s after they were made/m);
    const url = /signed URL \(expires [^)]+\):\n {2}(\S+)/.exec(result.stdout)![1]!;
    expectKind(await (await fetch(url)).json(), "auth-codes", 3);
  });

  it("resumes a run interrupted before, saying how much was already made", async () => {
    const name = "e2e-cli-resume";
    const checkpoint = join(DEV_FILE, "..", "seeding", `${name}.json`);
    const saved = await interruptedSessions(checkpoint, 60, 4, 51);
    const made = saved.made.filter((s) => s !== null).length;
    const result = await cli(["seed", "sessions", "--count", "60", "--users", "4", "--name", name, ...provider()]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`resuming: ${made} of 60 already made`);
    await expect(stat(checkpoint)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("exits 1 naming the refused call when the provider refuses", async () => {
    const result = await cli(["seed", "users", "--count", "2", "--name", "e2e-cli-refused", "--base-url", stack.targetUrl, "--admin-secret", "wrong"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^edgeload: user lookup: GET \/api\/admin\/users\?search=\S+ answered 401/m);
    // Nothing was made, so nothing is kept to resume from.
    expect(result.stderr).not.toContain("run the same command again");
    await expect(stat(join(DEV_FILE, "..", "seeding", "e2e-cli-refused.json"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("exits 104 naming the kinds for an unknown kind", async () => {
    const result = await cli(["seed", "passkeys", "--count", "1"]);
    expect(result.code).toBe(104);
    expect(result.stderr).toContain("access-tokens, users, refresh-tokens, sessions, auth-codes");
  });
});
