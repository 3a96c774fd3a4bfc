/**
 * The admin check shared by the target's admin routes (admin-app.ts) and the config writes
 * (config-app.ts): `Authorization: Bearer <ADMIN_API_SECRET>`, compared in constant time.
 * Without a configured secret every admin route answers 503 rather than opening up.
 */
import type { Context } from "hono";
import { secretsEqual } from "../../core/data/web-crypto.ts";

/** The bindings the check reads; every target app that has admin routes carries them. */
export interface AdminEnv {
  readonly ADMIN_API_SECRET?: string;
}

/** null when the request carries the admin bearer; otherwise the 401 (or 503) to answer. */
export async function requireAdmin<E extends { Bindings: AdminEnv }>(c: Context<E>): Promise<Response | null> {
  const expected = c.env.ADMIN_API_SECRET;
  if (!expected) return c.json({ error: "ADMIN_API_SECRET is not configured" }, 503);
  const presented = (c.req.header("authorization") ?? "").replace(/^Bearer /, "");
  return (await secretsEqual(presented, expected)) ? null : c.json({ error: "unauthorized" }, 401);
}
