/**
 * The live dashboard's routes.
 *
 * Pages (mounted before the token check: they answer a missing session with an HTML page
 * that says how to get in, not with JSON):
 *   GET /                       every run, linking to their dashboards
 *   GET /v1/runs/:id/dashboard  one run, live
 *   GET /v1/schedules/:id/dashboard  a schedule's runs over time (its trend)
 *   GET /v1/runs/:a/compare/:b/dashboard  two runs' charts laid over each other, with compare's verdicts
 * Either takes `?view=<grant>` from a view link, trades it for a session cookie and
 * redirects to itself without it (dashboard-auth.ts).
 *
 * API (behind the token check, so the bearer token or a session cookie):
 *   POST /v1/dashboard-links    `{ "run"?: id }` → a view link for the caller's scope
 *   GET  /v1/runs/:id/live      the run's Server-Sent Events, from its RunCoordinator
 */
import { Hono, type Context } from "hono";
import { comparePage, deniedPage, indexPage, runPage, schedulePage } from "../../dashboard/pages.ts";
import { tokenScope } from "./access.ts";
import type { Scope } from "./scope.ts";
import { sessionScope, startSession, verifyGrant, viewLink } from "./dashboard-auth.ts";
import type { RoutesEnv } from "./routes-env.ts";
import { badRequest, notFound } from "./api-errors.ts";
import { RUN_ID } from "./run-id.ts";
import { coordinatorFor } from "./coordinator-stub.ts";

type App = { Bindings: RoutesEnv; Variables: { scope: Scope } };

const nowS = () => Math.floor(Date.now() / 1000);

/** The pages: HTML for people, refused with an HTML explanation when not signed in. */
export const dashboardPages = new Hono<App>();

dashboardPages.get("/", (c) => page(c, indexPage));

dashboardPages.get("/v1/runs/:a/compare/:b/dashboard", (c) => page(c, (scope) => comparePage(c.req.param("a"), c.req.param("b"), scope)));

// The session is checked first; an unknown schedule is then the page's own "not found".
dashboardPages.get("/v1/schedules/:id/dashboard", (c) => page(c, (scope) => schedulePage(c.req.param("id"), scope)));

dashboardPages.get("/v1/runs/:id/dashboard", (c) => {
  const id = c.req.param("id");
  if (!RUN_ID.test(id)) throw notFound(`run ${id}`);
  return page(c, (scope) => runPage(id, scope));
});

async function page(c: Context<App>, render: (scope: Scope) => string): Promise<Response> {
  const url = new URL(c.req.url);
  c.header("cache-control", "no-store");
  c.header("referrer-policy", "no-referrer");
  // Only this origin's scripts run, and no other site may frame the page (its Abort button).
  c.header("content-security-policy", "script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'");
  c.header("x-frame-options", "DENY");
  const grant = url.searchParams.get("view");
  if (grant !== null) {
    const check = await verifyGrant(c.env, "link", grant, nowS());
    if (!check.ok) {
      const why = check.reason === "expired" ? "This dashboard link has expired (links are valid for 10 minutes)." : "This dashboard link is not valid.";
      return c.html(deniedPage(why), 401);
    }
    await startSession(c, check.scope, nowS());
    url.searchParams.delete("view");
    return c.redirect(url.pathname + url.search, 303);
  }
  // `curl -H "Authorization: Bearer …"` may fetch the pages too.
  const scope = (await sessionScope(c, nowS())) ?? (await tokenScope(c.env, c.req.header("authorization") ?? ""));
  if (!scope) return c.html(deniedPage("This page needs a dashboard session, and this browser has none (or it has expired)."), 401);
  return c.html(render(scope));
}

/** The routes the dashboard's scripts call, under /v1 behind the token check. */
export const dashboardApi = new Hono<App>();

dashboardApi.post("/dashboard-links", async (c) => {
  const text = await c.req.text();
  let body: { run?: unknown } = {};
  if (text.trim()) {
    try {
      body = JSON.parse(text) as { run?: unknown };
    } catch {
      throw badRequest("the body must be JSON", [{ field: "(body)", detail: "not valid JSON" }]);
    }
  }
  if (body.run !== undefined && (typeof body.run !== "string" || !RUN_ID.test(body.run))) {
    throw badRequest("bad dashboard link request", [{ field: "run", detail: "a run id such as r-mh2k3x1a-1a2b3c4d" }]);
  }
  const path = body.run ? `/v1/runs/${body.run}/dashboard` : "/";
  return c.json(await viewLink(c.env, new URL(c.req.url).origin, path, c.get("scope"), nowS()), 201);
});

dashboardApi.get("/runs/:id/live", async (c) => {
  const id = c.req.param("id");
  if (!RUN_ID.test(id)) throw notFound(`run ${id}`);
  const response = await coordinatorFor(c.env, id).fetch("https://coordinator/live");
  if (response.status === 404) throw notFound(`run ${id}`);
  return response;
});
