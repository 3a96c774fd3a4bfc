/**
 * Crosscheck over HTTP: k6 summaries of the same load imported beside an edge run and
 * compared with it (the maths is core/results/crosscheck.ts, the formats core/formats/k6-summary.ts), kept
 * in D1 (`k6_imports`, migration 0005):
 *
 *   POST /v1/runs/:id/crosscheck   body: a k6 summary (any supported format) → 201 with the comparison
 *   GET  /v1/runs/:id/crosscheck   the imports stored for the run, each with its comparison
 *
 * A summary that is not valid is refused with every problem named, and nothing is stored.
 * The run must have ended: its summary is what k6's is held against. Mounted by the API
 * under /v1/runs, behind its token.
 */
import { Hono } from "hono";
import { crosscheck, edgeFigures } from "../../core/results/crosscheck.ts";
import { parseK6Summary, storableK6Summary, type K6ImportView } from "../../core/formats/k6-summary.ts";
import type { Summary } from "../../core/run/summary.ts";
import type { Env } from "../../workers/env.ts";
import { ApiError, badRequest, notFound, limitedBody, runNotFinished } from "./api-errors.ts";
import { ACTIVE_STATUSES } from "../store/results-store.ts";
import { finalSummary } from "../store/results-queries.ts";
import { insertK6Import, listK6Imports } from "../store/k6-imports.ts";

type App = { Bindings: Env };

/** Largest k6 summary accepted (a handleSummary file of a run with many tagged sub-metrics stays far below). */
export const MAX_K6_SUMMARY_BYTES = 4 * 1024 * 1024;

/** The run's final summary; 404 for an unknown run, 409 while it is still going. */
async function endedRunSummary(db: D1Database, id: string): Promise<Summary> {
  const row = await finalSummary(db, id);
  if (!row) throw notFound(`run ${id}`);
  if (ACTIVE_STATUSES.includes(row.status)) {
    throw runNotFinished(id, row.status, "crosscheck");
  }
  if (!row.summary) throw new ApiError(409, "no-summary", "Run has no summary", `run ${id} ended ${row.status} without a stored summary`);
  return row.summary;
}

/** The request body as JSON, refusing oversized or unparsable ones. */
async function jsonBody(request: Request): Promise<unknown> {
  const bytes = await limitedBody(
    request,
    MAX_K6_SUMMARY_BYTES,
    () => new ApiError(413, "k6-summary-too-large", "k6 summary too large", `send at most ${MAX_K6_SUMMARY_BYTES} bytes`),
  );
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    throw badRequest("the body must be a k6 summary in JSON", [{ field: "(body)", detail: `not valid JSON: ${(error as Error).message}` }]);
  }
}

/** Routes under /v1/runs: `POST /:id/crosscheck`, `GET /:id/crosscheck`. */
export const crosscheckApi = new Hono<App>();

crosscheckApi.post("/:id/crosscheck", async (c) => {
  const runId = c.req.param("id");
  const edge = await endedRunSummary(c.env.DB, runId);
  const doc = await jsonBody(c.req.raw);
  const parsed = parseK6Summary(doc);
  if (!parsed.ok) {
    const n = parsed.problems.length;
    throw new ApiError(
      400,
      "invalid-k6-summary",
      "Invalid k6 summary",
      `${n} problem${n === 1 ? "" : "s"} in the k6 summary (nothing was stored): ${parsed.problems.map((p) => p.field).join(", ")}`,
      parsed.problems,
    );
  }
  const comparison = crosscheck(edgeFigures(edge), parsed.figures);
  const importedAt = Date.now();
  const id = `k6-${importedAt.toString(36)}-${crypto.randomUUID().replace(/-/g, "").slice(0, 8)}`;
  await insertK6Import(c.env.DB, runId, {
    id,
    format: parsed.format,
    imported_at: importedAt,
    summary_json: JSON.stringify(storableK6Summary(doc as Record<string, unknown>)),
  });
  const view: K6ImportView = { id, runId, format: parsed.format, importedAt: new Date(importedAt).toISOString(), comparison };
  return c.json(view, 201);
});

crosscheckApi.get("/:id/crosscheck", async (c) => {
  const runId = c.req.param("id");
  const edge = edgeFigures(await endedRunSummary(c.env.DB, runId));
  const results = await listK6Imports(c.env.DB, runId);
  const imports = results.map((r): K6ImportView => {
    const parsed = parseK6Summary(JSON.parse(r.summary_json));
    const view = { id: r.id, runId, format: r.format, importedAt: new Date(r.imported_at).toISOString() };
    return parsed.ok ? { ...view, comparison: crosscheck(edge, parsed.figures) } : { ...view, comparison: null, problems: parsed.problems };
  });
  return c.json({ runId, imports });
});
