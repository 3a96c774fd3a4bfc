import { afterEach, describe, expect, it } from "vitest";
import { AnalyticsClient, AnalyticsError, classify, fetchRunAnalytics, retryAfterMs, type AnalyticsClientOptions, type AnalyticsRequest } from "./client.ts";
import { ZONE_REQUESTS } from "./queries.ts";
import { datasetOf, fixture, replay, SCENARIO, startServer, type Handler, type TestServer } from "../../test/support/cloudflare-analytics.ts";

const REQUEST: AnalyticsRequest = {
  accountTag: SCENARIO.account,
  zoneTag: SCENARIO.zone,
  scripts: ["authrim", "authrim-sessions"],
  host: "auth.example.com",
  startIso: "2026-11-20T11:59:30.000Z",
  endIso: "2026-11-20T12:05:30.000Z",
};

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A client against a local server answering with `handler`; its waits are recorded, not slept. */
async function clientFor(handler: Handler, options: Partial<AnalyticsClientOptions> = {}) {
  server = await startServer(handler);
  const waits: number[] = [];
  const client = new AnalyticsClient({
    token: "cf-test-token",
    url: `${server.url}/client/v4/graphql`,
    sleep: async (ms) => void waits.push(ms),
    now: () => Date.parse("2026-11-20T12:10:00Z"),
    ...options,
  });
  return { client, waits, received: server.received };
}

