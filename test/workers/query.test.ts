/**
 * The analytics API over a real run: the query's per-region figures equal the summary's
 * (both from merged histograms), time buckets add up to the totals, CSV works, and the SQL
 * route answers SELECTs only.
 */
import { describe, expect, it } from "vitest";
import { api, createRun, waitForStatus } from "./helpers.ts";

describe("analytics API", () => {
  it("answers per region and per second from the stored windows, matching the summary exactly", async () => {
    const { id } = await createRun({ rate: 50, duration: "3s" });
    await waitForStatus(id);
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;

    const byRegion = (await (await api(`/v1/runs/${id}/query?by=region&metrics=requests,p50,p95,p99,error_rate`)).json()) as {
      rows: Array<Record<string, any>>;
    };
    expect(byRegion.rows.map((r) => r.region)).toEqual(["weur", "wnam"]);
    for (const row of byRegion.rows) {
      const region = summary.edgeload.regions[row.region];
      expect(row.requests).toBe(region.requests);
      expect(row.p95).toBe(region.http_req_duration["p(95)"]);
      expect(row.p99).toBe(region.http_req_duration["p(99)"]);
      expect(row.error_rate).toBe(0);
    }

    const perSecond = (await (await api(`/v1/runs/${id}/query?every=1s&metrics=requests,rps`)).json()) as { rows: Array<Record<string, any>> };
    expect(perSecond.rows.reduce((a, r) => a + r.requests, 0)).toBe(150);
    expect(perSecond.rows.map((r) => r.t)).toEqual([...perSecond.rows.map((r) => r.t)].sort((a, b) => a - b));

    const csv = await api(`/v1/runs/${id}/query?by=region&metrics=requests&format=csv`);
    expect(csv.headers.get("content-type")).toMatch(/text\/csv/);
    expect(await csv.text()).toBe(`region,requests\nweur,${byRegion.rows[0]!.requests}\nwnam,${byRegion.rows[1]!.requests}\n`);

    const byShard = (await (await api(`/v1/runs/${id}/query?by=shard,colo&metrics=requests,p95`)).json()) as { rows: Array<Record<string, any>> };
    expect(byShard.rows.map((r) => [r.shard, r.colo])).toEqual([
      [0, "local"],
      [1, "local"],
    ]);
    expect(byShard.rows.every((r) => typeof r.p95 === "number")).toBe(true);
  });

  it("names what is wrong with a query", async () => {
    const response = await api("/v1/runs/r-0000000-00000000/query?by=country&every=2.5s");
    expect(response.status).toBe(400);
    const body = (await response.json()) as { problems: Array<{ field: string }> };
    expect(body.problems.map((p) => p.field)).toEqual(["by", "every"]);
    expect((await api("/v1/runs/r-0000000-00000000/query")).status).toBe(404);
  });

  it("runs read-only SQL and refuses anything that writes", async () => {
    const ok = await api("/v1/sql", {
      method: "POST",
      body: JSON.stringify({ sql: "SELECT COUNT(*) AS n FROM runs WHERE status = ?", params: ["no-such-status"] }),
    });
    expect(await ok.json()).toEqual({ rows: [{ n: 0 }], truncated: false });
    for (const sql of ["DELETE FROM runs", "SELECT 1; DROP TABLE runs", "WITH x AS (SELECT 1) DELETE FROM runs", "PRAGMA table_info(runs)"]) {
      const refused = await api("/v1/sql", { method: "POST", body: JSON.stringify({ sql }) });
      expect(refused.status, sql).toBe(400);
    }
    const stillThere = await api("/v1/sql", { method: "POST", body: JSON.stringify({ sql: "SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'runs'" }) });
    expect(((await stillThere.json()) as { rows: Array<{ n: number }> }).rows[0]!.n).toBe(1);
  });

  it("caps a huge result at 10,000 rows and refuses a recursive query that would never end", async () => {
    // 150 × 150 = 22,500 rows from a cross join of literal values.
    const values = `(VALUES ${Array.from({ length: 150 }, (_, i) => `(${i})`).join(",")})`;
    const huge = await api("/v1/sql", {
      method: "POST",
      body: JSON.stringify({ sql: `SELECT a.column1 AS a, b.column1 AS b FROM ${values} a, ${values} b -- every pair` }),
    });
    expect(huge.status).toBe(200);
    const body = (await huge.json()) as { rows: unknown[]; truncated: boolean };
    expect(body.rows).toHaveLength(10_000);
    expect(body.truncated).toBe(true);
    const bomb = await api("/v1/sql", {
      method: "POST",
      body: JSON.stringify({ sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c" }),
    });
    expect(bomb.status).toBe(400);
    expect(((await bomb.json()) as { problems: Array<{ detail: string }> }).problems[0]!.detail).toMatch(/recursive queries are not allowed/);
  });
});
