import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  datasetOf,
  replay,
  SCENARIO,
  scenarioSeconds,
  scenarioSummary,
  startServer,
  type Handler,
  type TestServer,
} from "../test/support/cloudflare-analytics.ts";
import { cfAnalyticsCommand, parseFlags } from "./cf-analytics-command.ts";

/** The edgeload API for run-abc and the Cloudflare GraphQL API, on one local server. */
function edgeloadAndCloudflare(graphql: Handler = replay()): Handler {
  return (req, i) => {
    if (req.path === "/client/v4/graphql") return graphql(req, i);
    const run = `/v1/runs/${SCENARIO.runId}`;
    if (req.path === run)
      return { status: 200, body: { id: SCENARIO.runId, status: "passed", target: SCENARIO.target, startedAt: SCENARIO.t0, endedAt: SCENARIO.end } };
    if (req.path === `${run}/summary`) return { status: 200, body: scenarioSummary() };
    if (req.path.startsWith(`${run}/query?`)) return { status: 200, body: { id: SCENARIO.runId, rows: scenarioSeconds() } };
    return {
      status: 404,
      headers: { "content-type": "application/problem+json" },
      body: { type: "about:blank", title: "Not Found", status: 404, detail: "no such run" },
    };
  };
}

let server: TestServer | undefined;
let printed: string[] = [];
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(new Date("2026-11-20T13:00:00Z"));
  vi.stubEnv("CF_API_TOKEN", "cf-test-token");
  printed = [];
  vi.spyOn(console, "log").mockImplementation((line: string) => void printed.push(line));
});
afterEach(async () => {
  vi.useRealTimers();
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await server?.close();
  server = undefined;
});

async function run(extra: string[], graphql?: Handler) {
  server = await startServer(edgeloadAndCloudflare(graphql));
  const args = [SCENARIO.runId, "--account", SCENARIO.account, "--url", server.url, "--token", "api-token", "--api-base", `${server.url}/client/v4`, ...extra];
  return { code: await cfAnalyticsCommand(args), received: server.received };
}

describe("edgeload cf-analytics", () => {
  it("reconciles the run with the zone and its Workers over the run's window ± the margin", async () => {
    const { code, received } = await run(["--zone", SCENARIO.zone, "--scripts", "authrim,authrim-sessions"]);
    expect(code).toBe(0);
    expect(received.find((r) => r.path.includes("/query?"))!.path).toBe(`/v1/runs/${SCENARIO.runId}/query?every=1s&by=status_class&metrics=requests`);
    const graphql = received.filter((r) => r.path === "/client/v4/graphql");
    expect(graphql.map(datasetOf).sort()).toEqual(["d1", "durableObjects", "workers", "workersByMinute", "workersWindow", "zoneLatency", "zoneRequests"]);
    // t0 12:00:30 − 60 s … end 12:04:30 + 60 s; the zone is restricted to the target's host.
    expect(graphql.find((r) => datasetOf(r) === "zoneRequests")!.body!.variables).toEqual({
      zoneTag: SCENARIO.zone,
      start: "2026-11-20T11:59:30.000Z",
      end: "2026-11-20T12:05:30.000Z",
      host: "auth.example.com",
    });
    expect(graphql.find((r) => datasetOf(r) === "workers")!.body!.variables).toMatchObject({
      accountTag: SCENARIO.account,
      scripts: ["authrim", "authrim-sessions"],
    });
    const text = printed.join("\n");
    expect(text).toContain("the run's requests are compared with the zone's edge requests");
    expect(text).toContain("60 × 429 in 12:02 were answered before the Worker ran");
    expect(text).toContain("the edge saw 3.0% fewer requests than the run sent in 12:03 (582 of 600)");
  });

  it("--margin widens the window; --format json prints the structured result", async () => {
    const { received } = await run(["--scripts", "authrim", "--margin", "2m", "--format", "json"]);
    expect(received.find((r) => r.body && datasetOf(r) === "workers")!.body!.variables).toMatchObject({
      start: "2026-11-20T11:58:30.000Z",
      end: "2026-11-20T12:06:30.000Z",
    });
    const result = JSON.parse(printed.join("\n"));
    expect(result).toMatchObject({ runId: SCENARIO.runId, edgeSource: "worker", entryScript: "authrim", totals: { sent: 2400, worker: 2322 } });
    expect(result.unavailable.zone).toMatch(/no --zone/);
  });

  it("a token without Account Analytics Read: exits with the permission named", async () => {
    const refuse: Handler = () => ({ status: 403, body: { data: null, errors: [{ message: "not authorized for that account" }] } });
    await expect(run(["--scripts", "authrim"], refuse)).rejects.toMatchObject({
      code: 1,
      message: expect.stringContaining('needs the "Account Analytics Read" permission'),
    });
  });

  it("without CF_API_TOKEN: 104 before anything is asked", async () => {
    vi.stubEnv("CF_API_TOKEN", "");
    await expect(run(["--zone", SCENARIO.zone])).rejects.toMatchObject({
      code: 104,
      message: expect.stringMatching(/CF_API_TOKEN is not set.*"Account Analytics Read" and "Zone Analytics Read"/),
    });
    expect(server!.received).toEqual([]);
  });

  it("an unknown run: says so", async () => {
    server = await startServer(edgeloadAndCloudflare());
    await expect(cfAnalyticsCommand(["nope", "--account", SCENARIO.account, "--url", server.url, "--token", "t"])).rejects.toMatchObject({
      code: 1,
      message: "no run nope",
    });
  });

  it("reports every bad flag at once (104)", () => {
    expect(() => parseFlags(["--margin", "soon", "--format", "csv", "--api-base", "ftp://x"])).toThrow(
      expect.objectContaining({
        code: 104,
        message: expect.stringMatching(/run id is required[\s\S]*--account[\s\S]*--margin[\s\S]*--format[\s\S]*--api-base/),
      }),
    );
  });
});