describe("fetchRunAnalytics against recorded answers", () => {
  it("asks each dataset for the run's window with the documented filters, fields and dimensions", async () => {
    const { client, received } = await clientFor(replay());
    await fetchRunAnalytics(client, REQUEST);
    const byDataset = new Map(received.map((r) => [datasetOf(r), r]));
    expect(received.every((r) => r.authorization === "Bearer cf-test-token" && r.method === "POST" && r.path === "/client/v4/graphql")).toBe(true);
    const window = { start: REQUEST.startIso, end: REQUEST.endIso };
    const scripts = { ...window, accountTag: SCENARIO.account, scripts: ["authrim", "authrim-sessions"] };
    const rows: Array<[string, string[], Record<string, unknown>]> = [
      // Worker invocations by minute, script and status: counters and CPU/wall/duration quantiles.
      [
        "workers",
        [
          "accounts(filter: { accountTag: $accountTag })",
          "rows: workersInvocationsAdaptive(",
          "filter: { datetime_geq: $start, datetime_leq: $end, scriptName_in: $scripts }",
          "orderBy: [datetimeMinute_ASC, scriptName_ASC, status_ASC]",
          "sum { requests errors subrequests }",
          "quantiles { cpuTimeP50 cpuTimeP99 wallTimeP50 wallTimeP99 durationP50 durationP99 }",
          "dimensions { datetimeMinute scriptName status }",
        ],
        scripts,
      ],
      // The same per script and minute, and per script over the window (Cloudflare's own quantiles per group).
      ["workersByMinute", ["dimensions { datetimeMinute scriptName }"], scripts],
      ["workersWindow", ["orderBy: [scriptName_ASC]", "dimensions { scriptName }"], scripts],
      // Durable Objects by script and namespace.
      [
        "durableObjects",
        [
          "rows: durableObjectsInvocationsAdaptiveGroups(",
          "scriptName_in: $scripts",
          "sum { requests errors wallTime } quantiles { wallTimeP50 wallTimeP99 }",
          "dimensions { scriptName namespaceId }",
        ],
        scripts,
      ],
      // D1 by minute and database, filtered by datetime (not only date).
      [
        "d1",
        [
          "rows: d1AnalyticsAdaptiveGroups(",
          "filter: { datetime_geq: $start, datetime_leq: $end }",
          "sum { readQueries writeQueries rowsRead rowsWritten }",
          "dimensions { datetimeMinute databaseId }",
        ],
        { ...window, accountTag: SCENARIO.account },
      ],
      // Zone requests for the run's host by minute, edge status and colo.
      [
        "zoneRequests",
        [
          "zones(filter: { zoneTag: $zoneTag })",
          "rows: httpRequestsAdaptiveGroups(",
          "clientRequestHTTPHost: $host",
          "count avg { sampleInterval }",
          "dimensions { datetimeMinute edgeResponseStatus coloCode }",
        ],
        { ...window, zoneTag: SCENARIO.zone, host: "auth.example.com" },
      ],
      // Edge TTFB and origin quantiles: one group, no dimensions, no paging.
      [
        "zoneLatency",
        ["limit: 10000, filter:", "quantiles { edgeTimeToFirstByteMsP50 edgeTimeToFirstByteMsP95 edgeTimeToFirstByteMsP99 originResponseDurationMsP50"],
        { ...window, zoneTag: SCENARIO.zone, host: "auth.example.com" },
      ],
    ];
    expect([...byDataset.keys()].sort()).toEqual(rows.map(([id]) => id).sort());
    for (const [id, snippets, variables] of rows) {
      const r = byDataset.get(id as never)!;
      for (const s of snippets) expect(r.body!.query, id).toContain(s);
      expect(r.body!.variables, id).toEqual(variables);
    }
    expect(byDataset.get("zoneLatency")!.body!.query).not.toContain("orderBy");
  });

  it("turns the answers into typed groups, microseconds into milliseconds", async () => {
    const { client } = await clientFor(replay());
    const cf = await fetchRunAnalytics(client, REQUEST);
    expect([cf.workers.length, cf.workersByMinute.length, cf.workersWindow.length, cf.d1.length, cf.zone!.length]).toEqual([12, 11, 2, 5, 14]);
    expect(cf.workersWindow[0]).toMatchObject({
      script: "authrim",
      minute: null,
      status: null,
      requests: 2326,
      errors: 2,
      cpuP50Ms: 1.2,
      wallP50Ms: 6,
      wallP99Ms: 25,
      durationP99GbS: 0.0031,
      sampleInterval: 1,
    });
    expect(cf.workers.find((g) => g.status === "exceededResources")).toMatchObject({
      minute: "2026-11-20T12:04:00Z",
      script: "authrim",
      errors: 2,
      wallP99Ms: 52,
    });
    expect(cf.durableObjects).toEqual([
      {
        script: "authrim-sessions",
        namespaceId: "5e5510b5a0c84e2f9d0e3c1b2a4f6789",
        requests: 2320,
        errors: 0,
        wallTimeTotalMs: 2088,
        wallP50Ms: 0.9,
        wallP99Ms: 4.1,
      },
    ]);
    expect(cf.zone!.filter((g) => g.status === 429).map((g) => [g.colo, g.count])).toEqual([
      ["IAD", 24],
      ["LHR", 36],
    ]);
    expect(cf.zoneLatency).toEqual({ count: 2326, edgeTtfbMs: { p50: 9, p95: 31, p99: 48 }, originMs: { p50: 7, p95: 26, p99: 40 } });
    expect(cf.unavailable).toEqual({});
  });

  it("without --zone or --scripts says what it left out instead of querying the whole account", async () => {
    const { client, received } = await clientFor(replay());
    const cf = await fetchRunAnalytics(client, { ...REQUEST, zoneTag: undefined, scripts: [] });
    expect(received.map(datasetOf)).toEqual(["d1"]);
    expect(Object.keys(cf.unavailable).sort()).toEqual(["workers", "zone"]);
    expect(cf.zone).toBeNull();
  });
});

