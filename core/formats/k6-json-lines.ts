/**
 * A run's stored windows in k6's `--out json` shape (JSON lines), so tooling that reads
 * k6's JSON output — jq recipes, k6 result importers, notebooks — reads edgeload runs too.
 *
 * k6 writes one `Metric` record the first time a metric appears, then one `Point` per
 * sample: {"type":"Point","metric":"http_reqs","data":{"time":"…","value":1,"tags":{…}}}.
 * edgeload keeps no per-request samples (shards merge them into per-second histograms), so
 * every Point here is **one aggregate of one second of one (region, step)**:
 *
 *   http_reqs, iterations,            value = the count in that second (counters: summing
 *   dropped_iterations                Points gives the run's total, exactly as with k6's)
 *   http_req_failed                   value = the failed fraction of that second's requests
 *                                     (k6 writes 0/1 per request; the mean is the same rate
 *                                     only when weighted by http_reqs)
 *   http_req_duration                 one Point per statistic, tagged `aggregate` =
 *                                     min, mean, p50, p90, p95, p99 or max, in ms
 *
 * Tags: `run_id`, `region`, `step` (the step's index), and `aggregate` on trend Points.
 * `time` is the second's start (run T0 + window), RFC 3339 as k6 writes it.
 */
import type { QueryRow } from "../results/query.ts";

/** The query (GET /v1/runs/:id/query) whose rows this converts. */
export const JSON_LINES_QUERY = {
  by: "region,step",
  every: "1s",
  metrics: "requests,iterations,failed,dropped,error_rate,min,mean,p50,p90,p95,p99,max",
} as const;

const TREND_AGGREGATES = ["min", "mean", "p50", "p90", "p95", "p99", "max"] as const;

const METRICS = {
  http_reqs: { type: "counter", contains: "default" },
  iterations: { type: "counter", contains: "default" },
  dropped_iterations: { type: "counter", contains: "default" },
  http_req_failed: { type: "rate", contains: "default" },
  http_req_duration: { type: "trend", contains: "time" },
} as const;

/** JSON lines (each ending in "\n") for rows of JSON_LINES_QUERY, `t` seconds after T0. */
export function k6JsonLines(rows: readonly QueryRow[], runId: string, t0Ms: number): string {
  const out: string[] = [];
  const seen = new Set<string>();
  const point = (metric: keyof typeof METRICS, timeMs: number, value: number, tags: Record<string, string>) => {
    if (!seen.has(metric)) {
      seen.add(metric);
      out.push(
        JSON.stringify({
          type: "Metric",
          data: { name: metric, ...METRICS[metric], tainted: null, thresholds: [], submetrics: null, sub: { name: "", parent: "", suffix: "", tags: null } },
          metric,
        }),
      );
    }
    out.push(JSON.stringify({ metric, type: "Point", data: { time: new Date(timeMs).toISOString(), value, tags } }));
  };
  const ordered = [...rows].sort((a, b) => Number(a.t) - Number(b.t) || String(a.region).localeCompare(String(b.region)) || Number(a.step) - Number(b.step));
  for (const row of ordered) {
    const timeMs = t0Ms + Number(row.t) * 1000;
    const tags = { run_id: runId, region: String(row.region), step: String(row.step) };
    const requests = Number(row.requests ?? 0);
    if (requests > 0) point("http_reqs", timeMs, requests, tags);
    if (Number(row.iterations ?? 0) > 0) point("iterations", timeMs, Number(row.iterations), tags);
    if (Number(row.dropped ?? 0) > 0) point("dropped_iterations", timeMs, Number(row.dropped), tags);
    if (requests > 0 && row.error_rate !== null && row.error_rate !== undefined) point("http_req_failed", timeMs, Number(row.error_rate), tags);
    for (const aggregate of TREND_AGGREGATES) {
      const v = row[aggregate];
      if (typeof v === "number") point("http_req_duration", timeMs, v, { ...tags, aggregate });
    }
  }
  return out.map((line) => `${line}\n`).join("");
}
