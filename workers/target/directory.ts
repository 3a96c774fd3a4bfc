/**
 * The target's clients and users in D1. Client secrets are stored only as SHA-256 hashes
 * and compared in constant time; a user's password (for the sign-in page, sign-in-flow.ts)
 * only as the SHA-256 of a per-user salt and the password.
 */
import { randomHex, secretsEqual, sha256Hex } from "../../core/data/web-crypto.ts";

export interface ClientInput {
  readonly client_id?: string;
  readonly client_secret?: string;
  readonly client_name: string;
  readonly redirect_uris: readonly string[];
  readonly grant_types: readonly string[];
  readonly scope: string;
  readonly skip_consent: boolean;
  readonly is_trusted: boolean;
  readonly token_exchange_allowed: boolean;
  /** Clients whose subject tokens this one may exchange without being in their `aud`. */
  readonly allowed_subject_token_clients: readonly string[];
}

export interface User {
  readonly id: string;
  readonly email: string;
  readonly name: string | null;
  readonly email_verified: boolean;
}

export async function createClient(db: D1Database, input: ClientInput): Promise<{ client_id: string; client_secret: string }> {
  const clientId = input.client_id ?? `client_${crypto.randomUUID().replace(/-/g, "")}`;
  const clientSecret = input.client_secret ?? crypto.randomUUID().replace(/-/g, "") + crypto.randomUUID().replace(/-/g, "");
  await db
    .prepare(
      `INSERT INTO clients (client_id, client_secret_sha256, client_name, redirect_uris, grant_types, scope, skip_consent, is_trusted,
         token_exchange_allowed, allowed_subject_token_clients, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      clientId,
      await sha256Hex(clientSecret),
      input.client_name,
      JSON.stringify(input.redirect_uris),
      JSON.stringify(input.grant_types),
      input.scope,
      input.skip_consent ? 1 : 0,
      input.is_trusted ? 1 : 0,
      input.token_exchange_allowed ? 1 : 0,
      input.allowed_subject_token_clients.length ? JSON.stringify(input.allowed_subject_token_clients) : null,
      Date.now(),
    )
    .run();
  return { client_id: clientId, client_secret: clientSecret };
}

export interface Client {
  readonly client_id: string;
  readonly client_name: string;
  readonly redirect_uris: string[];
  readonly grant_types: string[];
  readonly skip_consent: boolean;
  readonly is_trusted: boolean;
  readonly token_exchange_allowed: boolean;
  readonly allowed_subject_token_clients: string[];
}

interface ClientRow {
  readonly client_id: string;
  readonly client_name: string;
  readonly redirect_uris: string;
  readonly grant_types: string;
  readonly skip_consent: number;
  readonly is_trusted: number;
  readonly token_exchange_allowed: number;
  readonly allowed_subject_token_clients: string | null;
}

export async function findClient(db: D1Database, clientId: string): Promise<Client | null> {
  const row = await db
    .prepare(
      "SELECT client_id, client_name, redirect_uris, grant_types, skip_consent, is_trusted, token_exchange_allowed, allowed_subject_token_clients FROM clients WHERE client_id = ?",
    )
    .bind(clientId)
    .first<ClientRow>();
  return row
    ? {
        client_id: row.client_id,
        client_name: row.client_name,
        redirect_uris: JSON.parse(row.redirect_uris) as string[],
        grant_types: JSON.parse(row.grant_types) as string[],
        skip_consent: row.skip_consent === 1,
        is_trusted: row.is_trusted === 1,
        token_exchange_allowed: row.token_exchange_allowed === 1,
        allowed_subject_token_clients: row.allowed_subject_token_clients ? (JSON.parse(row.allowed_subject_token_clients) as string[]) : [],
      }
    : null;
}

/** The flags an operator changes on a client's row (Authrim: PUT /api/admin/clients/:id, or its D1). */
const FLAG_COLUMNS = ["skip_consent", "is_trusted", "token_exchange_allowed", "allowed_subject_token_clients"] as const;
export type ClientFlags = Partial<Pick<ClientInput, (typeof FLAG_COLUMNS)[number]>>;

/** Sets the given flags; false when there is no such client. */
export async function updateClient(db: D1Database, clientId: string, flags: ClientFlags): Promise<boolean> {
  const sets: string[] = [];
  const values: unknown[] = [];
  // Column names come from the fixed list, never from the caller's keys.
  for (const column of FLAG_COLUMNS) {
    const value = flags[column];
    if (value === undefined) continue;
    sets.push(`${column} = ?`);
    values.push(Array.isArray(value) ? (value.length ? JSON.stringify(value) : null) : value ? 1 : 0);
  }
  if (sets.length === 0) return clientExists(db, clientId);
  const result = await db
    .prepare(`UPDATE clients SET ${sets.join(", ")} WHERE client_id = ?`)
    .bind(...values, clientId)
    .run();
  return result.meta.changes === 1;
}

export async function clientExists(db: D1Database, clientId: string): Promise<boolean> {
  return (await db.prepare("SELECT 1 AS x FROM clients WHERE client_id = ?").bind(clientId).first()) !== null;
}

/** Whether `clientId`/`secret` authenticate a client (constant-time on the hash). */
export async function authenticateClient(db: D1Database, clientId: string, secret: string): Promise<boolean> {
  const row = await db.prepare("SELECT client_secret_sha256 AS h FROM clients WHERE client_id = ?").bind(clientId).first<{ h: string }>();
  // An unknown client still costs a hash and a comparison, so timing does not tell it apart.
  return (await secretsEqual(await sha256Hex(secret), row?.h ?? "")) && row !== null;
}

interface UserRow {
  readonly id: string;
  readonly email: string;
  readonly name: string | null;
  readonly email_verified: number;
}

async function findUser(db: D1Database, column: "email" | "id", value: string): Promise<User | null> {
  const row = await db.prepare(`SELECT id, email, name, email_verified FROM users WHERE ${column} = ?`).bind(value).first<UserRow>();
  return row ? { ...row, email_verified: row.email_verified === 1 } : null;
}

export const findUserByEmail = (db: D1Database, email: string) => findUser(db, "email", email);
export const findUserById = (db: D1Database, id: string) => findUser(db, "id", id);

/** Creates a user, with a password to sign in with when one is given; null when the email is taken. */
export async function createUser(
  db: D1Database,
  input: { email: string; name?: string | null; email_verified?: boolean; password?: string | null },
): Promise<User | null> {
  const user: User = { id: crypto.randomUUID(), email: input.email, name: input.name ?? null, email_verified: input.email_verified === true };
  const salt = input.password ? randomHex(16) : null;
  const hash = salt ? await sha256Hex(salt + input.password) : null;
  const result = await db
    .prepare(
      "INSERT INTO users (id, email, name, email_verified, password_sha256, password_salt, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (email) DO NOTHING",
    )
    .bind(user.id, user.email, user.name, user.email_verified ? 1 : 0, hash, salt, Date.now())
    .run();
  return result.meta.changes === 1 ? user : null;
}

/**
 * The user whose email and password these are, or null: an unknown email, a user made
 * without a password, or a wrong one. Every answer costs one hash and one comparison, so
 * timing does not tell which.
 */
export async function userByPassword(db: D1Database, email: string, password: string): Promise<User | null> {
  const row = await db
    .prepare("SELECT id, email, name, email_verified, password_sha256, password_salt FROM users WHERE email = ?")
    .bind(email)
    .first<UserRow & { password_sha256: string | null; password_salt: string | null }>();
  const matches = await secretsEqual(await sha256Hex((row?.password_salt ?? "") + password), row?.password_sha256 ?? "");
  if (!row || row.password_sha256 === null || !matches) return null;
  return { id: row.id, email: row.email, name: row.name, email_verified: row.email_verified === 1 };
}

export interface UserPage {
  readonly users: User[];
  readonly pagination: { page: number; limit: number; total: number; totalPages: number; hasNext: boolean; hasPrev: boolean };
}

/**
 * Users newest first, a page at a time, as Authrim lists them: `search` is a
 * case-insensitive substring of the email or the name (LIKE, with % and _ escaped), and
 * nothing else filters — a client that asks for `?email=` gets an unfiltered page, as it
 * would from Authrim, and must find its user in it.
 */
export async function searchUsers(db: D1Database, q: { search: string | null; page: number; limit: number }): Promise<UserPage> {
  const pattern = q.search === null ? null : `%${q.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const where = pattern === null ? "" : "WHERE email LIKE ?1 ESCAPE '\\' OR name LIKE ?1 ESCAPE '\\'";
  const binds = pattern === null ? [] : [pattern];
  const total =
    (
      await db
        .prepare(`SELECT COUNT(*) AS n FROM users ${where}`)
        .bind(...binds)
        .first<{ n: number }>()
    )?.n ?? 0;
  const rows = await db
    .prepare(
      `SELECT id, email, name, email_verified FROM users ${where} ORDER BY created_at DESC, rowid DESC LIMIT ${q.limit} OFFSET ${(q.page - 1) * q.limit}`,
    )
    .bind(...binds)
    .all<UserRow>();
  const totalPages = Math.ceil(total / q.limit);
  return {
    users: rows.results.map((r) => ({ ...r, email_verified: r.email_verified === 1 })),
    pagination: { page: q.page, limit: q.limit, total, totalPages, hasNext: q.page < totalPages, hasPrev: q.page > 1 },
  };
}
