/**
 * The live dashboard's routes.
 *
 * Pages (mounted before the token check: they answer a missing session with an HTML page
 * that says how to get in, not with JSON):
 *   GET /                       every run, linking to their dashboards
 *   GET /v1/runs/:id/dashboard  one run, live
 *   GET /v1/schedules/:id/dashboard  a schedule's runs over time (its trend)
 *   GET /v1/runs/:a/compare/:b/dashboard  two runs' charts laid over each other, with compare's verdicts
 * Each takes `?view=<grant>` from its own view link, spends it for a session of that page and
 * redirects to itself without it (dashboard-auth.ts).
 *
 * API (behind the token check, so the bearer token or a session of the page that reads it):
 *   POST /v1/dashboard-links    a single-use view link to one page (bearer token only)
 *   GET  /v1/runs/:id/live      the run's Server-Sent Events, from its RunCoordinator
 */
import { Hono, type Context } from "hono";
import { comparePage, deniedPage, indexPage, runPage, schedulePage } from "../../dashboard/pages.ts";
import { tokenScope } from "./access.ts";
import type { Scope } from "./scope.ts";
import { abortToken, openLink, sessionFor, startSession, VIEW_LINK_TTL_S, viewLink } from "./dashboard-auth.ts";
import { isScheduleId, parseView, type Grant, type View } from "./view-grant.ts";
import type { RoutesEnv } from "./routes-env.ts";
import { badRequest, forbidden, notFound } from "./api-errors.ts";
import { RUN_ID } from "./run-id.ts";
import { coordinatorFor } from "./coordinator-stub.ts";
import { endedRunLive } from "./ended-run-live.ts";

type App = { Bindings: RoutesEnv; Variables: { scope: Scope } };

const nowS = () => Math.floor(Date.now() / 1000);

/** The pages: HTML for people, refused with an HTML explanation when not signed in. */
export const dashboardPages = new Hono<App>();

dashboardPages.get("/", (c) => page(c, () => indexPage()));

dashboardPages.get("/v1/runs/:a/compare/:b/dashboard", (c) => {
  if (!parseView({ kind: "compare", a: c.req.param("a"), b: c.req.param("b") })) throw notFound(`runs ${c.req.param("a")} and ${c.req.param("b")}`);
  return page(c, () => comparePage(c.req.param("a"), c.req.param("b")));
});

// The session is checked first; an unknown schedule is then the page's own "not found".
dashboardPages.get("/v1/schedules/:id/dashboard", (c) => {
  const id = c.req.param("id");
  if (!isScheduleId(id)) throw notFound(`schedule ${id}`);
  return page(c, () => schedulePage(id));
});

dashboardPages.get("/v1/runs/:id/dashboard", (c) => {
  const id = c.req.param("id");
  if (!RUN_ID.test(id)) throw notFound(`run ${id}`);
  return page(c, (abortCsrf) => runPage(id, abortCsrf));
});

const DENIED: Record<string, string> = {
  expired: `This dashboard link has expired (links are valid for ${VIEW_LINK_TTL_S / 60} minutes).`,
  spent: "This dashboard link was opened before: a link signs one browser in, once (a chat app's link preview may have opened it).",
  other_page: "This dashboard link is for another page.",
};

/**
 * A dashboard page (its session and links name it by its path): a view link in `?view=` is
 * spent for a session of this page; else the browser's session of this page, or a bearer
 * token (`curl -H "Authorization: Bearer …"`).
 * `render` gets the abort button's CSRF token when the session may abort.
 */
