/**
 * `edgeload seed <kind>`: makes a seed set at the target (access tokens signed and
 * verified, users, refresh tokens, sessions, auth codes), stores it in R2 through the API
 * and prints its signed URL. Against a running `edgeload dev`, the target, its admin
 * secret and its load-test client are the defaults. Every kind but access tokens resumes
 * from a checkpoint after a failure.
 */
import { writeFile } from "node:fs/promises";
import { CliError, connect, EXIT } from "./connection.ts";
import { parseCommand } from "./option-table.ts";
import { SEED_COMMAND } from "./tables/stack-tables.ts";
import { verificationFailure } from "../seeds/verification-advice.ts";

export async function seedCommand(args: readonly string[]): Promise<number> {
  const { values: v, positionals } = parseCommand(SEED_COMMAND, args);
  const [kind, ...extra] = positionals;
  type SeedKind = import("../core/data/seed-set.ts").SeedKind;
  const { SEED_KINDS, SEED_NAME } = await import("../core/data/seed-set.ts");
  if (!SEED_KINDS.includes(kind as SeedKind)) {
    throw new CliError(`unknown seed kind "${kind ?? ""}"; available: ${SEED_KINDS.join(", ")} (edgeload seed --help)`, EXIT.invalidConfig);
  }
  if (extra.length) throw new CliError(`one seed kind at a time, not ${positionals.join(" ")}`, EXIT.invalidConfig);
  const whole = (flag: string, raw: string | undefined, min: number): number | undefined => {
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new CliError(`--${flag}: a whole number of at least ${min} is required`, EXIT.invalidConfig);
    return n;
  };
  const count = whole("count", v.count ?? "", 1)!;
  const concurrency = whole("concurrency", v.concurrency, 1)!;
  const users = whole("users", v.users, 1);
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
  // Against the local stack, its target, admin secret and load-test client are the defaults.
  const { DEV_FILE, readDevFile } = await import("./dev-file.ts");
  const { dirname, join } = await import("node:path");
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
  const client = await connect(v);
  const { SeedError } = await import("../seeds/provider-api.ts");
  let lastPhase = "";
  const onProgress = (done: number, total: number, phase: string) => {
    if (process.stderr.isTTY) process.stderr.write(`\r  ${phase.padEnd(8)} ${done}/${total}\u001b[K`);
    else if (phase !== lastPhase) process.stderr.write(`  ${phase}…\n`);
    lastPhase = phase;
  };
  // Every kind but access tokens (signed locally; re-running it makes nothing twice) resumes
  // from a checkpoint after a failure.
  const run = {
    baseUrl: baseUrl!,
    adminSecret: adminSecret!,
    clientId: clientId!,
    clientSecret: clientSecret!,
    count,
    concurrency,
    testName: name,
    setName: name,
    onProgress,
    ...(users === undefined ? {} : { users }),
    checkpoint: join(dirname(DEV_FILE), "seeding", `${name}.json`),
    onResume: (made: number, total: number, phase: string) => {
      console.log(`resuming: ${made} of ${total} already made${kind === "auth-codes" ? ` (${phase}; the codes themselves are always made afresh)` : ""}`);
    },
  };
  let doc;
  try {
    switch (kind as SeedKind) {
      case "access-tokens":
        doc = await (await import("../seeds/access-tokens.ts")).seedAccessTokens({ ...run, ...(mix?.ok ? { mix: mix.mix } : {}) });
        break;
      case "users":
        doc = await (await import("../seeds/users.ts")).seedUsers(run);
        break;
      case "refresh-tokens":
        doc = await (await import("../seeds/refresh-tokens.ts")).seedRefreshTokens(run);
        break;
      case "sessions":
        doc = await (await import("../seeds/sessions.ts")).seedSessions(run);
        break;
      case "auth-codes":
        doc = await (await import("../seeds/auth-codes.ts")).seedAuthCodes({ ...run, redirectUri: redirectUri! });
        break;
    }
  } catch (error) {
    if (process.stderr.isTTY) process.stderr.write("\n");
    if (error instanceof SeedError) {
      const kept = kind !== "access-tokens" && (await import("node:fs")).existsSync(run.checkpoint);
      const resumable = kept ? `\nwhat was made is kept in ${run.checkpoint}: run the same command again to continue` : "";
      const advice = seedErrorAdvice(error.message, error.status);
      throw new CliError(error.message + (advice ? `\n${advice}` : "") + resumable);
    }
    throw error;
  }
  if (process.stderr.isTTY) process.stderr.write("\n");
  // A set the provider answered wrongly about would make every later run measure that
  // mistake: it is not stored, written or handed out (seeds/verification-advice.ts says how to fix it).
  if ("tokens" in doc && !doc.metadata.verification.all_correct) {
    throw new CliError(verificationFailure(doc.metadata.verification, run.baseUrl), EXIT.failure);
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
