/**
 * `POST /v1/probe` (issue 49): the target's time to first byte from each region of a run,
 * through one shard a region, against the local target's `/delay?ms=` route — the figure
 * `edgeload plan --probe --url …` plans with. Admitted as a run is: a target off
 * ALLOWED_TARGETS is refused before any request, and a read-only token may not send one.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { api, READ_TOKEN } from "./helpers.ts";

const probeSpec = (target: string, regions: string[]) => ({
  target,
  steps: [{ path: "/delay?ms=40" }],
  executor: "constant-arrival-rate",
  rate: 10,
  duration: "10s",
  regions,
});

describe("POST /v1/probe", () => {
  it("times 20 requests from a shard in each region of the run, the slowest region's p95 on top", async () => {
    const response = await api("/v1/probe", { method: "POST", body: JSON.stringify(probeSpec(env.TARGET_URL, ["wnam", "weur"])) });
    expect(response.status, await response.clone().text()).toBe(200);
    const body = (await response.json()) as {
      request: { url: string; method: string };
      regions: Array<{
        region: string;
        colo: string;
        figures: { requests: number; p95Ms: number; statuses: Record<string, number> } | null;
        error: string | null;
      }>;
      p95Ms: number;
    };
    expect(body.request).toEqual({ url: `${env.TARGET_URL}/delay?ms=40`, method: "GET" });
    expect(body.regions.map((r) => r.region)).toEqual(["wnam", "weur"]);
    for (const r of body.regions) {
      expect(r.error).toBeNull();
      expect(r.colo).toBe("local"); // a local shard does not ask its colo
      expect(r.figures!.requests).toBe(20);
      expect(r.figures!.statuses).toEqual({ "200": 20 });
      // The target holds each answer 40 ms; a busy machine adds some.
      expect(r.figures!.p95Ms).toBeGreaterThanOrEqual(40);
      expect(r.figures!.p95Ms).toBeLessThan(1_000);
    }
    expect(body.p95Ms).toBe(Math.max(...body.regions.map((r) => r.figures!.p95Ms)));
  });

  it("refuses a target off ALLOWED_TARGETS before any request", async () => {
    const response = await api("/v1/probe", { method: "POST", body: JSON.stringify(probeSpec("https://not-allowed.example.com", ["wnam"])) });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain("target-not-allowed");
  });

  it("is not for a read-only token: it sends requests", async () => {
    const response = await api("/v1/probe", { method: "POST", token: READ_TOKEN, body: JSON.stringify(probeSpec(env.TARGET_URL, ["wnam"])) });
    expect(response.status).toBe(403);
  });

  it("refuses a body that is not a run spec, naming the field", async () => {
    const response = await api("/v1/probe", { method: "POST", body: JSON.stringify({ steps: [] }) });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("target");
  });
});
