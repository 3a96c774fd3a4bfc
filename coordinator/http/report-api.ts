/**
 * A run's report over HTTP, mounted under /v1/runs (behind the API token):
 *
 *   GET /v1/runs/:id/report               one HTML page: tables and inline SVG charts
 *   GET /v1/runs/:id/report?format=json   what the report is made from (reports/report-input.ts),
 *                                         which `edgeload report` renders to markdown + SVG files
 *
 * Built from the run's summary (run-summary.ts) and the analytics queries over its
 * stored windows, by the same pure code the CLI uses (reports/), so the page and the
 * markdown agree. Charts are rendered here with Vega's CSP-safe interpreter: a Worker may
 * not generate code from strings.
 */
import { Hono } from "hono";
import { reportInput } from "../../reports/report-input.ts";
import type { RoutesEnv } from "./routes-env.ts";
import { badRequest, notFound } from "./api-errors.ts";
import { loadQueryInput } from "../store/results-queries.ts";
import { runSummary } from "./run-summary.ts";

type App = { Bindings: RoutesEnv };

export const reportApi = new Hono<App>();

reportApi.get("/:id/report", async (c) => {
  const id = c.req.param("id");
  const format = c.req.query("format") ?? "html";
  if (format !== "html" && format !== "json") throw badRequest("bad report request", [{ field: "format", detail: 'must be "html" or "json"' }]);
  // D1 first: an unknown id is answered without creating a Durable Object for it.
  const rows = await loadQueryInput(c.env.DB, id, "duration");
  if (!rows) throw notFound(`run ${id}`);
  const summary = await runSummary(c.env, id);
  if (!summary) throw notFound(`run ${id}`);
  const input = reportInput(summary, rows);
  if (format === "json") return c.json(input);
  // Loaded on demand: Vega is most of the bundle, and no other request (nor any Durable
  // Object sharing this script) should pay for evaluating it.
  const { renderReport } = await import("../../reports/report.ts");
  return c.html((await renderReport(input)).html);
});
