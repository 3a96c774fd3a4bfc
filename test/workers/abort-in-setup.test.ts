/**
 * An abort that arrives while a run's setup steps are still running ends the run `aborted`
 * with no load sent. The record the setup was made from predates the abort, and saving it
 * over the stopped one used to lose the stop: the run started and sent its whole schedule.
 * (Found by the chaos bench's setup-killed work, issue 47.)
 */
import { describe, expect, it } from "vitest";
import { api, createRun, waitForStatus } from "./helpers.ts";

describe("an abort during setup", () => {
  it("ends the run aborted before any shard sends", async () => {
    const name = `abort in setup ${crypto.randomUUID()}`;
    // POST /v1/runs answers once setup is over: the abort goes in while it waits.
    const created = createRun({ name, setup: [{ path: "/delay?ms=2000" }], rate: 40, duration: "3s" });
    let id: string | undefined;
    for (let i = 0; i < 40 && !id; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const { runs } = (await (await api("/v1/runs?limit=20")).json()) as { runs: Array<{ id: string; name: string; status: string }> };
      id = runs.find((r) => r.name === name && r.status === "pending")?.id;
    }
    expect(id, "the run is listed pending while its setup runs").toBeDefined();
    expect((await api(`/v1/runs/${id}/abort`, { method: "POST" })).status).toBe(202);
    await created;
    const final = await waitForStatus(id!, undefined, 60_000);
    expect(final.status).toBe("aborted");
    expect(final.exitCode).toBe(105);
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as { metrics: { http_reqs?: { count: number } } };
    expect(summary.metrics.http_reqs?.count ?? 0).toBe(0);
  });
});
