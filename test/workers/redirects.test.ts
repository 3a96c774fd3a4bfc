/**
 * Shards follow redirects only onto allowed targets (workers/outbound/outbound-fetch.ts),
 * end to end in workerd against the local target's `redirect=` knob: a redirect to
 * another loopback path is followed and answered; one to a host outside the allowed
 * targets is never sent, and its requests fail.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createRun, waitForStatus } from "./helpers.ts";

async function summaryOf(path: string) {
  const { id } = await createRun({ steps: [{ path }], rate: 20, duration: "1s", shards: 1, regions: ["wnam"] });
  await waitForStatus(id);
  return (await (await api(`/v1/runs/${id}/summary`)).json()) as {
    metrics: Record<string, any>;
    edgeload: { totals: { connectionErrors: number; statuses: Record<string, number> } };
  };
}

describe("redirects", () => {
  it("follows a redirect that stays on an allowed (loopback) target", async () => {
    const s = await summaryOf(`/delay?ms=0&redirect=${encodeURIComponent(`${env.TARGET_URL}/delay?ms=1`)}`);
    expect(s.metrics.http_reqs.count).toBe(20);
    expect(s.edgeload.totals.statuses).toEqual({ 200: 20 });
  });

  it("refuses a redirect off the allowed targets: nothing is sent there, the requests fail", async () => {
    // .invalid never resolves: even a broken guard could not reach anything with it.
    const s = await summaryOf(`/delay?ms=0&redirect=${encodeURIComponent("https://edgeload-test.invalid/")}`);
    expect(s.metrics.http_reqs.count).toBe(20);
    expect(s.metrics.http_req_failed.passes).toBe(20);
    expect(s.edgeload.totals.connectionErrors).toBe(20);
  });
});
