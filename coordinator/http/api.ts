/**
 * The HTTP API under /v1 (Hono). Handlers stay thin: parse and validate at the edge,
 * check policy, then hand over to the run's RunCoordinator or to the results store.
 * Every route but /healthz (and signed /seeds/:name) requires `Authorization: Bearer <EDGELOAD_API_TOKEN>`.
 */
import { Hono, type Context } from "hono";
import { preflight, type Preflight } from "../../core/plan/preflight.ts";
import { redactSpec } from "../../core/spec/redact.ts";
import { parseQuery, runQuery, toCsv } from "../../core/results/query.ts";
import { boundedSql, readOnlySqlProblem } from "../../core/results/read-only-sql.ts";
import type { RoutesEnv } from "./routes-env.ts";
import { requireToken } from "./access.ts";
import { modeOf } from "../../core/spec/target-policy.ts";
import { targetPolicy } from "../../workers/outbound/policies.ts";
import { ApiError, badRequest, notFound } from "./api-errors.ts";
import { loadQueryInput, loadSeries, runExists } from "../store/results-queries.ts";
import { listRuns, selectRows, timeseries } from "../store/results-store.ts";
import { runSummary } from "./run-summary.ts";
import { abortRun, runViewOf } from "./run-view.ts";
import { baselinesApi, compareApi } from "./compare-api.ts";
import { crosscheckApi } from "./crosscheck-api.ts";
import { metricsApi } from "./metrics-api.ts";
import { reportApi } from "./report-api.ts";
import { seedsApi, signedSeedFetch } from "./seeds-api.ts";
import { scriptsApi } from "./scripts-api.ts";
import { dashboardApi, dashboardPages } from "./dashboard-api.ts";
import { RUN_ID } from "./run-id.ts";
import { admitRun, plannedRun } from "./run-admission.ts";
import { schedulesApi } from "./schedules-api.ts";
import { targetsApi } from "./targets-api.ts";
import { probeApi } from "./probe-api.ts";
import { controlApi } from "./control-api.ts";
import { ensureSchema } from "../store/schema.ts";
import { exitCodeOf, FINAL_STATUSES, type RunView } from "../../core/run/protocol.ts";

type App = { Bindings: RoutesEnv };

export const api = new Hono<App>();

api.onError((error, c) => {
  if (error instanceof ApiError) return error.toResponse(new URL(c.req.url).pathname);
  console.error("unhandled error", error);
  return new ApiError(500, "internal", "Internal error", "the request failed; see the Worker logs").toResponse(new URL(c.req.url).pathname);
});
api.notFound((c) => notFound(`route ${c.req.method} ${new URL(c.req.url).pathname}`).toResponse(new URL(c.req.url).pathname));

api.get("/healthz", (c) => c.json({ ok: true, mode: modeOf(c.env.EDGELOAD_MODE) }));

// A fresh deployment has an empty D1: every route that may read or write it first brings
// the schema up to date (once per isolate; coordinator/store/schema.ts).
api.use("*", async (c, next) => {
  await ensureSchema(c.env.DB);
  await next();
});

// Signed seed URLs carry their own credential (see signed-url.ts): no API token here.
api.get("/seeds/:name", signedSeedFetch);

// The dashboard's pages check the session themselves, to answer a browser with a page.
api.route("/", dashboardPages);

// Every /v1 route and /metrics need a token; a read-only token only reads (access.ts).
api.use("/v1/*", requireToken);
api.use("/metrics", requireToken);

/** The body, parsed as JSON (a run spec, validated by run-admission.ts). */
async function jsonBody(c: Context<App>): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    throw badRequest("the body must be a JSON run spec", [{ field: "(body)", detail: "not valid JSON" }]);
  }
}

api.post("/v1/runs", async (c) => {
  const { id, spec, plan, estimate, t0Ms, status } = await admitRun(await jsonBody(c), c.env);
  const links = runLinks(c, id);
  c.header("location", links.self);
  const created = { id, status, startsAt: new Date(t0Ms).toISOString(), spec: redactSpec(spec), plan, estimate: costView(estimate), links };
  const waitS = waitSeconds(c);
  if (waitS === null) return c.json(created, 201);
  const view = await waitForEnd(() => runViewOf(c.env, id), waitS, c.req.raw.signal);
  return c.json({ ...created, ...(view ? runOutcomeView(c, view) : {}) }, 201);
});

/**
 * What a run would do, without starting it: plan, platform usage, limit checks and cost
 * under this deployment's caps (the CLI's `edgeload plan` computes the same locally).
 */
api.post("/v1/plan", async (c) => {
  const { spec, plan } = plannedRun(await jsonBody(c), c.env);
  const estimate = preflight(spec, plan);
  const refused = targetPolicy(c.env)(new URL(spec.target));
  const shown = redactSpec(spec);
  const target = { url: shown.target, allowed: refused === null, ...(refused ? { detail: `would be refused: ${refused}` } : {}) };
  return c.json({
    spec: shown,
    plan,
    target,
    usage: estimate.usage,
    limits: estimate.limits,
    estimate: costView(estimate),
    overBudget: estimate.overBudget,
  });
});

