/**
 * Who may call a /v1 route. Two bearer tokens, both compared in constant time:
 *
 * - `EDGELOAD_API_TOKEN` (required) may do everything.
 * - `EDGELOAD_READ_TOKEN` (optional) may only read: every GET, and the two POSTs that
 *   change nothing (`/v1/sql`, read-only SQL; `/v1/plan`, a plan without a run). It is what
 *   a dashboard, a CI job reading results or a teammate gets, so a leaked read token
 *   cannot start load. Anything else answers 403 naming the scope.
 *
 * Public, outside /v1: `/healthz`, and signed seed URLs (`/seeds/:name`, which carry their
 * own credential).
 */
import type { MiddlewareHandler } from "hono";
import { secretsEqual } from "../workers/web-crypto.ts";
import type { Env } from "./env.ts";
import { forbidden, notConfigured, unauthorized } from "./problems.ts";

/** POST routes a read-only token may call: they read, or plan without running. */
export const READ_ONLY_POSTS: ReadonlySet<string> = new Set(["/v1/sql", "/v1/plan"]);

export type Scope = "all" | "read";

/** Whether a request of `method` to `path` only reads. */
export function onlyReads(method: string, path: string): boolean {
  return method === "GET" || method === "HEAD" || (method === "POST" && READ_ONLY_POSTS.has(path));
}

export const requireToken: MiddlewareHandler<{ Bindings: Env; Variables: { scope: Scope } }> = async (c, next) => {
  const full = c.env.EDGELOAD_API_TOKEN;
  if (!full) throw notConfigured("EDGELOAD_API_TOKEN is not set; run `wrangler secret put EDGELOAD_API_TOKEN`");
  const header = c.req.header("authorization") ?? "";
  const presented = header.startsWith("Bearer ") ? header.slice(7) : "";
  const read = c.env.EDGELOAD_READ_TOKEN;
  // Both comparisons always run, so timing does not tell which token was close.
  const [isFull, isRead] = await Promise.all([secretsEqual(presented, full), read ? secretsEqual(presented, read) : Promise.resolve(false)]);
  if (!isFull && !isRead) throw unauthorized();
  if (!isFull && !onlyReads(c.req.method, new URL(c.req.url).pathname)) {
    throw forbidden("read-only-token", "Read-only token", `this token may only read (GET, POST /v1/sql, POST /v1/plan); ${c.req.method} ${new URL(c.req.url).pathname} needs EDGELOAD_API_TOKEN`);
  }
  c.set("scope", isFull ? "all" : "read");
  await next();
};
