/**
 * Shards follow redirects only onto allowed targets (workers/outbound/outbound-fetch.ts),
 * end to end in workerd against the local target's `redirect=` knob: a redirect to
 * another loopback path is followed and answered; one to a host outside the allowed
 * targets is never sent, and its requests fail. A spec run counts each hop as a request of
 * its own, as k6 counts them (workers/shard/redirect-hops.ts): a 302 then its 200.
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
    // 20 iterations of two hops each, as k6 counts them; a 3xx is an expected response.
    expect(s.metrics.http_reqs.count).toBe(40);
    expect(s.edgeload.totals.statuses).toEqual({ 302: 20, 200: 20 });
    expect(s.metrics.http_req_failed.passes).toBe(0);
  });

  it("refuses a redirect off the allowed targets: nothing is sent there, the requests fail", async () => {
    // .invalid never resolves: even a broken guard could not reach anything with it.
    const s = await summaryOf(`/delay?ms=0&redirect=${encodeURIComponent("https://edgeload-test.invalid/")}`);
    // Each iteration: its 302, then the refused hop, a request that failed (k6 counts a blocked hop too).
    expect(s.metrics.http_reqs.count).toBe(40);
    expect(s.metrics.http_req_failed.passes).toBe(20);
    expect(s.edgeload.totals.connectionErrors).toBe(20);
    expect(s.edgeload.totals.statuses).toEqual({ 302: 20, connection: 20 });
  });
});
