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
 * A browser with a dashboard session (dashboard-auth.ts) reads only its own page's data,
 * whichever token asked for its link: a link printed in a CI log grants no more than that.
 *
 * Public, outside /v1: `/healthz`, and signed seed URLs (`/seeds/:name`, which carry their
 * own credential).
 */
import type { MiddlewareHandler } from "hono";
import { secretsEqual } from "../../core/data/web-crypto.ts";
import { sessionFor, writeAllowed } from "./dashboard-auth.ts";
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

/** Shorter tokens can be guessed or were typed by hand: `openssl rand -base64 32` gives 44 characters. */
export const MIN_TOKEN_LENGTH = 32;

const MAKE_ONE = (name: string) => `\`openssl rand -base64 32 | npx wrangler secret put ${name}\``;

/** Why the deployment's tokens cannot be used, or null when they can: the API token, and the read token if set. */
export function apiTokenProblem(token: string | undefined, readToken?: string): string | null {
  if (!token) return `EDGELOAD_API_TOKEN is not set; set one: ${MAKE_ONE("EDGELOAD_API_TOKEN")}`;
  if (PLACEHOLDER_TOKENS.has(token.trim()))
    return `EDGELOAD_API_TOKEN is the example's placeholder, which anyone can read; set a real one: ${MAKE_ONE("EDGELOAD_API_TOKEN")}`;
  for (const [name, value] of [
    ["EDGELOAD_API_TOKEN", token],
    ["EDGELOAD_READ_TOKEN", readToken],
  ] as const) {
    if (value !== undefined && value.length < MIN_TOKEN_LENGTH)
      return `${name} has ${value.length} characters; a token needs at least ${MIN_TOKEN_LENGTH}: ${MAKE_ONE(name)}`;
  }
  return null;
}

export const requireToken: MiddlewareHandler<{ Bindings: Env; Variables: { scope: Scope } }> = async (c, next) => {
  const problem = apiTokenProblem(c.env.EDGELOAD_API_TOKEN, c.env.EDGELOAD_READ_TOKEN);
  if (problem) throw notConfigured(problem);
  const header = c.req.header("authorization") ?? "";
  // A dashboard in a browser: its session reads its own page's data, and nothing else.
  if (!header) {
    const { pathname } = new URL(c.req.url);
    const session = await sessionFor(c, c.req.method, pathname, Math.floor(Date.now() / 1000));
    if (session.kind === "covered") {
      if (c.req.method !== "GET" && c.req.method !== "HEAD" && !(await writeAllowed(c, session.grant))) {
        throw forbidden(
          "cross-origin",
          "Write without the dashboard's CSRF token",
          `${c.req.method} ${pathname} from a dashboard session must come from its own page, with its CSRF token`,
        );
      }
      c.set("scope", "read");
      return next();
    }
    if (session.kind === "elsewhere") {
      throw forbidden(
        "outside-view",
        "Outside this browser's dashboard pages",
        `this browser's dashboard sessions read ${session.pages.join(", ")} only; ${c.req.method} ${pathname} needs its own link (\`edgeload dashboard\`) or a bearer token`,
      );
    }
  }
  const scope = await tokenScope(c.env, header);
  if (!scope) throw unauthorized();
  const { pathname } = new URL(c.req.url);
  if (scope === "read" && !onlyReads(c.req.method, pathname)) {
    throw forbidden(
      "read-only-token",
      "Read-only token",
      `this token may only read (GET, POST /v1/sql, POST /v1/plan); ${c.req.method} ${pathname} needs EDGELOAD_API_TOKEN`,
    );
  }
  c.set("scope", scope);
  await next();
};

/** The scope of an `Authorization: Bearer …` header's token, or null when it is neither token. */
export async function tokenScope(env: Env, authorization: string): Promise<Scope | null> {
  const full = env.EDGELOAD_API_TOKEN;
  if (!full || apiTokenProblem(full, env.EDGELOAD_READ_TOKEN)) return null;
  const presented = authorization.startsWith("Bearer ") ? authorization.slice(7) : "";
  const read = env.EDGELOAD_READ_TOKEN;
  // Both comparisons always run, so timing does not tell which token was close.
  const [isFull, isRead] = await Promise.all([secretsEqual(presented, full), read ? secretsEqual(presented, read) : Promise.resolve(false)]);
  return isFull ? "all" : isRead ? "read" : null;
}