function costView(p: Preflight) {
  return {
    usd: p.cost.totalUsd,
    usdPerMillionRequests: p.cost.usdPerMillionRequests,
    pricingDate: p.cost.pricingDate,
    lines: p.cost.lines,
    k6Cloud: p.cost.k6Cloud,
  };
}

api.get("/v1/runs", async (c) => {
  const limit = Number(c.req.query("limit") ?? 20);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200)
    throw badRequest("limit must be an integer from 1 to 200", [{ field: "limit", detail: "out of range" }]);
  const status = c.req.query("status");
  const runs = await listRuns(c.env.DB, { limit, ...(status ? { status } : {}) });
  return c.json({
    runs: runs.map((r) => ({
      id: r.id,
      name: r.name,
      status: r.status,
      target: r.target,
      createdAt: new Date(r.created_at).toISOString(),
      startedAt: r.t0 ? new Date(r.t0).toISOString() : null,
      endedAt: r.ended_at ? new Date(r.ended_at).toISOString() : null,
      durationS: r.duration_ms / 1000,
      thresholdsOk: r.thresholds_ok === null ? null : r.thresholds_ok === 1,
      abortReason: r.abort_reason,
      links: runLinks(c, r.id),
    })),
  });
});

/**
 * A run's status. `?wait=N` (seconds, at most 600) holds the answer until the run has ended
 * or N seconds have passed, for CI jobs that have only curl: `done` says which, and a
 * finished run carries `thresholdsPassed`, its `verdict` (inconclusive with its reasons)
 * and `exitCode` (k6's 0, 99, 105 or 103, 108 or 107 when a k6 script aborted or threw in
 * setup(), or 75 when the result could not be established).
 */
api.get("/v1/runs/:id", async (c) => {
  const waitS = waitSeconds(c);
  const status = () => runViewOf(c.env, runIdOf(c));
  const view = waitS === null ? await status() : await waitForEnd(status, waitS, c.req.raw.signal);
  if (!view) throw notFound(`run ${c.req.param("id")}`);
  return c.json({ ...view, ...runOutcomeView(c, view) });
});

/** Longest `?wait=`: a CI job that needs longer asks again (`done` is false). */
const MAX_WAIT_S = 600;

function waitSeconds(c: Context<App>): number | null {
  const raw = c.req.query("wait");
  if (raw === undefined) return null;
  const waitS = Number(raw);
  if (raw.trim() === "" || !Number.isInteger(waitS) || waitS < 0 || waitS > MAX_WAIT_S) {
    throw badRequest(`wait must be a whole number of seconds from 0 to ${MAX_WAIT_S}`, [{ field: "wait", detail: `got "${raw}"` }]);
  }
  return waitS;
}

/** Polls the run's status once a second until the run ends, `waitS` pass, or the client leaves. */
async function waitForEnd(status: () => Promise<RunView | null>, waitS: number, signal: AbortSignal): Promise<RunView | null> {
  const deadlineMs = Date.now() + waitS * 1000;
  for (;;) {
    const view = await status();
    if (!view || FINAL_STATUSES.includes(view.status) || Date.now() >= deadlineMs || signal.aborted) return view;
    await new Promise((resolve) => setTimeout(resolve, Math.min(1000, deadlineMs - Date.now())));
  }
}

/** What a CI job reads off a run: whether it ended, its verdict and the k6 exit code for it. */
function runOutcomeView(c: Context<App>, view: RunView) {
  const done = FINAL_STATUSES.includes(view.status);
  return {
    status: view.status,
    done,
    thresholdsPassed: view.thresholdsOk,
    verdict: view.verdict,
    exitCode: exitCodeOf(view.status, view.endedByScript, view.scriptTimeout),
    links: runLinks(c, view.id),
  };
}

api.get("/v1/runs/:id/summary", async (c) => {
  const summary = await runSummary(c.env, runIdOf(c));
  if (!summary) throw notFound(`run ${c.req.param("id")}`);
  return c.json(summary);
});

api.get("/v1/runs/:id/timeseries", async (c) => {
  const id = runIdOf(c);
  const view = await runViewOf(c.env, id);
  if (!view) throw notFound(`run ${id}`);
  return c.json({ id, ...(await timeseries(c.env.DB, id)) });
});

/** The target's series a run scraped (scrape steps), one entry per series: `?name=` narrows. */
api.get("/v1/runs/:id/series", async (c) => {
  const id = c.req.param("id");
  if (!(await runExists(c.env.DB, id))) throw notFound(`run ${id}`);
  return c.json({ id, series: await loadSeries(c.env.DB, id, c.req.query("name") ?? null) });
});