describe("pagination", () => {
  it("pages past the last row's (minute, status, colo) key until a short page, losing and doubling nothing", async () => {
    const { client, received } = await clientFor(replay(), { pageSize: 5 });
    const rows = await client.rows(ZONE_REQUESTS, SCENARIO.zone, { start: REQUEST.startIso, end: REQUEST.endIso });
    expect(received.map((r) => /limit: (\d+)/.exec(r.body!.query)![1])).toEqual(["5", "5", "5"]);
    expect(rows).toEqual(fixture("zone-requests").body.data!.viewer.zones![0]!.rows);
    expect(received[0]!.body!.query).not.toContain("OR:");
    // Page 1 ends at (12:01, 200, LHR): page 2 starts strictly after it; the status stays a number.
    expect(received[1]!.body!.query).toContain(
      'OR: [{ datetimeMinute_gt: "2026-11-20T12:01:00Z" }, { datetimeMinute: "2026-11-20T12:01:00Z", edgeResponseStatus_gt: 200 }, { datetimeMinute: "2026-11-20T12:01:00Z", edgeResponseStatus: 200, coloCode_gt: "LHR" }]',
    );
    expect(received[2]!.body!.query).toContain('{ datetimeMinute: "2026-11-20T12:03:00Z", edgeResponseStatus: 200, coloCode_gt: "IAD" }');
  });

  it("a page exactly full asks once more and stops at the empty page", async () => {
    const { client, received } = await clientFor(replay(), { pageSize: 7 });
    const rows = await client.rows(ZONE_REQUESTS, SCENARIO.zone, { start: REQUEST.startIso, end: REQUEST.endIso });
    expect([received.length, rows.length]).toEqual([3, 14]);
  });

  it("stops with a clear error past maxPages", async () => {
    const { client } = await clientFor(replay(), { pageSize: 2, maxPages: 3 });
    await expect(client.rows(ZONE_REQUESTS, SCENARIO.zone, {})).rejects.toMatchObject({
      reason: "too_many_pages",
      message: expect.stringContaining("more than 3 pages of 2 groups"),
    });
  });
});

describe("rate limits and retries", () => {
  const then =
    (first: readonly Handler[], rest: Handler): Handler =>
    (req, i) =>
      (first[i] ?? rest)(req, i);
  const rateLimited: Handler = () => fixture("rate-limited");
  const unavailable: Handler = () => ({ status: 503, body: { data: null, errors: [{ message: "too many queries in progress, please try again later" }] } });

  it("a 429 then success: waits what Retry-After says, then answers", async () => {
    const { client, waits, received } = await clientFor(then([rateLimited], replay()));
    const cf = await fetchRunAnalytics(client, { ...REQUEST, zoneTag: undefined });
    expect(waits).toEqual([2000]);
    expect(cf.workers).toHaveLength(12);
    expect(received.map(datasetOf).slice(0, 2)).toEqual(["workers", "workers"]);
  });

  it('without Retry-After backs off exponentially (1 s, 2 s) on 503 "try again later"', async () => {
    const { client, waits } = await clientFor(then([unavailable, unavailable], replay()));
    await client.rows(ZONE_REQUESTS, SCENARIO.zone, {});
    expect(waits).toEqual([1000, 2000]);
  });

  it("a rate limit inside a 200 answer is retried too", async () => {
    const inBody: Handler = () => ({ status: 200, body: { data: null, errors: [{ message: "rate limiter budget depleted, try again after 5 minutes" }] } });
    const { client, waits } = await clientFor(then([inBody], replay()));
    await client.rows(ZONE_REQUESTS, SCENARIO.zone, {});
    expect(waits).toEqual([1000]);
  });

  it("gives up after maxAttempts, saying why", async () => {
    const { client, waits } = await clientFor(rateLimited, { maxAttempts: 3 });
    await expect(client.rows(ZONE_REQUESTS, SCENARIO.zone, {})).rejects.toMatchObject({
      reason: "rate_limited",
      message: expect.stringMatching(/rate limiter budget depleted.*gave up after 3 attempts/),
    });
    expect(waits).toEqual([2000, 2000]);
  });

  it("a Retry-After longer than the longest wait fails at once, saying when to come back", async () => {
    const { client, waits } = await clientFor(() => ({ ...fixture("rate-limited"), headers: { "retry-after": "600" } }), { maxDelayMs: 60_000 });
    await expect(client.rows(ZONE_REQUESTS, SCENARIO.zone, {})).rejects.toThrow(/asks to wait 600 s/);
    expect(waits).toEqual([]);
  });
});

