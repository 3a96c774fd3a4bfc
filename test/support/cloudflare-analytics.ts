/**
 * Test support for the Cloudflare Analytics client and `edgeload cf-analytics`: a local
 * HTTP server (127.0.0.1, port 0) that records what it receives and answers from
 * test/fixtures/cloudflare/analytics/*.json (shapes in cloudflare/analytics/SHAPES.md), and
 * the run side of the scenario those fixtures describe.
 *
 * The scenario: run `run-abc` against https://auth.example.com, t0 2026-11-20T12:00:30Z,
 * 240 s at 10 requests/s. The client got 60 × 429 in 12:02 (a Cloudflare rate-limiting rule:
 * the Worker never ran for them), 18 connection errors in 12:03 (the edge never saw those),
 * and 2 × 5xx in 12:04 (the Worker exceeded its resources). 4 requests of other traffic hit
 * the host in the margin minute 11:59.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { QueryRow } from "../../core/results/query.ts";
import type { Summary } from "../../core/run/summary.ts";
import type { DatasetId } from "../../cloudflare/analytics/queries.ts";

export interface Fixture {
  readonly source: string;
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: { readonly data: { readonly viewer: Readonly<Record<string, Array<{ rows: unknown[] }>>> } | null; readonly errors: unknown };
}

export function fixture(name: string): Fixture {
  return JSON.parse(readFileSync(new URL(`../fixtures/cloudflare/analytics/${name}.json`, import.meta.url), "utf8")) as Fixture;
}

/** The rows of a fixture's answer. */
export function fixtureRows<T = unknown>(name: string): T[] {
  const viewer = fixture(name).body.data!.viewer;
  return (viewer.accounts ?? viewer.zones)![0]!.rows as T[];
}

export interface Received {
  readonly method: string;
  /** Path and query string. */
  readonly path: string;
  readonly authorization: string | null;
  /** The JSON body of a POST (a GraphQL request: `{query, variables}`), or null. */
  readonly body: { readonly query: string; readonly variables: Readonly<Record<string, unknown>> } | null;
}

export interface Reply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: unknown;
}

export type Handler = (request: Received, index: number) => Reply;

export interface TestServer {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  readonly received: Received[];
  close(): Promise<void>;
}

export async function startServer(handler: Handler): Promise<TestServer> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((text) => {
      const request: Received = {
        method: req.method ?? "GET",
        path: req.url ?? "/",
        authorization: req.headers.authorization ?? null,
        body: text ? JSON.parse(text) : null,
      };
      received.push(request);
      const reply = handler(request, received.length - 1);
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, received, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** The fixture answering each query of queries.ts. */
export const SCENARIO_FIXTURES: Readonly<Record<DatasetId, string>> = {
  workers: "workers-invocations",
  workersByMinute: "workers-by-minute",
  workersWindow: "workers-window",
  durableObjects: "durable-objects",
  d1: "d1",
  zoneRequests: "zone-requests",
  zoneLatency: "zone-latency",
};

/** Which query a GraphQL request is (queries.ts names each operation `Edgeload_<id>`). */
export function datasetOf(request: Received): DatasetId {
  return /query Edgeload_(\w+)\(/.exec(request.body?.query ?? "")![1] as DatasetId;
}

/**
 * Answers each GraphQL query from its fixture, cut into pages of the query's `limit` in the
 * order they are asked for (page n of a dataset is rows [n·limit, (n+1)·limit)).
 */
export function replay(fixtures: Readonly<Partial<Record<DatasetId, string>>> = SCENARIO_FIXTURES): Handler {
  const pages = new Map<string, number>();
  return (request) => {
    const id = datasetOf(request);
    const f = fixture(fixtures[id] ?? SCENARIO_FIXTURES[id]);
    if (f.status !== 200 || !f.body.data) return { status: f.status, headers: f.headers ?? {}, body: f.body };
    const limit = Number(/limit: (\d+)/.exec(request.body!.query)![1]);
    const page = pages.get(id) ?? 0;
    pages.set(id, page + 1);
    const [scope, list] = Object.entries(f.body.data.viewer)[0]!;
    return { status: 200, body: { ...f.body, data: { viewer: { [scope]: [{ rows: list[0]!.rows.slice(page * limit, (page + 1) * limit) }] } } } };
  };
}

export const SCENARIO = {
  runId: "run-abc",
  target: "https://auth.example.com",
  account: "0123456789abcdef0123456789abcdef",
  zone: "fedcba9876543210fedcba9876543210",
  t0: "2026-11-20T12:00:30.000Z",
  end: "2026-11-20T12:04:30.000Z",
} as const;

/** `GET /v1/runs/run-abc/query?every=1s&by=status_class&metrics=requests`: 240 seconds at 10/s. */
export function scenarioSeconds(): QueryRow[] {
  const rows: QueryRow[] = [];
  for (let t = 0; t < 240; t++) {
    const classes: Record<string, number> = { "2xx": 10 };
    if (t >= 90 && t < 96) Object.assign(classes, { "2xx": 0, "4xx": 10 }); // 12:02:00–05: the 429 burst
    if (t >= 150 && t < 153) Object.assign(classes, { "2xx": 4, connection: 6 }); // 12:03:00–02: connection errors
    if (t === 220) Object.assign(classes, { "2xx": 8, "5xx": 2 }); // 12:04:10: the Worker exceeded its resources
    for (const [status_class, requests] of Object.entries(classes)) if (requests) rows.push({ t, status_class, requests });
  }
  return rows;
}

/** The parts of the run's summary reconciliation reads (k6 layout + edgeload section). */
export function scenarioSummary(overrides: { saturation?: string[] } = {}): Summary {
  return {
    metrics: {
      http_req_duration: { avg: 30, min: 3, med: 18, max: 400, "p(90)": 70, "p(95)": 95, "p(99)": 140 },
      http_req_waiting: { avg: 25, min: 2, med: 15, max: 390, "p(90)": 60, "p(95)": 80, "p(99)": 120 },
    },
    edgeload: { runId: SCENARIO.runId, target: SCENARIO.target, startedAt: SCENARIO.t0, endedAt: SCENARIO.end, saturation: overrides.saturation ?? [] },
  } as unknown as Summary;
}
