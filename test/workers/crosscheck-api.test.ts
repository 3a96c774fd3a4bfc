/**
 * Crosscheck imports through the API on a real edge run against the local target: every
 * supported k6 summary format (fixtures in test/fixtures/k6/, written by k6 v1.8.1 running
 * k6-scripts/http.js, and a k6 Cloud export) is detected, stored in D1 (migration 0005) and
 * compared; a malformed one is refused with its problems named and leaves nothing behind.
 * The sub-app is mounted here as coordinator/http/api.ts mounts it, behind no token.
 */
import { env } from "cloudflare:workers";
import { Hono } from "hono";
import { beforeAll, describe, expect, it } from "vitest";
import { crosscheckApi } from "../../coordinator/http/crosscheck-api.ts";
import type { Env } from "../../workers/env.ts";
import { ApiError } from "../../coordinator/http/api-errors.ts";
import handleSummary from "../fixtures/k6/handle-summary.json";
import k6Cloud from "../fixtures/k6/k6-cloud.json";
import machineReadable from "../fixtures/k6/machine-readable.json";
import malformed from "../fixtures/k6/malformed.json";
import summaryExport from "../fixtures/k6/summary-export.json";
import { createRun, waitForStatus } from "./helpers.ts";

const app = new Hono<{ Bindings: Env }>();
app.onError((error, c) => (error instanceof ApiError ? error.toResponse(new URL(c.req.url).pathname) : c.text(String(error), 500)));
app.route("/v1/runs", crosscheckApi);

const post = async (runId: string, body: unknown) => {
  const response = await app.request(
    `/v1/runs/${runId}/crosscheck`,
    { method: "POST", body: typeof body === "string" ? body : JSON.stringify(body), headers: { "content-type": "application/json" } },
    env,
  );
  return { status: response.status, type: response.headers.get("content-type"), body: (await response.json()) as Record<string, any> };
};
const stored = async (runId: string) => (await env.DB.prepare("SELECT COUNT(*) AS n FROM k6_imports WHERE run_id = ?").bind(runId).first<{ n: number }>())!.n;

let runId: string;

beforeAll(async () => {
  // The load the fixtures measured: 20/s for 2 s of /delay?ms=5, one unnamed step ("default").
  ({ id: runId } = await createRun({ steps: [{ path: "/delay?ms=5" }], rate: 20, duration: "2s" }));
  await waitForStatus(runId);
});

describe("POST /v1/runs/:id/crosscheck", () => {
  it.each([
    ["summary-export", summaryExport],
    ["handle-summary", handleSummary],
    ["machine-readable", machineReadable],
    ["k6-cloud", k6Cloud],
  ])("detects %s, stores it and answers the side-by-side with a verdict per row", async (format, doc) => {
    const before = await stored(runId);
    const { status, body } = await post(runId, doc);
    expect(status).toBe(201);
    expect(body).toMatchObject({ runId, format, id: expect.stringMatching(/^k6-/) });
    const rows = body.comparison.rows as Array<Record<string, any>>;
    // The edge run sent 40 requests; every fixture measured 40 or 41 of the same schedule.
    expect(rows.find((r) => r.metric === "requests" && r.step === null)).toMatchObject({ edge: 40, verdict: "agree", rule: "max(1 request, 1%)" });
    for (const stat of ["p50", "p95"]) {
      const row = rows.find((r) => r.metric === stat && r.step === null)!;
      expect(row.edge).toBeGreaterThan(5);
      expect(row.k6).toBeGreaterThan(5);
      expect(["agree", "disagree"]).toContain(row.verdict);
    }
    // Both name the step "default": a per-step row exists.
    expect(rows.some((r) => r.step === "default" && r.metric === "p50")).toBe(true);
    expect(body.comparison.rules.map((r: { rule: string }) => r.rule)).toContain("max(3 ms, 10% of k6's)");
    expect(await stored(runId)).toBe(before + 1);
  });

  it("reads a cloud export's seconds as seconds", async () => {
    const { body } = await post(runId, k6Cloud);
    expect(body.comparison.rows.find((r: any) => r.metric === "p95" && r.step === null).k6).toBeCloseTo(12.1, 6);
  });

  it.each([
    ["a summary with a string count and no p(95)", malformed, ["metrics.http_reqs.count", "metrics.http_req_duration.p(95)"]],
    ["JSON that is no k6 summary", { hello: "world" }, ["(body)"]],
    ["text that is not JSON", "summary: yes", ["(body)"]],
    [
      "a handleSummary metric without values",
      { metrics: { http_reqs: { type: "counter", values: { count: 1 } }, http_req_duration: { type: "trend" } } },
      ["metrics.http_req_duration.values"],
    ],
  ])("refuses %s, naming what is wrong, and stores nothing", async (_what, doc, fields) => {
    const before = await stored(runId);
    const { status, type, body } = await post(runId, doc);
    expect(status).toBe(400);
    expect(type).toBe("application/problem+json");
    expect(body.problems.map((p: { field: string }) => p.field)).toEqual(expect.arrayContaining(fields));
    expect(await stored(runId)).toBe(before);
  });

  it("refuses the run's own edgeload summary: it is not k6's", async () => {
    const summary = (await env.DB.prepare("SELECT summary_json FROM runs WHERE id = ?").bind(runId).first<{ summary_json: string }>())!.summary_json;
    const { status, body } = await post(runId, summary);
    expect(status).toBe(400);
    expect(body.problems).toEqual([{ field: "edgeload", detail: expect.stringMatching(/edgeload run summary, not a k6 one/) }]);
  });

  it("keeps setup() data and the script's source out of D1", async () => {
    const withSecrets = { ...machineReadable, setup_data: ["eyJ.secret.token"] };
    const { status, body } = await post(runId, withSecrets);
    expect(status).toBe(201);
    const row = (await env.DB.prepare("SELECT summary_json FROM k6_imports WHERE id = ?").bind(body.id).first<{ summary_json: string }>())!;
    expect(row.summary_json).not.toContain("eyJ.secret.token");
    expect(JSON.parse(row.summary_json).config).not.toHaveProperty("script");
  });

  it("answers 404 for an unknown run and 409 for one still running", async () => {
    expect((await post("r-aaaaaa-00000000", summaryExport)).status).toBe(404);
    const running = await createRun({ rate: 5, duration: "1s" });
    const { status, body } = await post(running.id, summaryExport);
    expect(status).toBe(409);
    expect(body.detail).toMatch(/still (pending|running)/);
    expect(await stored(running.id)).toBe(0);
    await waitForStatus(running.id);
  });
});

describe("GET /v1/runs/:id/crosscheck", () => {
  it("lists the run's imports in order, each compared again", async () => {
    const response = await app.request(`/v1/runs/${runId}/crosscheck`, {}, env);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { runId: string; imports: Array<Record<string, any>> };
    expect(body.runId).toBe(runId);
    expect(body.imports.map((i) => i.format).slice(0, 4)).toEqual(["summary-export", "handle-summary", "machine-readable", "k6-cloud"]);
    expect(body.imports.length).toBe(await stored(runId));
    for (const i of body.imports) expect(i.comparison.rows.length).toBeGreaterThan(5);
  });
});
