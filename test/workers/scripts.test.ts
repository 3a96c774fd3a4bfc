/**
 * k6 script bundles: uploaded content-addressed (the name is the body's SHA-256, checked),
 * and a run naming a bundle that was never uploaded is refused before anything starts.
 * (Running a script needs the bundler, which is Node: test/e2e/script-runs.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../core/data/web-crypto.ts";
import { api, spec } from "./helpers.ts";

const bundle = JSON.stringify({ "main.js": "export default {}", "script.js": "export const files = {};" });
const put = (id: string, body: string) => api(`/v1/scripts/${id}`, { method: "PUT", body });

describe("script bundles", () => {
  it("stores a bundle under the SHA-256 of its bytes, and again without harm", async () => {
    const id = await sha256Hex(bundle);
    for (let i = 0; i < 2; i++) {
      const response = await put(id, bundle);
      expect(response.status).toBe(201);
      expect(await response.json()).toEqual({ id, bytes: bundle.length });
    }
  });

  it("refuses a body whose hash is not its name, naming the right one", async () => {
    const actual = await sha256Hex(bundle);
    const response = await put("0".repeat(64), bundle);
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain(`the body's SHA-256 is ${actual}`);
  });

  it.each([
    ["not-a-hash", bundle, "64 lowercase hex digits"],
    [null, JSON.stringify({ "main.js": 1 }), "main.js"],
    [null, "not json", "not valid JSON"],
  ])("refuses %s / a bad body with a problem naming it", async (id, body, detail) => {
    const response = await put(id ?? (await sha256Hex(body)), body);
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain(detail);
  });

  it("refuses a run whose script bundle was never uploaded", async () => {
    const missing = "f".repeat(64);
    const response = await api("/v1/runs", {
      method: "POST",
      body: JSON.stringify(spec({ script: { bundle: missing, exec: "default" }, steps: [{ name: "default", path: "/" }] })),
    });
    expect(response.status).toBe(400);
    const problem = (await response.json()) as { errors?: Array<{ field: string; detail: string }>; problems?: Array<{ field: string; detail: string }> };
    expect(JSON.stringify(problem)).toContain(`no script bundle ${missing}`);
  });
});