describe("missing permissions", () => {
  it('"not authorized for that account" → a clear error naming Account Analytics Read, not retried', async () => {
    const { client, waits } = await clientFor(() => fixture("not-authorized"));
    await expect(fetchRunAnalytics(client, REQUEST)).rejects.toMatchObject({
      reason: "permission",
      message: expect.stringMatching(
        /refused workersInvocationsAdaptive for account 0123456789abcdef0123456789abcdef: "not authorized for that account"\. The API token needs the "Account Analytics Read" permission/,
      ),
    });
    expect(waits).toEqual([]);
  });

  it("a token without Zone Analytics Read: the zone query names that permission", async () => {
    const rest = replay();
    const { client } = await clientFor((req, i) => (datasetOf(req) === "zoneRequests" ? fixture("zones-not-authorized") : rest(req, i)));
    await expect(fetchRunAnalytics(client, REQUEST)).rejects.toThrow(
      /zones \[fedcba9876543210fedcba9876543210\] are not authorized.*"Zone Analytics Read" permission/,
    );
  });

  it("an account the token cannot see (an empty accounts list) is a permission error too", async () => {
    const { client } = await clientFor(() => ({ status: 200, body: { data: { viewer: { accounts: [] } }, errors: null } }));
    await expect(client.rows(ZONE_REQUESTS, SCENARIO.zone, {})).rejects.toBeInstanceOf(AnalyticsError);
  });

  it("a bad token (401) points at CF_API_TOKEN and is not retried", async () => {
    const { client, waits } = await clientFor(() => ({ status: 401, body: { data: null, errors: [{ message: "Unauthorized" }] } }));
    await expect(fetchRunAnalytics(client, REQUEST)).rejects.toMatchObject({ reason: "unauthenticated", message: expect.stringContaining("CF_API_TOKEN") });
    expect(waits).toEqual([]);
  });

  it("latency fields the zone's plan lacks: that section is left out, the rest reconciles", async () => {
    const authz: Handler = () => ({
      status: 200,
      body: { data: null, errors: [{ message: "zone does not have access to the path", extensions: { code: "authz" } }] },
    });
    const rest = replay();
    const { client } = await clientFor((req, i) => (datasetOf(req) === "zoneLatency" ? authz(req, i) : rest(req, i)));
    const cf = await fetchRunAnalytics(client, REQUEST);
    expect(cf.zoneLatency).toBeNull();
    expect(cf.unavailable.zoneLatency).toMatch(/Zone Analytics Read.*or the plan does not include these fields/);
    expect(cf.zone).toHaveLength(14);
  });
});

describe("classify", () => {
  it.each([
    // [HTTP status, messages, expected reason, retried?]
    [429, ["rate limiter budget depleted, try again after 5 minutes"], "rate_limited", true],
    [200, ["query consumed excessive resources, please try running smaller queries"], "rate_limited", true],
    [503, ["unable to execute query, please try again later"], "unavailable", true],
    [500, ["Internal server error"], "unavailable", true],
    [403, ["not authorized for that account"], "permission", false],
    [200, ["does not have access to the path"], "permission", false],
    [401, ["Unauthorized"], "unauthenticated", false],
    [400, ['unknown field "wallTimeP95"'], "bad_query", false],
    [400, ["cannot request data older than 2678400s"], "bad_query", false],
  ] as const)("HTTP %i %j → %s (retry: %s)", (status, messages, reason, retry) => {
    expect(
      classify(
        status,
        messages.map((message) => ({ message })),
      ),
    ).toMatchObject({ reason, retry });
  });

  it.each([
    // [Retry-After, ms]
    ["2", 2000],
    ["0.5", 500],
    ["Fri, 20 Nov 2026 12:10:30 GMT", 30_000],
    ["soon", null],
    [null, null],
  ] as const)("Retry-After %j → %j ms", (header, ms) => {
    expect(retryAfterMs(header, Date.parse("2026-11-20T12:10:00Z"))).toBe(ms);
  });
});
