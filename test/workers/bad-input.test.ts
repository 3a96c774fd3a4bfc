/**
 * Generated bad specs posted to the API inside workerd: each gets a 4xx problem naming its
 * fields, never a 500, and no run is stored for any of them.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { api, spec } from "./helpers.ts";

const FIELDS = [
  "target",
  "steps",
  "executor",
  "rate",
  "duration",
  "thresholds",
  "regions",
  "shards",
  "timeout",
  "maxCost",
  "scenarios",
  "setup",
  "data",
  "metrics",
  "stages",
  "flow",
  "scenario",
  "preset",
] as const;

describe("POST /v1/runs with generated bad specs", () => {
  it("answers 4xx problem+json naming fields, never 500, and stores no run", async () => {
    const before = await env.DB.prepare("SELECT COUNT(*) AS n FROM runs").first<{ n: number }>();
    const bad = fc.oneof(
      fc.jsonValue(),
      fc.tuple(fc.constantFrom(...FIELDS), fc.jsonValue()).map(([key, value]) => ({ ...spec(), [key]: value, rate: -1 })),
      fc
        .tuple(fc.constantFrom("path", "method", "headers", "body", "checks", "capture", "record", "sse"), fc.jsonValue())
        .map(([key, value]) => ({ ...spec(), steps: [{ path: "/x", [key]: value }], duration: "never" })),
    );
    await fc.assert(
      fc.asyncProperty(bad, async (input) => {
        const response = await api("/v1/runs", { method: "POST", body: JSON.stringify(input) });
        expect(response.status).toBeGreaterThanOrEqual(400);
        expect(response.status).toBeLessThan(500);
        expect(response.headers.get("content-type")).toBe("application/problem+json");
        const body = (await response.json()) as { problems?: Array<{ field: string; detail: string }> };
        for (const p of body.problems ?? []) expect(p.field.length).toBeGreaterThan(0);
      }),
      { numRuns: 150, seed: 20261125 },
    );
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM runs").first<{ n: number }>()).toEqual(before);
  }, 60_000);
});