async function page(c: Context<App>, render: (abortCsrf: string | null) => string): Promise<Response> {
  const url = new URL(c.req.url);
  c.header("cache-control", "no-store");
  c.header("referrer-policy", "no-referrer");
  // Only this origin's scripts run, and no other site may frame the page (its Abort button).
  c.header("content-security-policy", "script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'");
  c.header("x-frame-options", "DENY");
  const grant = url.searchParams.get("view");
  if (grant !== null) {
    const opened = await openLink(c.env, grant, url.pathname, nowS());
    if (!opened.ok) return c.html(deniedPage(DENIED[opened.reason] ?? "This dashboard link is not valid."), 401);
    await startSession(c, opened.grant, nowS());
    url.searchParams.delete("view");
    return c.redirect(url.pathname + url.search, 303);
  }
  const session = await sessionFor(c, "GET", url.pathname, nowS());
  if (session.kind === "covered") return c.html(render(await abortCsrfOf(c, session.grant)));
  if (await tokenScope(c.env, c.req.header("authorization") ?? "")) return c.html(render(null));
  const why =
    session.kind === "elsewhere"
      ? `This browser's dashboard sessions are for ${session.pages.join(", ")}; this page needs its own link.`
      : "This page needs a dashboard session, and this browser has none (or it has expired).";
  return c.html(deniedPage(why), 401);
}

function abortCsrfOf(c: Context<App>, session: Grant): Promise<string | null> {
  return abortToken(c.env, session) ?? Promise.resolve(null);
}

/** The routes the dashboard's scripts call, under /v1 behind the token check. */
export const dashboardApi = new Hono<App>();

/**
 * `{ "run": id }`, `{ "schedule": id }`, `{ "compare": [a, b] }` or `{}` (the runs list) →
 * a single-use view link to that page; `"abort": true` with a run (the full token only)
 * lets its session abort the run too.
 */
dashboardApi.post("/dashboard-links", async (c) => {
  const body = await jsonBody(await c.req.text());
  const view = linkView(body);
  const canAbort = body.abort === true;
  if (body.abort !== undefined && typeof body.abort !== "boolean")
    throw badRequest("bad dashboard link request", [{ field: "abort", detail: "true or false" }]);
  if (canAbort && (view.kind !== "run" || c.get("scope") !== "all")) {
    throw forbidden("read-only-token", "Abort needs the API token", "a link that may abort is given for one run, to EDGELOAD_API_TOKEN only");
  }
  return c.json(await viewLink(c.env, new URL(c.req.url).origin, view, canAbort, nowS()), 201);
});

async function jsonBody(text: string): Promise<Record<string, unknown>> {
  if (!text.trim()) return {};
  try {
    const body = JSON.parse(text) as unknown;
    if (typeof body === "object" && body !== null && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw badRequest("the body must be a JSON object", [{ field: "(body)", detail: "not a JSON object" }]);
}

function linkView(body: Record<string, unknown>): View {
  const asked = [body.run !== undefined && "run", body.schedule !== undefined && "schedule", body.compare !== undefined && "compare"].filter(Boolean);
  if (asked.length > 1) throw badRequest("bad dashboard link request", [{ field: asked[1] as string, detail: "one page per link: run, schedule or compare" }]);
  if (body.run !== undefined) return parseView({ kind: "run", id: body.run }) ?? bad("run", "a run id such as r-mh2k3x1a-1a2b3c4d");
  if (body.schedule !== undefined) return parseView({ kind: "schedule", id: body.schedule }) ?? bad("schedule", "a schedule id such as s-mh2k3x1a-1a2b3c4d");
  if (body.compare !== undefined) {
    const [a, b] = Array.isArray(body.compare) && body.compare.length === 2 ? body.compare : [];
    return parseView({ kind: "compare", a, b }) ?? bad("compare", "two run ids, [baseline, candidate]");
  }
  return { kind: "runs" };
}

function bad(field: string, detail: string): never {
  throw badRequest("bad dashboard link request", [{ field, detail }]);
}

dashboardApi.get("/runs/:id/live", async (c) => {
  const id = c.req.param("id");
  if (!RUN_ID.test(id)) throw notFound(`run ${id}`);
  const response = await coordinatorFor(c.env, id).fetch("https://coordinator/live");
  if (response.status !== 404) return response;
  // Its coordinator holds nothing: an ended run whose objects' storage is gone is drawn from D1.
  const ended = await endedRunLive(c.env, id);
  if (!ended) throw notFound(`run ${id}`);
  return ended;
});
