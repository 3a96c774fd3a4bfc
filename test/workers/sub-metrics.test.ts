/**
 * k6 sub-metrics through the coordinator, real shards and D1: a run whose thresholds name
 * `{status:200}` and `{method:GET}` filters (a spec's steps carry k6's default request tags)
 * gets each sub-metric in its summary with its verdict, and D1 keeps them per window as it
 * keeps custom metrics (`windows.custom_json`, trends in `histograms`), summing to the
 * summary's counts.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, waitForStatus } from "./helpers.ts";

describe("sub-metrics", () => {
  it("reach the summary and D1 from two shards, merged exactly like their metric", async () => {
    const spec = {
      name: "sub-metrics",
      target: env.TARGET_URL,
      steps: [{ path: "/" }],
      executor: "constant-arrival-rate",
      rate: 20,
      duration: "2s",
      shards: 2,
      regions: ["wnam", "weur"],
      thresholds: { "http_reqs{status:200}": ["count==40"], "http_req_duration{method:GET}": ["p(95)<5000"], "http_reqs{status:500}": ["count<1"] },
    };
    const created = await api("/v1/runs", { method: "POST", body: JSON.stringify(spec) });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    await waitForStatus(id);
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    expect(summary.metrics.http_reqs.count).toBe(40);
    expect(summary.metrics["http_reqs{status:200}"]).toMatchObject({ count: 40, thresholds: { "count==40": false } });
    expect(summary.metrics["http_req_duration{method:GET}"]).toMatchObject({ thresholds: { "p(95)<5000": false } });
    // Nothing answered 500: a counter with no samples is 0, as in k6, so a healthy run passes it.
    expect(summary.edgeload.thresholds.find((t: { metric: string }) => t.metric === "http_reqs{status:500}")).toMatchObject({
      state: "passed",
      observed: 0,
    });
    expect(summary.edgeload.verdict.kind).toBe("passed");

    const counted = await env.DB.prepare(
      `SELECT SUM(json_extract(custom_json, '$.c."http_reqs{status:200}"')) AS n, COUNT(DISTINCT region) AS regions FROM windows WHERE run_id = ?`,
    )
      .bind(id)
      .first<{ n: number; regions: number }>();
    expect(counted).toEqual({ n: 40, regions: 2 });
    const timed = await env.DB.prepare("SELECT SUM(count) AS n FROM histograms WHERE run_id = ? AND metric = 'http_req_duration{method:GET}'")
      .bind(id)
      .first<{ n: number }>();
    expect(timed!.n).toBe(40);
  });
});
