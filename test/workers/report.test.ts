/**
 * GET /v1/runs/:id/report inside workerd: a real run against the local target, then its
 * report rendered by the coordinator Worker — Vega included, where code generation from
 * strings is forbidden.
 */
import { describe, expect, it } from "vitest";
import type { ReportInput } from "../../reports/report-input.ts";
import { api, createRun, waitForStatus } from "./helpers.ts";

describe("a run's report", () => {
  it("is one HTML page with the run id, the summary's p95 and inline SVG charts", async () => {
    const { id } = await createRun({ thresholds: { http_req_duration: ["p(95)<1000"] } });
    expect((await waitForStatus(id)).status).toBe("passed");
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    const p95: number = summary.metrics.http_req_duration["p(95)"];

    const response = await api(`/v1/runs/${id}/report`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toContain(id);
    expect(html).toContain(`${Math.round(p95)} ms`); // to workerd's whole-ms clock step
    expect(html.match(/<svg /g)).toHaveLength(4);
    // Two shards in two regions: the latency chart has a line per region and percentile.
    expect(html.match(/aria-roledescription="line mark"/g)!.length).toBeGreaterThanOrEqual(6 + 2 + 2);

    const input = (await (await api(`/v1/runs/${id}/report?format=json`)).json()) as ReportInput;
    expect(input.summary.edgeload.runId).toBe(id);
    expect(input.overall?.requests).toBe(80); // 40/s × 2 s, every request stored in D1
    expect(input.byRegion.map((r) => r.region)).toEqual(["weur", "wnam"]);
    expect(input.latencyBuckets.reduce((n, [, count]) => n + count, 0)).toBe(80);
  });

  it("answers 404 for an unknown run and 400 for an unknown format", async () => {
    expect((await api("/v1/runs/r-zzzzzzzz-00000000/report")).status).toBe(404);
    expect((await api("/v1/runs/r-zzzzzzzz-00000000/report?format=pdf")).status).toBe(400);
  });
});
