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
    expect(body.problems!.map((p) => p.field)).toEqual(
      expect.arrayContaining(["rate", "duration", "regions.0", "steps.0.path", "thresholds.http_req_duration[0]"]),
    );
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
        env.DB.prepare(
          "INSERT INTO runs (id, name, status, target, created_at, duration_ms, spec_json, plan_json) VALUES (?, 'x', 'running', 't', ?, 1000, '{}', '{}')",
        ).bind(`r-fake-${i}`, now),
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

describe("cost pre-flight", () => {
  it("refuses a run whose estimated cost is above its maxCost with 400 naming maxCost, and stores nothing", async () => {
    const before = await env.DB.prepare("SELECT COUNT(*) AS n FROM runs").first<{ n: number }>();
    const response = await api("/v1/runs", { method: "POST", body: JSON.stringify(spec({ rate: 500, duration: "10m", maxCost: 0.001 })) });
    expect(response.status).toBe(400);
    const body = await problem(response);
    expect(body.problems).toEqual([
      { field: "maxCost", detail: expect.stringMatching(/^the run's estimated cost is \$\S+ \(prices of \d{4}-\d\d-\d\d\), above its budget of \$0\.0010;/) },
    ]);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM runs").first<{ n: number }>()).toEqual(before);
  });

  it("POST /v1/plan answers the plan, the platform limits and the estimate without starting a run", async () => {
    const before = await env.DB.prepare("SELECT COUNT(*) AS n FROM runs").first<{ n: number }>();
    const response = await api("/v1/plan", { method: "POST", body: JSON.stringify(spec({ rate: 100, duration: "1m", maxCost: 10 })) });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      plan: { shards: unknown[] };
      limits: Array<{ limit: string; ok: boolean }>;
      estimate: { usd: number; k6Cloud: { vuh: number } };
      overBudget: unknown;
    };
    expect(body.plan.shards.length).toBeGreaterThan(0);
    expect(body.limits.every((l) => l.ok)).toBe(true);
    expect(body.estimate.usd).toBeGreaterThan(0);
    expect(body.estimate.k6Cloud.vuh).toBeGreaterThanOrEqual(1);
    expect(body.overBudget).toBeNull();
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM runs").first<{ n: number }>()).toEqual(before);
  });

  it("requires the token for /v1/plan", async () => {
    expect((await api("/v1/plan", { method: "POST", token: null, body: "{}" })).status).toBe(401);
  });
});
