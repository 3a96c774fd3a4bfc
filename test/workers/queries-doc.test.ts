/**
 * QUERIES.md's SQL blocks run against a real run: each must execute through the read-only
 * SQL route and answer with the columns it documents; the percentile block must agree with
 * the summary to the histogram's bound.
 */
import { describe, expect, it } from "vitest";
import queriesDoc from "../../QUERIES.md?raw";
import { api, createRun, waitForStatus } from "./helpers.ts";

const blocks = [...queriesDoc.matchAll(/```sql id=([\w-]+)\n([\s\S]*?)```/g)].map((m) => ({ id: m[1]!, sql: m[2]! }));

async function sql(text: string, params: unknown[]) {
  const response = await api("/v1/sql", { method: "POST", body: JSON.stringify({ sql: text, params }) });
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as { rows: Array<Record<string, any>> }).rows;
}

describe("QUERIES.md", () => {
  it("documents the common questions", () => {
    expect(blocks.map((b) => b.id)).toEqual([
      "p95-p99-by-region-minute",
      "errors-start",
      "rate-per-second",
      "status-codes",
      "latency-histogram",
      "custom-metrics",
      "run-history",
      "p95-p99-by-region-minute-any-age",
    ]);
  });

  it("answers each question on a real run, read-only", async () => {
    const { id } = await createRun({ rate: 40, duration: "2s", steps: [{ path: "/delay?ms=3&fail=0.1&failStatus=503" }] });
    await waitForStatus(id);
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    const rows = Object.fromEntries(await Promise.all(blocks.map(async (b) => [b.id, await sql(b.sql, [id])] as const)));

    for (const row of rows["p95-p99-by-region-minute"]!) {
      const want = summary.edgeload.regions[row.region].http_req_duration["p(95)"];
      expect(Math.abs(row.p95_ms - want) / want).toBeLessThanOrEqual(0.004);
    }
    const failures = rows["errors-start"]!.reduce((a, r) => a + r.failed, 0);
    expect(failures).toBe(summary.metrics.http_req_failed.passes);
    expect(failures).toBe(8); // fail=0.1 fails exactly one request in ten
    expect(rows["errors-start"]!.some((r) => r.first_failing_second !== null)).toBe(true);
    expect(rows["rate-per-second"]!.reduce((a, r) => a + r.requests, 0)).toBe(80);
    expect(Object.fromEntries(rows["status-codes"]!.map((r) => [r.status, r.responses]))).toEqual({ 200: 72, 503: 8 });
    expect(rows["latency-histogram"]!.reduce((a, r) => a + r.requests, 0)).toBe(80);
    expect(rows["run-history"]![0]).toMatchObject({ id, requests: 80 });
    expect(rows["custom-metrics"]).toEqual([]); // a run without a scenario has none
    // Per minute from both tables: before its rollup, the first block's answer (test/workers/storage-cleanup.test.ts, after it).
    expect(rows["p95-p99-by-region-minute-any-age"]).toEqual(rows["p95-p99-by-region-minute"]);
  });
});
