import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { edgeloadInProcess } from "../test/support/cli-in-process.ts";
import { startServer, type TestServer } from "../test/support/cloudflare-analytics.ts";

const edgeload = edgeloadInProcess();
let dir: string;
let server: TestServer | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "edgeload-schedule-"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

const view = {
  id: "s-abc123-0123abcd",
  name: "nightly",
  cron: "0 3 * * *",
  paused: false,
  nextDueAt: "2026-11-29T03:00:00.000Z",
  baseline: "rolling",
  lastRunId: "r-2",
  webhooks: [{ url: "https://hooks.slack.com/…", format: "slack", secret: "(redacted)", on: ["regressed"] }],
};

describe("edgeload schedule", () => {
  it("add: posts the spec file, cron and webhooks, and prints the monthly price and a generated secret once", async () => {
    server = await startServer(() => ({
      status: 201,
      body: { ...view, estimate: { usdPerRun: 0.0012, turnsPer30Days: 30, usdPer30Days: 0.04 }, webhookSecrets: [{ webhook: 0, secret: "f".repeat(64) }] },
    }));
    const spec = join(dir, "spec.json");
    await writeFile(spec, JSON.stringify({ target: "https://api.example.com", rate: 10, duration: "30s" }));
    const r = await edgeload(
      "schedule",
      "add",
      "nightly",
      "--cron",
      "0 3 * * *",
      "--spec",
      spec,
      "--slack",
      "https://hooks.slack.com/services/T/B/x",
      "--on",
      "regressed",
      "--baseline",
      "r-1",
      "--format",
      "table",
      "--url",
      server.url,
      "--token",
      "t",
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(server.received[0]).toMatchObject({
      method: "POST",
      path: "/v1/schedules",
      body: {
        name: "nightly",
        cron: "0 3 * * *",
        spec: { target: "https://api.example.com", rate: 10, duration: "30s" },
        baseline: { runId: "r-1" },
        webhooks: [{ url: "https://hooks.slack.com/services/T/B/x", format: "slack", on: ["regressed"] }],
      },
    });
    expect(r.stdout).toContain("30 runs in 30 days: $0.04 a month");
    expect(r.stdout).toContain(`signs with ${"f".repeat(64)}: keep it now, it is not shown again`);
  });

  it("add with a k6 script: bundles and stores it first, then schedules the spec that names the bundle", async () => {
    server = await startServer((req) => (req.method === "PUT" ? { status: 201, body: { id: "x", bytes: 1 } } : { status: 201, body: view }));
    const r = await edgeload(
      "schedule",
      "add",
      "sla",
      "--cron",
      "0 * * * *",
      "--spec",
      "examples/k6/messaging-sla.js",
      "-e",
      "BASE_URL=https://api.example.com",
      "-e",
      "SCALE=0.1",
      "--format",
      "json",
      "--url",
      server.url,
      "--token",
      "t",
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const [upload, create] = server.received;
    expect(upload!.method).toBe("PUT");
    const bundle = upload!.path.replace("/v1/scripts/", "");
    expect(create).toMatchObject({
      method: "POST",
      path: "/v1/schedules",
      body: { name: "sla", cron: "0 * * * *", spec: { target: "https://api.example.com", script: { bundle } } },
    });
  });

  it("add without --cron is refused before any call (exit 104)", async () => {
    server = await startServer(() => ({ status: 500, body: {} }));
    const r = await edgeload("schedule", "add", "nightly", "--spec", "x.json", "--url", server.url, "--token", "t");
    expect(r.code).toBe(104);
    expect(r.stderr).toContain("--cron");
    expect(server.received).toEqual([]);
  });

  it("show: the turns with their outcome, verdict and why", async () => {
    const turns = [
      {
        dueAt: "2026-11-28T03:02:00.000Z",
        outcome: "skipped",
        missed: 0,
        detail: "the previous run of this schedule is still going",
        runId: null,
        verdict: null,
      },
      {
        dueAt: "2026-11-28T03:01:00.000Z",
        outcome: "started",
        missed: 2,
        detail: null,
        runId: "r-2",
        verdict: "regressed",
        reasons: ["all p95 10.0 ms → 60.0 ms (+500%)"],
      },
    ];
    const webhookAttempts = [
      { runId: null, deliveryId: "d-7f3a", kind: "skipped", webhook: 0, attempt: 2, at: "2026-11-28T03:05:00.000Z", status: null, error: "TimeoutError" },
    ];
    server = await startServer(() => ({ status: 200, body: { ...view, turns, webhookAttempts } }));
    const r = await edgeload("schedule", "show", view.id, "--format", "table", "--url", server.url, "--token", "t");
    expect(r.code).toBe(0);
    expect(server.received[0]!.path).toBe(`/v1/schedules/${view.id}`);
    expect(r.stdout).toMatch(/skipped\s+-\s+-\s+the previous run of this schedule is still going/);
    expect(r.stdout).toMatch(/started \(\+2 missed\)\s+r-2\s+regressed\s+all p95 10\.0 ms → 60\.0 ms \(\+500%\)/);
    expect(r.stdout).toContain("webhook 0 https://hooks.slack.com/… (slack) on regressed");
    // Each alert's delivery attempts, with the id a receiver dedupes on.
    expect(r.stdout).toMatch(/2026-11-28T03:05:00\.000Z\s+skipped\s+webhook 0\s+2\s+no answer\s+TimeoutError\s+d-7f3a/);
  });

  it("list, pause and rm call their routes", async () => {
    server = await startServer((req) =>
      req.path === "/v1/schedules" ? { status: 200, body: { schedules: [view] } } : { status: 200, body: { ...view, paused: true } },
    );
    const list = await edgeload("schedule", "list", "--format", "table", "--url", server.url, "--token", "t");
    expect(list.stdout).toMatch(/s-abc123-0123abcd\s+nightly\s+0 3 \* \* \*\s+active/);
    expect((await edgeload("schedule", "pause", view.id, "--format", "table", "--url", server.url, "--token", "t")).stdout).toBe(`schedule ${view.id}: paused`);
    expect((await edgeload("schedule", "rm", view.id, "--url", server.url, "--token", "t")).code).toBe(0);
    expect(server.received.map((q) => `${q.method} ${q.path}`)).toEqual([
      "GET /v1/schedules",
      `POST /v1/schedules/${view.id}/pause`,
      `DELETE /v1/schedules/${view.id}`,
    ]);
  });

  it("refuses an unknown action", async () => {
    const r = await edgeload("schedule", "frobnicate");
    expect(r.code).toBe(104);
    expect(r.stderr).toContain("say one of add, list, show, pause, resume, rm");
  });
});
