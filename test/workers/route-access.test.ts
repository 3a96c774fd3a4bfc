/**
 * Every route of the coordinator, listed from the Hono app itself (so a route added later
 * is covered without touching this file), is called without a token, with a wrong one,
 * and with the read-only token: only the public routes answer without one, and the
 * read-only token reaches exactly the routes that only read.
 */
import { describe, expect, it } from "vitest";
import { onlyReads } from "../../coordinator/http/access.ts";
import { api as app } from "../../coordinator/http/api.ts";
import { api } from "./helpers.ts";

/** Public routes and what they answer without an API token. */
const PUBLIC: Readonly<Record<string, number>> = {
  "GET /healthz": 200,
  // A signed seed URL carries its own credential: without a valid signature, 403.
  "GET /seeds/:name": 403,
};

/**
 * The dashboard's pages: a browser without a session gets 401 as an HTML page saying how
 * to get a link, not JSON.
 */
const PAGES: ReadonlySet<string> = new Set(["GET /", "GET /v1/runs/:id/dashboard", "GET /v1/schedules/:id/dashboard", "GET /v1/runs/:a/compare/:b/dashboard"]);

const ROUTES = [
  ...new Map(
    app.routes
      .filter((r) => r.method !== "ALL") // middleware (auth), not routes
      .map((r) => [`${r.method} ${r.path}`, r] as const),
  ).values(),
];

/** A concrete path for a route pattern: parameters get plausible values. */
const concrete = (path: string) => path.replace(/:id|:a|:b/g, "r-mk0abc12-0123abcd").replace(/:name/g, "some-seed");

describe("route access", () => {
  it("lists every route of the API (the table below is complete)", () => {
    expect(ROUTES.length).toBeGreaterThanOrEqual(20);
    expect(ROUTES.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining(["POST /v1/runs", "POST /v1/runs/:id/abort", "PUT /v1/seeds/:name", "POST /v1/sql", "GET /healthz"]),
    );
  });

  it.each(ROUTES.map((r) => [`${r.method} ${r.path}`, r.method, r.path] as const))(
    "%s: public or refused without a token and with a wrong one",
    async (key, method, path) => {
      const init = { method, ...(method === "GET" || method === "HEAD" ? {} : { body: "{}" }) };
      const anonymous = await api(concrete(path), { ...init, token: null });
      const wrong = await api(concrete(path), { ...init, token: "not-the-token" });
      if (key in PUBLIC) {
        expect(anonymous.status).toBe(PUBLIC[key]);
        return;
      }
      expect(anonymous.status).toBe(401);
      expect(wrong.status).toBe(401);
      expect(anonymous.headers.get("content-type")).toBe(PAGES.has(key) ? "text/html; charset=UTF-8" : "application/problem+json");
    },
  );

  it.each(ROUTES.filter((r) => !(`${r.method} ${r.path}` in PUBLIC)).map((r) => [`${r.method} ${r.path}`, r.method, r.path] as const))(
    "%s with the read-only token: allowed only if it only reads",
    async (_key, method, path) => {
      const init = { method, ...(method === "GET" || method === "HEAD" ? {} : { body: "{}" }) };
      const response = await api(concrete(path), { ...init, token: "read-token" });
      if (onlyReads(method, path)) {
        // Past the token check: whatever the route says of its input (404, 400…), not 401/403.
        expect([401, 403]).not.toContain(response.status);
      } else {
        expect(response.status).toBe(403);
        expect(((await response.json()) as { type: string }).type).toMatch(/read-only-token$/);
      }
    },
  );
});
