/**
 * A small user/messaging API under `/app`, for the closed-model examples (examples/): a
 * user lifecycle (register → login → me → logout) whose steps pass a token along, and a
 * message send endpoint with an SLA. Mounted by index.ts; nothing else of the target
 * changes. State (accounts, tokens) is in the target's D1 (migrations/0002_app.sql), so a
 * token issued by one isolate works in any other, and logout is visible to everyone.
 *
 * | route | answer |
 * |---|---|
 * | `POST /app/v1/user` `{username, email, password}` | 201 `{username, email}`; 409 when the username or email exists; 400 on bad input |
 * | `POST /app/login` `{username \| email, password}` | 200 `{token}`; 401 on bad credentials |
 * | `GET /app/user` (Bearer token) | 200 `{username, email, createdAt}`; 401 for a missing, unknown or logged-out token |
 * | `DELETE /app/logout` (Bearer token) | 204; 401 when the token is not live |
 * | `POST /app/messages/send` (Bearer) `{conv_id, from_device_id, to_device_id, ciphertext, header}` | 202 `{message_id}`; 400 on a bad body (ciphertext must be base64) |
 * | `GET /app/stats` | counts of users, live and revoked tokens (for tests) |
 *
 * The messaging bearer must equal `APP_MESSAGING_TOKEN` when that var is set; otherwise any
 * non-empty token is accepted. Passwords and tokens are stored as SHA-256 hashes only.
 */
import { Hono, type Context } from "hono";
import { randomHex, secretsEqual, sha256Hex } from "../../core/data/web-crypto.ts";

export interface DemoAppEnv {
  readonly TARGET_DB: D1Database;
  readonly APP_MESSAGING_TOKEN?: string;
}

type App = { Bindings: DemoAppEnv };
export const demoApp = new Hono<App>();

const USERNAME = /^[A-Za-z0-9_.-]{3,64}$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

async function jsonOf(c: Context<App>): Promise<Record<string, unknown> | null> {
  try {
    const body = await c.req.json();
    return typeof body === "object" && body !== null && !Array.isArray(body) ? body : null;
  } catch {
    return null;
  }
}

function bearer(c: Context<App>): string | null {
  const m = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
  return m ? m[1]! : null;
}

const problem = (c: Context<App>, status: 400 | 401 | 409, detail: string) => c.json({ error: detail }, status);

demoApp.post("/v1/user", async (c) => {
  const body = await jsonOf(c);
  const { username, email, password } = body ?? {};
  if (typeof username !== "string" || !USERNAME.test(username)) return problem(c, 400, "username: 3–64 letters, digits, _ . -");
  if (typeof email !== "string" || !EMAIL.test(email)) return problem(c, 400, "email: an address");
  if (typeof password !== "string" || password.length < 8 || password.length > 256) return problem(c, 400, "password: 8–256 characters");
  const salt = randomHex(16);
  // One statement: a duplicate username or email changes nothing, and says so.
  const result = await c.env.TARGET_DB.prepare(
    "INSERT INTO app_users (username, email, password_sha256, salt, created_at) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
  )
    .bind(username, email.toLowerCase(), await sha256Hex(salt + password), salt, Date.now())
    .run();
  if (result.meta.changes === 0) return problem(c, 409, "username or email already registered");
  return c.json({ username, email: email.toLowerCase() }, 201);
});

demoApp.post("/login", async (c) => {
  const body = await jsonOf(c);
  const { username, email, password } = body ?? {};
  if (typeof password !== "string" || (typeof username !== "string" && typeof email !== "string")) return problem(c, 400, "username (or email) and password");
  const user =
    typeof username === "string"
      ? await c.env.TARGET_DB.prepare("SELECT username, password_sha256, salt FROM app_users WHERE username = ?1")
          .bind(username)
          .first<{ username: string; password_sha256: string; salt: string }>()
      : await c.env.TARGET_DB.prepare("SELECT username, password_sha256, salt FROM app_users WHERE email = ?1")
          .bind(String(email).toLowerCase())
          .first<{ username: string; password_sha256: string; salt: string }>();
  if (!user || (await sha256Hex(user.salt + password)) !== user.password_sha256) return problem(c, 401, "invalid credentials");
  const token = randomHex(24);
  await c.env.TARGET_DB.prepare("INSERT INTO app_tokens (token_sha256, username, created_at) VALUES (?1, ?2, ?3)")
    .bind(await sha256Hex(token), user.username, Date.now())
    .run();
  return c.json({ token });
});

demoApp.get("/user", async (c) => {
  const token = bearer(c);
  if (!token) return problem(c, 401, "a bearer token is required");
  const user = await c.env.TARGET_DB.prepare(
    "SELECT u.username, u.email, u.created_at FROM app_tokens t JOIN app_users u ON u.username = t.username WHERE t.token_sha256 = ?1 AND t.revoked_at IS NULL",
  )
    .bind(await sha256Hex(token))
    .first<{ username: string; email: string; created_at: number }>();
  if (!user) return problem(c, 401, "unknown or logged-out token");
  return c.json({ username: user.username, email: user.email, createdAt: new Date(user.created_at).toISOString() });
});

demoApp.delete("/logout", async (c) => {
  const token = bearer(c);
  if (!token) return problem(c, 401, "a bearer token is required");
  const result = await c.env.TARGET_DB.prepare("UPDATE app_tokens SET revoked_at = ?2 WHERE token_sha256 = ?1 AND revoked_at IS NULL")
    .bind(await sha256Hex(token), Date.now())
    .run();
  if (result.meta.changes === 0) return problem(c, 401, "unknown or logged-out token");
  return c.body(null, 204);
});

demoApp.post("/messages/send", async (c) => {
  const token = bearer(c);
  const expected = c.env.APP_MESSAGING_TOKEN;
  if (!token || (expected && !(await secretsEqual(token, expected)))) return problem(c, 401, "a valid bearer token is required");
  const body = await jsonOf(c);
  if (!body) return problem(c, 400, "a JSON object body is required");
  for (const field of ["conv_id", "from_device_id", "to_device_id"] as const) {
    const v = body[field];
    if (!(typeof v === "string" && v.length > 0) && !(typeof v === "number" && Number.isFinite(v))) return problem(c, 400, `${field}: a non-empty id`);
  }
  const { ciphertext, header } = body;
  if (typeof ciphertext !== "string" || ciphertext.length === 0 || !BASE64.test(ciphertext)) return problem(c, 400, "ciphertext: base64");
  if (header === undefined || header === null || header === "") return problem(c, 400, "header: required");
  return c.json({ message_id: crypto.randomUUID() }, 202);
});

demoApp.get("/stats", async (c) => {
  const row = await c.env.TARGET_DB.prepare(
    "SELECT (SELECT COUNT(*) FROM app_users) AS users, (SELECT COUNT(*) FROM app_tokens WHERE revoked_at IS NULL) AS liveTokens, (SELECT COUNT(*) FROM app_tokens WHERE revoked_at IS NOT NULL) AS revokedTokens",
  ).first<{ users: number; liveTokens: number; revokedTokens: number }>();
  return c.json(row);
});
