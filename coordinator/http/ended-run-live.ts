/**
 * GET /v1/runs/:id/live for a run whose RunCoordinator holds nothing any more (its storage
 * deleted once the run was final and in D1: coordinator/run/run-cleanup.ts): the events
 * the coordinator sends a page that connects after the end — the history of windows, the
 * status, the summary, the end — drawn from D1 (core/results/live-history.ts), and the
 * stream closes. The status carries the final view with the summary's thresholds; no shard
 * health (an ended run has none to show).
 */
import { storedLivePoints } from "../../core/results/live-history.ts";
import { sseEvent } from "../run/live-stream.ts";
import { finalSummary, loadQueryInput } from "../store/results-queries.ts";
import { endedRunRecord } from "../store/run-cleanup-rows.ts";
import type { RoutesEnv } from "./routes-env.ts";

/** The stream, or null when D1 holds no ended run of that id. */
export async function endedRunLive(env: RoutesEnv, runId: string): Promise<Response | null> {
  const [ended, stored, input] = await Promise.all([endedRunRecord(env.DB, runId), finalSummary(env.DB, runId), loadQueryInput(env.DB, runId, "duration")]);
  const summary = stored?.summary;
  if (!ended || !summary || !input) return null;
  const { view, spec } = ended;
  const status = { ...view, t0Ms: Date.parse(view.startedAt), thresholds: summary.edgeload.thresholds ?? [], shardHealth: [] };
  const events = [
    new TextEncoder().encode("retry: 2000\n\n"),
    sseEvent("history", storedLivePoints(input, spec)),
    sseEvent("status", status),
    sseEvent("summary", summary),
    sseEvent("end", { status: view.status }),
  ];
  return new Response(new Blob(events), {
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no" },
  });
}
