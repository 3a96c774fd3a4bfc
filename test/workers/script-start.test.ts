/**
 * A k6 script whose isolate cannot start at the edge (here, a bundle whose entry module throws
 * as it loads, as init code that only fails in workerd would): no iteration runs, each attempt
 * is counted as a script error naming why, and the run ends in `error` (exit 103) — never
 * `passed` with 0 requests because it had no thresholds to break.
 */
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../core/data/web-crypto.ts";
import { api, createRun, waitForStatus } from "./helpers.ts";

const bundle = JSON.stringify({
  "main.js": 'throw new Error("init failed at the edge");\nexport default {};',
  "script.js": "export const files = {};",
});

describe("a script isolate that cannot start", () => {
  it("ends the run in error, with the isolate's failure counted and shown", async () => {
    const id = await sha256Hex(bundle);
    expect((await api(`/v1/scripts/${id}`, { method: "PUT", body: bundle })).status).toBe(201);
    const run = await createRun({
      script: { bundle: id, exec: "default" },
      steps: [{ name: "default", path: "/" }],
      rate: 5,
      duration: "1s",
      shards: 1,
      regions: ["wnam"],
    });
    const view = await waitForStatus(run.id, undefined, 60_000);
    expect(view.status).toBe("error");
    expect(view.exitCode).toBe(103);
    expect(view.abortReason).toMatch(/^no iteration could run: the script's isolate could not run the iteration: .*init failed at the edge/);
    const summary = (await (await api(`/v1/runs/${run.id}/summary`)).json()) as {
      metrics: Record<string, { count?: number }>;
      edgeload: { scriptErrors: { total: number; messages: Array<{ message: string }> }; verdict: { kind: string; reasons: string[] } };
    };
    expect(summary.edgeload.scriptErrors.total).toBeGreaterThanOrEqual(1);
    expect(summary.edgeload.scriptErrors.messages[0]!.message).toContain("init failed at the edge");
    expect(summary.metrics.iterations?.count ?? 0).toBe(0);
    expect(summary.edgeload.verdict.kind).not.toBe("passed");
  });
});
