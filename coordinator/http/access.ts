/**
 * Who may call a /v1 route. Two bearer tokens, both compared in constant time:
 *
 * - `EDGELOAD_API_TOKEN` (required) may do everything.
 * - `EDGELOAD_READ_TOKEN` (optional) may only read: every GET, and the POSTs that
 *   change nothing (`/v1/sql`, read-only SQL; `/v1/plan`, a plan without a run;
 *   `/v1/dashboard-links`, a read-only view link). It is what
 *   a dashboard, a CI job reading results or a teammate gets, so a leaked read token
 *   cannot start load. Anything else answers 403 naming the scope.
 *
 * A browser with a dashboard session cookie (dashboard-auth.ts) has the scope of the token
 * that opened the dashboard; its requests that change something must come from this origin.
 *
 * Public, outside /v1: `/healthz`, and signed seed URLs (`/seeds/:name`, which carry their
 * own credential).
 */
import type { Context, MiddlewareHandler, Next } from "hono";
import { secretsEqual } from "../../core/data/web-crypto.ts";
import { sameOrigin, sessionScope } from "./dashboard-auth.ts";
import type { Env } from "../../workers/env.ts";
import { forbidden, notConfigured, unauthorized } from "./api-errors.ts";
import type { Scope } from "./scope.ts";

/** POST routes a read-only token may call: they read, or plan without running. */
export const READ_ONLY_POSTS: ReadonlySet<string> = new Set(["/v1/sql", "/v1/plan", "/v1/dashboard-links"]);

/** Whether a request of `method` to `path` only reads. */
export function onlyReads(method: string, path: string): boolean {
  return method === "GET" || method === "HEAD" || (method === "POST" && READ_ONLY_POSTS.has(path));
}

/**
 * Values .dev.vars.example once carried, which the Deploy to Cloudflare button pre-fills:
 * a deployment that kept one would answer to a token anyone can read in this repository.
 */
const PLACEHOLDER_TOKENS: ReadonlySet<string> = new Set(["generate-one-with-openssl-rand-base64-32"]);

/** Why the deployment's API token cannot be used, or null when it can. */
export function apiTokenProblem(token: string | undefined): string | null {
  if (!token) return "EDGELOAD_API_TOKEN is not set; run `wrangler secret put EDGELOAD_API_TOKEN`";
  if (PLACEHOLDER_TOKENS.has(token.trim()))
    return "EDGELOAD_API_TOKEN is the example's placeholder, which anyone can read; set a real one: `openssl rand -base64 32 | npx wrangler secret put EDGELOAD_API_TOKEN`";
  return null;
}

export const requireToken: MiddlewareHandler<{ Bindings: Env; Variables: { scope: Scope } }> = async (c, next) => {
  const full = c.env.EDGELOAD_API_TOKEN;
  const problem = apiTokenProblem(full);
  if (problem) throw notConfigured(problem);
  const header = c.req.header("authorization") ?? "";
  // A dashboard in a browser: its session cookie stands for the token that opened it.
  if (!header) {
    const scope = await sessionScope(c, Math.floor(Date.now() / 1000));
    if (scope) return allow(c, next, scope, { viaSession: true });
  }
  const scope = await tokenScope(c.env, header);
  if (!scope) throw unauthorized();
  return allow(c, next, scope, { viaSession: false });
};

/** The scope of an `Authorization: Bearer …` header's token, or null when it is neither token. */
export async function tokenScope(env: Env, authorization: string): Promise<Scope | null> {
  const full = env.EDGELOAD_API_TOKEN;
  if (!full || apiTokenProblem(full)) return null;
  const presented = authorization.startsWith("Bearer ") ? authorization.slice(7) : "";
  const read = env.EDGELOAD_READ_TOKEN;
  // Both comparisons always run, so timing does not tell which token was close.
  const [isFull, isRead] = await Promise.all([secretsEqual(presented, full), read ? secretsEqual(presented, read) : Promise.resolve(false)]);
  return isFull ? "all" : isRead ? "read" : null;
}

async function allow(
  c: Context<{ Bindings: Env; Variables: { scope: Scope } }>,
  next: Next,
  scope: Scope,
  { viaSession }: { viaSession: boolean },
): Promise<void> {
  const { pathname } = new URL(c.req.url);
  const reads = onlyReads(c.req.method, pathname);
  if (scope === "read" && !reads) {
    throw forbidden(
      "read-only-token",
      "Read-only token",
      `${viaSession ? "a read-only dashboard session" : "this token"} may only read (GET, POST /v1/sql, POST /v1/plan); ${c.req.method} ${pathname} needs EDGELOAD_API_TOKEN`,
    );
  }
  // A cookie goes with every request the browser makes, whoever's page makes it.
  if (viaSession && !reads && !sameOrigin(c)) {
    throw forbidden("cross-origin", "Cross-origin request", `${c.req.method} ${pathname} with a dashboard session must come from the dashboard's own origin`);
  }
  c.set("scope", scope);
  await next();
}
