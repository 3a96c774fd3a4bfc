/**
 * Prometheus scrape endpoints (behind the API token; Prometheus sends it with
 * `authorization: {credentials: …}` in its scrape_config):
 *
 *   GET /v1/runs/:id/metrics   one run, live while it runs and final after
 *   GET /metrics               every active run (pending, running, finishing), and runs
 *                              that ended in the last 5 minutes
 *
 * The text is built by core/formats/prometheus-text-writer.ts from each RunCoordinator's totals, so a
 * scrape reads the same merged histograms the summary does — never D1 rows.
 */
import { Hono } from "hono";
import { EXPOSITION_CONTENT_TYPE, wireRunsExposition, type RunMetricsWire } from "../../core/formats/prometheus-text-writer.ts";
import type { RoutesEnv } from "./routes-env.ts";
import { notFound } from "./api-errors.ts";
import { runsToScrape } from "../store/results-store.ts";
import { runExists } from "../store/results-queries.ts";
import { coordinatorFor } from "./coordinator-stub.ts";

type App = { Bindings: RoutesEnv };

export const metricsApi = new Hono<App>();

metricsApi.get("/v1/runs/:id/metrics", async (c) => {
  const id = c.req.param("id");
  // D1 first: an unknown id is answered without creating a Durable Object for it.
  if (!(await runExists(c.env.DB, id))) throw notFound(`run ${id}`);
  const source = await coordinator(c.env, id).metricsSource();
  if (!source) throw notFound(`run ${id}`);
  return c.body(wireRunsExposition([source]), 200, { "content-type": EXPOSITION_CONTENT_TYPE });
});

/**
 * Ended runs stay this long in /metrics, so scrapes after the end pick up the final
 * totals (the last seconds arrive while the run is finishing) and the run's gauges drop
 * to 0 instead of their series just going stale.
 */
export const ENDED_RUN_GRACE_MS = 5 * 60_000;

metricsApi.get("/metrics", async (c) => {
  const ids = await runsToScrape(c.env.DB, Date.now() - ENDED_RUN_GRACE_MS);
  const sources = await Promise.all(ids.map((id) => coordinator(c.env, id).metricsSource()));
  return c.body(wireRunsExposition(sources.filter((s): s is RunMetricsWire => s !== null)), 200, { "content-type": EXPOSITION_CONTENT_TYPE });
});

/** RPC's serialisable-type mapping widens the totals' tuples; the value is a RunMetricsWire. */
function coordinator(env: RoutesEnv, id: string): { metricsSource(): Promise<RunMetricsWire | null> } {
  const stub = coordinatorFor(env, id);
  return { metricsSource: async () => (await stub.metricsSource()) as RunMetricsWire | null };
}
