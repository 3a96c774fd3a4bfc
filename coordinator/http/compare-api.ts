/**
 * Run comparison over HTTP (the maths is core/results/compare.ts) and named baselines in D1
 * (`baselines`, migration 0004), so a pipeline can hold each new run against "the last good
 * one" without remembering its id:
 *
 *   GET /v1/runs/:a/compare/:b[?minEffect=5%&minLatency=1ms&minRate=0.1%&confidence=95%&trend=duration]
 *   PUT /v1/baselines/:name  {"runId": "r-…"}
 *   GET /v1/baselines
 *
 * `:a` (the baseline) and `:b` (the candidate) are run ids (`r-…`) or baseline names. Both
 * runs must have ended: a running run's windows are still arriving.
 */
import { Hono } from "hono";
import { BASELINE_NAME, compareRuns, parseCompareOptions } from "../../core/results/compare.ts";
import type { RunStatus } from "../../core/run/protocol.ts";
import { QUERY_TRENDS, type QueryTrend } from "../../core/results/query.ts";
import type { Problem } from "../../core/spec/input-problem.ts";
import type { Env } from "../../workers/env.ts";
import { badRequest, notFound, runNotFinished, runNotPassed } from "./api-errors.ts";
import { loadQueryInput } from "../store/results-queries.ts";
import { ACTIVE_STATUSES } from "../store/results-store.ts";
import { baselineRun, listBaselines, putBaseline, runRef } from "../store/baselines.ts";

type App = { Bindings: Env };

/** A compared run: its id, and the baseline name it was reached through. */
interface ResolvedRun {
  readonly id: string;
  readonly baseline?: string;
  readonly status: RunStatus;
}

/**
 * A run id or a baseline name → the run, which must exist and have ended. Names and ids
 * cannot collide: names never start with "r-" (BASELINE_NAME).
 */
async function resolveRun(db: D1Database, ref: string): Promise<ResolvedRun> {
  const named = BASELINE_NAME.test(ref);
  const row = named ? await baselineRun(db, ref) : await runRef(db, ref);
  if (!row) throw notFound(named ? `baseline ${ref}` : `run ${ref}`);
  if (!row.status) throw notFound(`run ${row.id} (named by baseline ${ref})`);
  if (ACTIVE_STATUSES.includes(row.status)) {
    throw runNotFinished(row.id, row.status, "compare");
  }
  return { id: row.id, status: row.status, ...(named ? { baseline: ref } : {}) };
}

/** Routes under /v1/runs: `GET /:a/compare/:b`. */
export const compareApi = new Hono<App>();

compareApi.get("/:a/compare/:b", async (c) => {
  const parsed = parseCompareOptions({
    minEffect: c.req.query("minEffect"),
    minLatency: c.req.query("minLatency"),
    minRate: c.req.query("minRate"),
    confidence: c.req.query("confidence"),
  });
  const problems: Problem[] = parsed.ok ? [] : [...parsed.problems];
  const trend = c.req.query("trend") ?? "duration";
  if (!(trend in QUERY_TRENDS)) problems.push({ field: "trend", detail: `must be one of ${Object.keys(QUERY_TRENDS).join(", ")}` });
  if (!parsed.ok || problems.length) throw badRequest("bad comparison", problems);
  const db = c.env.DB;
  const [baseline, candidate] = await Promise.all([resolveRun(db, c.req.param("a")), resolveRun(db, c.req.param("b"))]);
  const [a, b] = await Promise.all([loadQueryInput(db, baseline.id, trend as QueryTrend), loadQueryInput(db, candidate.id, trend as QueryTrend)]);
  if (!a) throw notFound(`run ${baseline.id}`);
  if (!b) throw notFound(`run ${candidate.id}`);
  const result = compareRuns(a, b, parsed.options, trend as QueryTrend);
  const partial = [baseline, candidate]
    .filter((r) => r.status === "aborted" || r.status === "error")
    .map((r) => `run ${r.id} ended ${r.status}: it is compared on what it sent`);
  return c.json({ baseline, candidate, trend, ...result, notes: [...result.notes, ...partial] });
});

/** Routes under /v1: `PUT /baselines/:name`, `GET /baselines`. */
export const baselinesApi = new Hono<App>();

baselinesApi.put("/baselines/:name", async (c) => {
  const name = c.req.param("name");
  const body = (await c.req.json().catch(() => null)) as { runId?: unknown } | null;
  const problems: Problem[] = [];
  if (!BASELINE_NAME.test(name)) problems.push({ field: "name", detail: 'use 1–64 of a-z 0-9 . _ -, starting with a letter or digit, and not "r-"' });
  if (typeof body?.runId !== "string" || !body.runId.startsWith("r-")) problems.push({ field: "runId", detail: "the id of an ended run (r-…)" });
  if (problems.length) throw badRequest("bad baseline", problems);
  const run = await resolveRun(c.env.DB, body!.runId as string);
  if (run.status !== "passed") throw runNotPassed(run.id, run.status);
  const createdAt = Date.now();
  const replaced = await putBaseline(c.env.DB, name, run.id, createdAt);
  return c.json({ name, runId: run.id, createdAt: new Date(createdAt).toISOString(), ...(replaced ? { previousRunId: replaced } : {}) }, replaced ? 200 : 201);
});

baselinesApi.get("/baselines", async (c) => {
  const results = await listBaselines(c.env.DB);
  return c.json({
    baselines: results.map((b) => ({
      name: b.name,
      runId: b.run_id,
      createdAt: new Date(b.created_at).toISOString(),
      run: b.status === null ? null : { name: b.run_name, status: b.status },
    })),
  });
});
