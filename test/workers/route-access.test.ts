/**
 * Every route of the coordinator, listed from the Hono app itself (so a route added later
 * is covered without touching this file), against every credential a caller can hold: none,
 * a bad token, the read-only token, the API token, dashboard sessions (its own run and page,
 * an abort link's with and without its Origin, another run's, another page's, an expired
 * one) and view links opened a second time or after their expiry. Each cell's expected
 * answer is written out below, not derived from the code under test; the table this test
 * draws is docs/http-api.md's "Who may call what", which must match it.
 */
import { describe, expect, it } from "vitest";
import httpApiDoc from "../../docs/http-api.md?raw";
import { api as app } from "../../coordinator/http/api.ts";
import { CSRF_HEADER } from "../../coordinator/http/dashboard-auth.ts";
import { csrfToken, newGrant, signGrant, type View } from "../../coordinator/http/view-grant.ts";
import { api, READ_TOKEN, TOKEN } from "./helpers.ts";

const RUN = "r-mk0abc12-0123abcd";
const OTHER_RUN = "r-mk0abc12-4567abcd";
const SCHEDULE = "s-mk0abc12-0123abcd";

/** Public routes and what they answer to anyone. */
const PUBLIC: Readonly<Record<string, number>> = {
  "GET /healthz": 200,
  // A signed seed URL carries its own credential: without a valid signature, 403.
  "GET /seeds/:name": 403,
};

/** The dashboard's pages: refused as an HTML page (401) saying how to get a link, not JSON. */
const PAGES: ReadonlySet<string> = new Set(["GET /", "GET /v1/runs/:id/dashboard", "GET /v1/schedules/:id/dashboard", "GET /v1/runs/:a/compare/:b/dashboard"]);

/** What the read-only token may call: every GET, and the POSTs that change nothing. */
const READS = (key: string) => key.startsWith("GET ") || ["POST /v1/sql", "POST /v1/plan", "POST /v1/dashboard-links"].includes(key);

/** What a session of one run's dashboard reads: that run's page and data, not its comparisons. */
const ONE_RUN: ReadonlySet<string> = new Set([
  "GET /v1/runs/:id/dashboard",
  "GET /v1/runs/:id",
  "GET /v1/runs/:id/summary",
  "GET /v1/runs/:id/timeseries",
  "GET /v1/runs/:id/series",
  "GET /v1/runs/:id/query",
  "GET /v1/runs/:id/report",
  "GET /v1/runs/:id/crosscheck",
  "GET /v1/runs/:id/metrics",
  "GET /v1/runs/:id/live",
]);

type Credential = {
  readonly name: string;
  readonly expect: (key: string) => "ok" | number;
  readonly headers: () => Promise<Record<string, string>>;
  readonly query?: () => Promise<string>;
};

const cookieOf = async (view: View, canAbort: boolean, expS = nowS() + 600) => {
  const name = view.kind === "run" ? `run_${view.id}` : view.kind === "schedule" ? `schedule_${view.id}` : view.kind;
  const session = newGrant(view, canAbort, expS);
  return { cookie: `edgeload_view_${name}=${await signGrant(TOKEN, "session", session)}`, csrf: await csrfToken(TOKEN, session) };
};
const nowS = () => Math.floor(Date.now() / 1000);
const ORIGIN = "http://edgeload.test";
/** Outside a session's view: a page answers with its HTML 401, an API route 403 naming the view. */
const outside = (key: string) => (PAGES.has(key) ? 401 : 403);
const anonymous = (key: string) => PUBLIC[key] ?? 401;

