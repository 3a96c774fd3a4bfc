/**
 * The HTTP API inside workerd: auth, validation as problem+json, policy (allow-list and
 * caps), concurrency limit and not-found handling.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, spec } from "./helpers.ts";

async function problem(response: Response) {
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  return (await response.json()) as { type: string; title: string; status: number; detail: string; problems?: Array<{ field: string; detail: string }> };
}

describe("auth", () => {
  it("serves /healthz without a token", async () => {
    const response = await api("/healthz", { token: null });
    expect(await response.json()).toEqual({ ok: true, mode: "local" });
  });

  it.each([
    ["no token", null],
    ["a wrong token", "nope"],
    ["an empty token", ""],
    ["a token with the right prefix", "test-tok"],
  ])("refuses %s with 401 problem+json", async (_, token) => {
    const response = await api("/v1/runs", { token });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain("Bearer");
    expect((await problem(response)).type).toMatch(/unauthorized$/);
  });
});

describe("POST /v1/runs validation", () => {
  it("answers 400 naming every bad field at once", async () => {
    const response = await api("/v1/runs", {
      method: "POST",
      body: JSON.stringify(spec({ rate: -5, duration: "soon", regions: ["moon"], steps: [{ path: "x" }], thresholds: { http_req_duration: ["p95<1"] } })),
    });
    expect(response.status).toBe(400);
    const body = await problem(response);
    expect(body.status).toBe(400);
    expect(body.problems!.map((p) => p.field)).toEqual(expect.arrayContaining(["rate", "duration", "regions.0", "steps.0.path", "thresholds.http_req_duration[0]"]));
  });

  it("answers 400 for a body that is not JSON", async () => {
    const response = await api("/v1/runs", { method: "POST", body: "{not json" });
    expect(response.status).toBe(400);
    expect((await problem(response)).problems).toEqual([{ field: "(body)", detail: "not valid JSON" }]);
  });

  it("refuses a target outside the allow-list with 403", async () => {
    const response = await api("/v1/runs", { method: "POST", body: JSON.stringify(spec({ target: "https://example.com" })) });
    expect(response.status).toBe(403);
    const body = await problem(response);
    expect(body.type).toMatch(/target-not-allowed$/);
    expect(body.problems![0]!.field).toBe("target");
  });

  it.each([
    // [spec change, field the cap names]
    [{ rate: 6000 }, "rate"],
    [{ shards: 32 }, "shards"],
  ])("refuses runs over the caps with 403: %j", async (change, field) => {
    const response = await api("/v1/runs", { method: "POST", body: JSON.stringify(spec(change)) });
    expect(response.status).toBe(403);
    const body = await problem(response);
    expect(body.type).toMatch(/cap-exceeded$/);
    expect(body.problems!.map((p) => p.field)).toContain(field);
  });

  it("refuses a run beyond the concurrent-run limit with 429", async () => {
    const now = Date.now();
    await env.DB.batch(
      [1, 2, 3, 4].map((i) =>
        env.DB.prepare("INSERT INTO runs (id, name, status, target, created_at, duration_ms, spec_json, plan_json) VALUES (?, 'x', 'running', 't', ?, 1000, '{}', '{}')").bind(`r-fake-${i}`, now),
      ),
    );
    const response = await api("/v1/runs", { method: "POST", body: JSON.stringify(spec()) });
    expect(response.status).toBe(429);
    expect((await problem(response)).detail).toContain("4 concurrent runs");
    await env.DB.prepare("DELETE FROM runs WHERE id LIKE 'r-fake-%'").run();
  });
});

describe("run resources", () => {
  it.each(["/v1/runs/r-0000000-00000000", "/v1/runs/not-an-id/summary", "/v1/runs/r-0000000-00000000/timeseries"])("answers 404 for %s", async (path) => {
    const response = await api(path);
    expect(response.status).toBe(404);
    expect((await problem(response)).type).toMatch(/not-found$/);
  });

  it("lists runs, validating the limit", async () => {
    expect((await api("/v1/runs?limit=0")).status).toBe(400);
    const response = await api("/v1/runs?limit=5");
    expect(response.status).toBe(200);
    expect(await response.json()).toHaveProperty("runs");
  });
});
