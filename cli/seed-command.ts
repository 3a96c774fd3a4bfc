/**
 * `edgeload seed <kind>`: makes a seed set at the target (access tokens signed and
 * verified, users, refresh tokens, sessions, auth codes), stores it in R2 through the API
 * and prints its signed URL. Against a running `edgeload dev`, the target, its admin
 * secret and its load-test client are the defaults. Every kind but access tokens resumes
 * from a checkpoint after a failure.
 */
import { writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { SeedKind, TokenType } from "../core/data/seed-set.ts";
import type { EdgeloadClient } from "./client.ts";
import { CliError, connect, EXIT } from "./connection.ts";
import { parseCommand, type OptionValues } from "./option-table.ts";
import { SEED_COMMAND } from "./tables/stack-tables.ts";
import { verificationFailure } from "../seeds/verification-advice.ts";

export async function seedCommand(args: readonly string[]): Promise<number> {
  const { values: v, positionals } = parseCommand(SEED_COMMAND, args);
  const request = await seedRequestOf(v, positionals);
  const target = await targetAccessOf(v, request.kind);
  const client = await connect(v);
  const doc = await makeSeedSet(request, target);
  return publishSeedSet(client, v, request, doc, target.baseUrl);
}

type SeedValues = OptionValues<typeof SEED_COMMAND.options>;

/** What to make: the seed kind, how many, over how many users, in which token mix, under which name. */
interface SeedRequest {
  readonly kind: SeedKind;
  readonly count: number;
  readonly concurrency: number;
  readonly users: number | undefined;
  /** access-tokens only; null for the default mix. */
  readonly mix: Readonly<Record<TokenType, number>> | null;
  readonly name: string;
}

/** The seed kind and the flags that size and name the set, each checked (an invalid one is a config error naming it). */
async function seedRequestOf(v: SeedValues, positionals: readonly string[]): Promise<SeedRequest> {
  const [kind, ...extra] = positionals;
  const { SEED_KINDS, SEED_NAME } = await import("../core/data/seed-set.ts");
  if (!SEED_KINDS.includes(kind as SeedKind)) {
    throw new CliError(`unknown seed kind "${kind ?? ""}"; available: ${SEED_KINDS.join(", ")} (edgeload seed --help)`, EXIT.invalidConfig);
  }
  if (extra.length) throw new CliError(`one seed kind at a time, not ${positionals.join(" ")}`, EXIT.invalidConfig);
  const count = wholeNumberFlag("count", v.count ?? "", 1)!;
  const concurrency = wholeNumberFlag("concurrency", v.concurrency, 1)!;
  const users = wholeNumberFlag("users", v.users, 1);
  if (kind === "refresh-tokens") {
    const tooFewUsers = (await import("../seeds/refresh-tokens.ts")).refreshUsersProblem(count, users);
    if (tooFewUsers) throw new CliError(`--users: ${tooFewUsers}`, EXIT.invalidConfig);
  }
  const { parseMix } = await import("../seeds/token-mix.ts");
  if (v.mix !== undefined && kind !== "access-tokens") throw new CliError("--mix is for access-tokens only", EXIT.invalidConfig);
  const mix = v.mix ? parseMix(v.mix) : null;
  if (mix && !mix.ok) throw new CliError(mix.error, EXIT.invalidConfig);
  const name = v.name ?? `${kind}-${count}`;
  if (!SEED_NAME.test(name))
    throw new CliError(`--name: "${name}" is not a seed name (1–64 of a-z 0-9 . _ -, starting with a letter or digit)`, EXIT.invalidConfig);
  return { kind: kind as SeedKind, count, concurrency, users, mix: mix?.ok ? mix.mix : null, name };
}

/** A flag's whole number of at least `min`; undefined when the flag is absent. */
function wholeNumberFlag(flag: string, raw: string | undefined, min: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new CliError(`--${flag}: a whole number of at least ${min} is required`, EXIT.invalidConfig);
  return n;
}

/** The target a set is made at, and what the seeders need to act there. */
interface TargetAccess {
  readonly baseUrl: string;
  readonly adminSecret: string;
  /** Absent for users and sessions, which need no client. */
  readonly clientId: string;
  readonly clientSecret: string;
  /** auth-codes only. */
  readonly redirectUri: string | undefined;
}

/** The target and its secrets from the flags, each defaulting to a running `edgeload dev`'s local target; what the kind needs is required. */
async function targetAccessOf(v: SeedValues, kind: SeedKind): Promise<TargetAccess> {
  // Against the local stack, its target, admin secret and load-test client are the defaults.
  const { readDevFile } = await import("./dev-file.ts");
  const dev = v["base-url"] ? null : await readDevFile();
  const baseUrl = v["base-url"] ?? dev?.targetUrl;
  const clientId = v["client-id"] ?? dev?.targetClient.clientId;
  const clientSecret = v["client-secret"] ?? dev?.targetClient.clientSecret;
  const adminSecret = v["admin-secret"] ?? dev?.targetAdminSecret;
  const redirectUri = v["redirect-uri"] ?? dev?.targetClient.redirectUri;
  const needsClient = kind !== "users" && kind !== "sessions";
  if (!baseUrl || !adminSecret || (needsClient && (!clientId || !clientSecret))) {
    const flags = needsClient ? "--base-url, --client-id, --client-secret and --admin-secret are" : "--base-url and --admin-secret are";
    throw new CliError(`${flags} required (or run \`edgeload dev\` for local defaults)`, EXIT.invalidConfig);
  }
  if (kind === "auth-codes" && !redirectUri) throw new CliError("--redirect-uri (registered for the client) is required for auth-codes", EXIT.invalidConfig);
  return { baseUrl, adminSecret, clientId: clientId!, clientSecret: clientSecret!, redirectUri };
}

/** The options every seeder takes, as one run of `edgeload seed`. */
type SeedRun = ReturnType<typeof seedRunOf>;

type SeedSet = Awaited<ReturnType<typeof seedOfKind>>;

/**
 * Makes the set at the target, its progress on stderr. A seeder's refusal becomes a CliError
 * saying what to change on the provider (seedErrorAdvice) and where what was made is kept.
 */
async function makeSeedSet(request: SeedRequest, target: TargetAccess): Promise<SeedSet> {
  const { DEV_FILE } = await import("./dev-file.ts");
  const { SeedError } = await import("../seeds/provider-api.ts");
  const run = seedRunOf(request, target, join(dirname(DEV_FILE), "seeding", `${request.name}.json`));
  let doc: SeedSet;
  try {
    doc = await seedOfKind(request, run, target.redirectUri);
  } catch (error) {
    if (process.stderr.isTTY) process.stderr.write("\n");
    if (error instanceof SeedError) {
      const kept = request.kind !== "access-tokens" && (await import("node:fs")).existsSync(run.checkpoint);
      const resumable = kept ? `\nwhat was made is kept in ${run.checkpoint}: run the same command again to continue` : "";
      const advice = seedErrorAdvice(error.message, error.status);
      throw new CliError(error.message + (advice ? `\n${advice}` : "") + resumable);
    }
    throw error;
  }
  if (process.stderr.isTTY) process.stderr.write("\n");
  return doc;
}

/**
 * The seeders' options for one request. Every kind but access tokens (signed locally;
 * re-running it makes nothing twice) resumes from `checkpoint` after a failure.
 */
function seedRunOf(request: SeedRequest, target: TargetAccess, checkpoint: string) {
  const { kind, count, concurrency, users, name } = request;
  return {
    baseUrl: target.baseUrl,
    adminSecret: target.adminSecret,
    clientId: target.clientId,
    clientSecret: target.clientSecret,
    count,
    concurrency,
    testName: name,
    setName: name,
    onProgress: progressOnStderr(),
    ...(users === undefined ? {} : { users }),
    checkpoint,
    onResume: (made: number, total: number, phase: string) => {
      console.log(`resuming: ${made} of ${total} already made${kind === "auth-codes" ? ` (${phase}; the codes themselves are always made afresh)` : ""}`);
    },
  };
}

/** Progress on stderr: one line rewritten in place on a terminal, a line per phase elsewhere. */
function progressOnStderr(): (done: number, total: number, phase: string) => void {
  let lastPhase = "";
  return (done, total, phase) => {
    if (process.stderr.isTTY) process.stderr.write(`\r  ${phase.padEnd(8)} ${done}/${total}\u001b[K`);
    else if (phase !== lastPhase) process.stderr.write(`  ${phase}…\n`);
    lastPhase = phase;
  };
}

/** The seeder of the request's kind, each loaded only when it is the one asked for. */
async function seedOfKind(request: SeedRequest, run: SeedRun, redirectUri: string | undefined) {
  switch (request.kind) {
    case "access-tokens":
      return (await import("../seeds/access-tokens.ts")).seedAccessTokens({ ...run, ...(request.mix ? { mix: request.mix } : {}) });
    case "users":
      return (await import("../seeds/users.ts")).seedUsers(run);
    case "refresh-tokens":
      return (await import("../seeds/refresh-tokens.ts")).seedRefreshTokens(run);
    case "sessions":
      return (await import("../seeds/sessions.ts")).seedSessions(run);
    case "auth-codes":
      return (await import("../seeds/auth-codes.ts")).seedAuthCodes({ ...run, redirectUri: redirectUri! });
  }
}

/**
 * Stores a made set through the API (and in --out) and prints its signed URL; a token set
 * also gets the URL of its valid tokens as a bare array.
 */
async function publishSeedSet(client: EdgeloadClient, v: SeedValues, request: SeedRequest, doc: SeedSet, baseUrl: string): Promise<number> {
  const { kind, name } = request;
  // A set the provider answered wrongly about would make every later run measure that
  // mistake: it is not stored, written or handed out (seeds/verification-advice.ts says how to fix it).
  if ("tokens" in doc && !doc.metadata.verification.all_correct) {
    throw new CliError(verificationFailure(doc.metadata.verification, baseUrl), EXIT.failure);
  }
  if (v.out) await writeFile(v.out, JSON.stringify(doc, null, 2) + "\n", { mode: 0o600 });
  const stored = await client.uploadSeed(name, doc);
  const url = await client.seedUrl(name, { expiresIn: v["expires-in"] });
  if ("tokens" in doc) {
    const valid = await client.seedUrl(name, { expiresIn: v["expires-in"], format: "array", type: "valid" });
    const verification = doc.metadata.verification;
    console.log(`seed set ${name}: ${stored.total} tokens ${JSON.stringify(stored.counts)}, sha256 ${stored.sha256.slice(0, 16)}…`);
    console.log(`verification: ${verification.verified} correct, ${verification.incorrect} incorrect (all correct)`);
    if (stored.counts.revoked)
      console.log(
        "note: the provider keeps a revocation for its access-token lifetime from now (Authrim: TOKEN_EXPIRY, 3600 s by default), the tokens live 30 days: run introspect and token-exchange within it, or seed again",
      );
    console.log(`TOKEN_URL (expires ${url.expiresAt}):\n  ${url.url}`);
    console.log(`valid tokens as a bare array (Authrim's userinfo cloud script):\n  ${valid.url}`);
    return EXIT.ok;
  }
  console.log(`seed set ${name}: ${stored.total} ${kind}, sha256 ${stored.sha256.slice(0, 16)}…`);
  if ("codes" in doc) console.log(`note: ${doc.metadata.note}; the first expires at ${doc.metadata.expires_at}`);
  console.log(`signed URL (expires ${url.expiresAt}):\n  ${url.url}`);
  return EXIT.ok;
}

/**
 * What to change on the provider when a seeder's call was refused for its setup, not its
 * input (Authrim v0.1.15, docs/authrim.md); null when the refusal says nothing of the kind.
 */
export function seedErrorAdvice(message: string, status: number | null): string | null {
  if (status === 403 && message.includes("/api/admin/test/"))
    return "the provider's test endpoints are off: set ENABLE_TEST_ENDPOINTS=true on Authrim's management worker (docs/authrim.md)";
  if (status === 401 && message.includes("/api/admin/")) return "the admin API refused the secret: pass the provider's ADMIN_API_SECRET (--admin-secret)";
  return null;
}