const CREDENTIALS: readonly Credential[] = [
  { name: "none", expect: anonymous, headers: async () => ({}) },
  { name: "bad token", expect: anonymous, headers: async () => ({ authorization: "Bearer not-the-token-but-long-enough-to-try" }) },
  { name: "read token", expect: (k) => PUBLIC[k] ?? (READS(k) ? "ok" : 403), headers: async () => ({ authorization: `Bearer ${READ_TOKEN}` }) },
  { name: "API token", expect: (k) => PUBLIC[k] ?? "ok", headers: async () => ({ authorization: `Bearer ${TOKEN}` }) },
  {
    name: "session: its run",
    expect: (k) => PUBLIC[k] ?? (ONE_RUN.has(k) ? "ok" : outside(k)),
    headers: async () => ({ cookie: (await cookieOf({ kind: "run", id: RUN }, false)).cookie, origin: ORIGIN }),
  },
  {
    name: "session: abort link, CSRF, Origin",
    expect: (k) => PUBLIC[k] ?? (ONE_RUN.has(k) || k === "POST /v1/runs/:id/abort" ? "ok" : outside(k)),
    headers: async () => {
      const { cookie, csrf } = await cookieOf({ kind: "run", id: RUN }, true);
      return { cookie, origin: ORIGIN, [CSRF_HEADER]: csrf };
    },
  },
  {
    name: "session: abort link, CSRF, no Origin",
    expect: (k) => PUBLIC[k] ?? (ONE_RUN.has(k) ? "ok" : outside(k)),
    headers: async () => {
      const { cookie, csrf } = await cookieOf({ kind: "run", id: RUN }, true);
      return { cookie, [CSRF_HEADER]: csrf };
    },
  },
  {
    name: "session: another run",
    expect: (k) => PUBLIC[k] ?? outside(k),
    headers: async () => ({ cookie: (await cookieOf({ kind: "run", id: "r-mk0abc12-89abcdef" }, true)).cookie, origin: ORIGIN }),
  },
  {
    name: "session: another page (runs list)",
    expect: (k) => PUBLIC[k] ?? (k === "GET /" || k === "GET /v1/runs" ? "ok" : outside(k)),
    headers: async () => ({ cookie: (await cookieOf({ kind: "runs" }, false)).cookie, origin: ORIGIN }),
  },
  {
    name: "session: expired",
    expect: anonymous,
    headers: async () => ({ cookie: (await cookieOf({ kind: "run", id: RUN }, false, nowS() - 1)).cookie, origin: ORIGIN }),
  },
  {
    name: "link: expired",
    expect: anonymous,
    headers: async () => ({}),
    query: async () => signGrant(TOKEN, "link", newGrant({ kind: "run", id: RUN }, false, nowS() - 1)),
  },
  { name: "link: opened before", expect: anonymous, headers: async () => ({}), query: spentLink },
];

/** A view link to RUN's page that has been opened once already. */
async function spentLink(): Promise<string> {
  const grant = await signGrant(TOKEN, "link", newGrant({ kind: "run", id: RUN }, false, nowS() + 600));
  const first = await api(`/v1/runs/${RUN}/dashboard?view=${encodeURIComponent(grant)}`, { token: null, redirect: "manual" });
  expect(first.status).toBe(303);
  return grant;
}

const ROUTES = [
  ...new Map(
    app.routes
      .filter((r) => r.method !== "ALL") // middleware (auth), not routes
      .map((r) => [`${r.method} ${r.path}`, r] as const),
  ).values(),
];

/** A concrete path for a route pattern: the schedule's for schedule routes, RUN and OTHER_RUN for runs'. */
const concrete = (path: string) =>
  path.startsWith("/v1/schedules/")
    ? path.replace(":id", SCHEDULE)
    : path
        .replace(/:id|:a/g, RUN)
        .replace(/:b/g, OTHER_RUN)
        .replace(/:name/g, "some-seed");

async function call(key: string, method: string, path: string, credential: Credential): Promise<number> {
  const query = credential.query ? `?view=${encodeURIComponent(await credential.query())}` : "";
  const init = {
    method,
    token: null,
    redirect: "manual" as const,
    headers: await credential.headers(),
    ...(method === "GET" || method === "HEAD" ? {} : { body: "{}" }),
  };
  const response = await api(concrete(path) + query, init);
  if (response.status === 401 || response.status === 403) {
    // Refusals say why, as a page for a browser or as problem JSON for a client.
    expect(response.headers.get("content-type"), key).toBe(PAGES.has(key) && response.status === 401 ? "text/html; charset=UTF-8" : "application/problem+json");
  }
  await response.body?.cancel();
  return response.status;
}

const outcome = (status: number): "ok" | number => (status === 401 || status === 403 ? status : "ok");

describe("route access", () => {
  it("lists every route of the API (the table below is complete)", () => {
    expect(ROUTES.length).toBeGreaterThanOrEqual(30);
    expect(ROUTES.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining(["POST /v1/runs", "POST /v1/runs/:id/abort", "PUT /v1/seeds/:name", "POST /v1/sql", "GET /healthz"]),
    );
  });

  it("every route × every credential answers as the table says, and docs/http-api.md shows that table", { timeout: 120_000 }, async () => {
    const rows: string[] = [];
    const wrong: string[] = [];
    for (const route of ROUTES) {
      const key = `${route.method} ${route.path}`;
      const cells: string[] = [];
      for (const credential of CREDENTIALS) {
        const status = await call(key, route.method, route.path, credential);
        const got = key in PUBLIC ? status : outcome(status);
        const expected = credential.expect(key);
        if (got !== expected) wrong.push(`${key} with ${credential.name}: expected ${expected}, got ${status}`);
        cells.push(expected === "ok" ? "✓" : String(expected));
      }
      rows.push(`| \`${key}\` | ${cells.join(" | ")} |`);
    }
    expect(wrong).toEqual([]);
    const table = [`| route | ${CREDENTIALS.map((c) => c.name).join(" | ")} |`, `|---|${CREDENTIALS.map(() => "---").join("|")}|`, ...rows].join("\n");
    const documented = /<!-- route-access:start -->\n([\s\S]*?)\n<!-- route-access:end -->/.exec(httpApiDoc)?.[1];
    expect(documented, `docs/http-api.md's "Who may call what" should be:\n${table}`).toBe(table);
  });
});