/**
 * Analytics over the run's stored windows (core/results/query.ts):
 * `?by=region,step&every=1m&metrics=rps,p95,p99,error_rate&trend=duration&format=json|csv`.
 */
api.get("/v1/runs/:id/query", async (c) => {
  const id = c.req.param("id");
  const parsed = parseQuery({ by: c.req.query("by"), every: c.req.query("every"), metrics: c.req.query("metrics"), trend: c.req.query("trend") });
  if (!parsed.ok) throw badRequest("bad query", parsed.problems);
  const format = c.req.query("format") ?? "json";
  if (format !== "json" && format !== "csv") throw badRequest("bad query", [{ field: "format", detail: 'must be "json" or "csv"' }]);
  const input = await loadQueryInput(c.env.DB, id, parsed.query.trend);
  if (!input) throw notFound(`run ${id}`);
  const resolutionS = input.resolutionS ?? 1;
  if (parsed.query.everyS !== null && parsed.query.everyS % resolutionS !== 0) {
    const detail = `run ${id} is past its retention: its seconds were rolled up into minutes (RESULTS_RETENTION_DAYS), so every must be whole minutes or "run"`;
    throw badRequest("bad query", [{ field: "every", detail }]);
  }
  const rows = runQuery(input, parsed.query);
  if (format === "csv") return c.body(toCsv(rows), 200, { "content-type": "text/csv; charset=utf-8" });
  return c.json({ id, query: parsed.query, rows });
});

/** Read-only SQL against the results database (one SELECT; at most MAX_SQL_ROWS rows). */
api.post("/v1/sql", async (c) => {
  const body = (await c.req.json().catch(() => null)) as { sql?: unknown; params?: unknown } | null;
  if (!body || typeof body.sql !== "string") throw badRequest("bad SQL request", [{ field: "sql", detail: "a SELECT statement as a string" }]);
  const problem = readOnlySqlProblem(body.sql);
  if (problem) throw badRequest("bad SQL request", [{ field: "sql", detail: problem }]);
  const params = Array.isArray(body.params) ? body.params : [];
  let rows: Record<string, unknown>[];
  try {
    // One row over the cap tells that the result was cut, without reading the rest of it.
    rows = await selectRows(c.env.DB, boundedSql(body.sql, MAX_SQL_ROWS + 1), params);
  } catch (error) {
    throw badRequest("the query failed", [{ field: "sql", detail: error instanceof Error ? error.message : String(error) }]);
  }
  return c.json({ rows: rows.slice(0, MAX_SQL_ROWS), truncated: rows.length > MAX_SQL_ROWS });
});

const MAX_SQL_ROWS = 10_000;

api.post("/v1/runs/:id/abort", async (c) => {
  const view = await abortRun(c.env, runIdOf(c), "aborted through the API");
  if (!view) throw notFound(`run ${c.req.param("id")}`);
  return c.json({ ...view, links: runLinks(c, view.id) }, 202);
});

api.route("/v1/seeds", seedsApi);
api.route("/v1/scripts", scriptsApi);
api.route("/v1/runs", compareApi); // GET /v1/runs/:a/compare/:b
api.route("/v1", baselinesApi); // PUT /v1/baselines/:name, GET /v1/baselines
api.route("/v1/runs", reportApi); // GET /v1/runs/:id/report
api.route("/v1/runs", crosscheckApi); // POST/GET /v1/runs/:id/crosscheck
api.route("/", metricsApi); // GET /v1/runs/:id/metrics, GET /metrics (Prometheus)
api.route("/v1", dashboardApi); // POST /v1/dashboard-links, GET /v1/runs/:id/live
api.route("/v1/schedules", schedulesApi); // POST/GET/DELETE /v1/schedules, pause, resume
api.route("/v1/targets", targetsApi); // GET/POST /v1/targets/:host/verification (proof of ownership)
api.route("/v1/probe", probeApi); // POST /v1/probe: the target's latency from each region of a run
api.route("/v1/runs", controlApi); // PATCH /v1/runs/:id/control: an externally-controlled run's VUs, pause and resume

/** The route's run id, which must look like one (anything else is an unknown run). */
function runIdOf(c: Context<App>): string {
  const id = c.req.param("id") ?? "";
  if (!RUN_ID.test(id)) throw notFound(`run ${id}`);
  return id;
}

/**
 * Where to read a run: its status (`?wait=` blocks until the end), summary, report, time
 * series, live events (Server-Sent Events) and abort; the dashboard page needs a session
 * from POST /v1/dashboard-links in a browser.
 */
function runLinks(c: Context<App>, id: string) {
  const base = `${new URL(c.req.url).origin}/v1/runs/${id}`;
  return {
    self: base,
    summary: `${base}/summary`,
    report: `${base}/report`,
    timeseries: `${base}/timeseries`,
    events: `${base}/live`,
    abort: `${base}/abort`,
    dashboard: `${base}/dashboard`,
  };
}
