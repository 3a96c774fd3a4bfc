/**
 * options.rps beside k6 v1.8.1: ten VUs that would send thousands of requests in 4 s send
 * about 5 a second under both, and the wait for a turn is part of the iteration, not of the
 * request's duration (k6-compat/runtime/rps-limit.ts, the VU's http module; each shard's VUs
 * share its part of the rate, here the whole of it on the local stack's shard). `--rps`
 * replaces the script's rate under both.
 */
import { expect, it } from "vitest";
import { countOf, scriptsBesideK6, type ExportedMetrics, type SideRun } from "./beside-k6.ts";
import { describeWithK6 } from "./k6.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

const SECONDS = 4;
const VUS = 10;

/**
 * Ten VUs for 4 s, then the default graceful stop: each VU's iteration that holds a turn
 * when the time is up still sends, so the run sends for up to VUS / rps seconds more. (With
 * `gracefulStop: "0s"` k6 fails at once every wait that would end past the deadline, "rate:
 * Wait(n=1) would exceed context deadline", and loops on it; edgeload's VU is cut instead.)
 */
const TEN_VUS_AT_5_RPS = `
import http from "k6/http";
export const options = { rps: 5, vus: ${VUS}, duration: "${SECONDS}s" };
export default function () {
  http.get(__ENV.BASE_URL + "/healthz");
}
`;

/** The most requests `rps` lets through in the run and its graceful tail, and the fewest in its 4 s, with margins. */
const bounds = (rps: number) => ({ most: rps * (SECONDS + VUS / rps) + 2, fewest: rps * SECONDS * 0.6 });

const count = countOf;
const avg = (run: SideRun<ExportedMetrics>, metric: string) => run.summary.metrics[metric]?.avg ?? Number.NaN;

describeWithK6("options.rps, beside k6", (k6) => {
  const fixture = useLocalStack("edgeload-k6-rps-");
  const { both } = scriptsBesideK6(k6, fixture, { "rps.js": TEN_VUS_AT_5_RPS });

  it("sends at most ~5 requests a second with 10 VUs, the wait in the iteration and not in the request, as k6 does", async () => {
    const [k6Run, edge] = await both("rps.js");
    expect(k6Run.code, k6Run.output).toBe(0);
    expect(edge.code, edge.output).toBe(0);
    for (const run of [k6Run, edge]) {
      const requests = count(run, "http_reqs");
      expect(requests, run.output).toBeLessThanOrEqual(bounds(5).most);
      expect(requests, run.output).toBeGreaterThanOrEqual(bounds(5).fewest);
      // Ten VUs share 5 turns a second: an iteration takes ~2 s, its request a few ms.
      expect(avg(run, "iteration_duration"), run.output).toBeGreaterThan(1_000);
      expect(avg(run, "http_req_duration"), run.output).toBeLessThan(500);
    }
  });

  it("takes --rps over the script's rps", async () => {
    const [k6Run, edge] = await both("rps.js", ["--rps", "2"]);
    expect(k6Run.code, k6Run.output).toBe(0);
    expect(edge.code, edge.output).toBe(0);
    for (const run of [k6Run, edge]) {
      expect(count(run, "http_reqs"), run.output).toBeLessThanOrEqual(bounds(2).most);
      expect(count(run, "http_reqs"), run.output).toBeGreaterThanOrEqual(bounds(2).fewest);
    }
  });
});
