/**
 * End to end, the ways a run's numbers leave edgeload. A real Prometheus (the `prometheus`
 * binary, Debian's package) scrapes a run on the local stack through GET /v1/runs/:id/metrics and GET /metrics, with the API token
 * in its scrape_config; its HTTP API then answers with the summary's counts exactly and
 * histogram_quantile() within the bound core/formats/prometheus-text-writer.ts states. And the CLI's
 * `--out json=FILE` writes k6 JSON lines that add up to the summary. And `outputs` push
 * OTLP/HTTP metrics to a loopback receiver and remote-write into that same Prometheus
 * (`--web.enable-remote-write-receiver`) once a window, while a hanging endpoint shows its
 * timeouts in the status without slowing the run.
 *
 * Prometheus listens on loopback only, on a free port, with its TSDB in a temp folder, and
 * is stopped in afterAll. Without a `prometheus` binary the test is skipped, saying so, or
 * fails under CI (`.ci/run` installs it).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer as createHttpServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { QUANTILE_RELATIVE_ERROR } from "../../core/formats/prometheus-text-writer.ts";
import { RELATIVE_ERROR } from "../../core/metrics/histogram.ts";
import { runCli } from "./cli-process.ts";
import { useLocalStack } from "./local-stack-fixture.ts";
import { findPrometheus, freePort, PROMETHEUS, stopPrometheus } from "./prometheus.ts";
import { itWithBinary } from "../support/required-binaries.ts";

const found = findPrometheus();

const fixture = useLocalStack("edgeload-prometheus-");
let prometheus: ChildProcess | undefined;
let promDir: string | undefined;
afterAll(() => stopPrometheus(prometheus, promDir));

interface PromVector {
  metric: Record<string, string>;
  value: [number, string];
}

async function query(base: string, promql: string): Promise<PromVector[]> {
  const response = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await response.json()) as { status: string; data: { result: PromVector[] }; error?: string };
  if (body.status !== "success") throw new Error(`${promql}: ${body.error}`);
  return body.data.result;
}

let promBase = "";
/** Prometheus' view of its targets (health, last error), for failure messages. */
async function targetHealth(): Promise<string> {
  const body = (await (await fetch(`${promBase}/api/v1/targets`)).json().catch(() => null)) as {
    data?: { activeTargets?: Array<{ scrapeUrl: string; health: string; lastError: string }> };
  } | null;
  return JSON.stringify(body?.data?.activeTargets?.map((t) => [t.scrapeUrl, t.health, t.lastError]) ?? body);
}

/** Polls until `check` gives a value (bounded: 30 s), for scrapes that land once a second. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; targets: ${await targetHealth()}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

itWithBinary("PROMETHEUS", "Prometheus scrapes a run: counts equal the summary's, quantiles within the stated bound", found, {}, async () => {
  const { stack, client } = fixture;
  // Prometheus is up before the run starts, so it scrapes /metrics while the run is active;
  // the per-run job is added once the run has an id (a SIGHUP reloads the configuration).
  const api = new URL(stack.apiUrl);
  const port = await freePort();
  promDir = await mkdtemp(join(tmpdir(), "edgeload-prom-tsdb-"));
  const config = (runId?: string) => `global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: edgeload-active
    metrics_path: /metrics
    authorization: { credentials: "${stack.token}" }
    static_configs: [{ targets: ["${api.host}"] }]
${
  runId
    ? `  - job_name: edgeload-run
    metrics_path: /v1/runs/${runId}/metrics
    authorization: { credentials: "${stack.token}" }
    static_configs: [{ targets: ["${api.host}"] }]
`
    : ""
}`;
  await writeFile(join(promDir, "prometheus.yml"), config());
  prometheus = spawn(
    PROMETHEUS,
    [
      `--config.file=${join(promDir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(promDir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--web.enable-remote-write-receiver", // the third test writes to it
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let promLog = "";
  prometheus.stderr!.on("data", (chunk: Buffer) => (promLog = (promLog + chunk.toString()).slice(-4000)));
  const base = (promBase = `http://127.0.0.1:${port}`);

  await eventually("Prometheus ready", async () => ((await fetch(`${base}/-/ready`).catch(() => null))?.ok ? true : undefined));

  const run = await client.createRun({
    name: "e2e prometheus",
    target: stack.targetUrl,
    steps: [
      { path: "/delay?ms=3", checks: [{ status: 200 }] },
      { path: "/delay?maxRps=0" }, // always 503: a status and failure count to compare
    ],
    executor: "constant-arrival-rate",
    rate: 60,
    duration: "5s",
    shards: 2,
    regions: ["wnam", "weur"],
  });

  await writeFile(join(promDir, "prometheus.yml"), config(run.id));
  prometheus.kill("SIGHUP");

  // The active-runs endpoint shows the run while it runs.
  const active = await eventually("a scrape of /metrics during the run", async () => {
    const r = await query(base, `edgeload_run_info{job="edgeload-active",run_id="${run.id}"}`).catch(() => []);
    return r.length ? r : undefined;
  });
  expect(["pending", "running", "finishing"]).toContain(active[0]!.metric.status);

  const final = await client.waitForEnd(run.id, () => {}, 250);
  expect(final.status).toBe("passed");
  const summary = (await client.summary(run.id)) as unknown as { metrics: Record<string, Record<string, number>> };

  // A scrape after the end carries the final totals.
  await eventually("a scrape after the run ended", async () => {
    const r = await query(base, `edgeload_run_info{job="edgeload-run",status="passed"}`);
    return r.length ? true : undefined;
  }).catch((error: Error) => {
    throw new Error(`${error.message}; targets: see ${base}/targets; prometheus log tail:\n${promLog}`);
  });
  // /metrics keeps an ended run for a while, so its final totals are scraped there too.
  await eventually("a /metrics scrape after the run ended", async () => {
    const r = await query(base, `edgeload_run_info{job="edgeload-active",run_id="${run.id}",status="passed"}`);
    return r.length ? true : undefined;
  });
  const scalar = async (promql: string) => Number((await query(base, promql))[0]?.value[1] ?? NaN);
  const sel = `job="edgeload-run",run_id="${run.id}"`;

  const requests = await scalar(`sum(edgeload_http_reqs_total{${sel}})`);
  expect(requests).toBe(summary.metrics.http_reqs!.count);
  expect(await scalar(`sum(edgeload_http_reqs_total{job="edgeload-active",run_id="${run.id}"})`)).toBe(requests);
  const failed = await scalar(`sum(edgeload_http_req_failed_total{${sel}})`);
  expect(failed).toBeGreaterThan(0);
  expect(await scalar(`sum(edgeload_http_reqs_total{${sel},status="503"})`)).toBe(failed);
  expect(failed).toBe(summary.metrics.http_req_failed!.passes);
  expect(await scalar(`sum(edgeload_http_req_duration_seconds_count{${sel}})`)).toBe(requests);
  expect(await scalar(`sum(edgeload_dropped_iterations_total{${sel}})`)).toBe(summary.metrics.dropped_iterations?.count ?? 0);
  expect(await scalar(`sum(edgeload_checks_total{${sel},result="pass"})`)).toBe(summary.metrics.checks!.passes);
  const byRegion = await query(base, `sum by (region) (edgeload_http_reqs_total{${sel}})`);
  expect(byRegion.map((r) => r.metric.region).sort()).toEqual(["weur", "wnam"]);

  const bound = QUANTILE_RELATIVE_ERROR + RELATIVE_ERROR;
  const figures: string[] = [];
  for (const [q, key] of [
    [0.5, "med"],
    [0.9, "p(90)"],
    [0.95, "p(95)"],
    [0.99, "p(99)"],
  ] as const) {
    const promMs = 1000 * (await scalar(`histogram_quantile(${q}, sum by (le) (edgeload_http_req_duration_seconds_bucket{${sel}}))`));
    const summaryMs = summary.metrics.http_req_duration![key]!;
    figures.push(`${key}: prometheus ${promMs.toFixed(3)} ms, summary ${summaryMs} ms`);
    // Summary figures are rounded to 1 µs.
    expect(Math.abs(promMs - summaryMs), `${key}`).toBeLessThanOrEqual(bound * summaryMs + 0.001);
  }

  // Behind the token like the rest of the API; unknown runs are problem+json 404s.
  expect((await fetch(`${stack.apiUrl}/metrics`)).status).toBe(401);
  const unknown = await fetch(`${stack.apiUrl}/v1/runs/r-zzzzzz-00000000/metrics`, { headers: { authorization: `Bearer ${stack.token}` } });
  expect(unknown.status).toBe(404);
  expect(unknown.headers.get("content-type")).toContain("application/problem+json");
  console.info(`prometheus vs summary (run ${run.id}, ${requests} requests): ${figures.join("; ")}`);
});

it("edgeload run --out json=FILE writes k6 JSON lines whose counters sum to the summary's", async () => {
  const { stack } = fixture;
  const dir = await mkdtemp(join(tmpdir(), "edgeload-jsonl-"));
  try {
    const file = join(dir, "results.jsonl");
    const summaryFile = join(dir, "summary.json");
    const result = await runCli(
      [
        "run",
        "--target",
        `${stack.targetUrl}/delay?ms=2`,
        "--rate",
        "40",
        "--duration",
        "3s",
        "--quiet",
        "--out",
        `json=${file}`,
        "--summary-export",
        summaryFile,
      ],
      { EDGELOAD_URL: stack.apiUrl, EDGELOAD_TOKEN: stack.token },
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const summary = JSON.parse(await readFile(summaryFile, "utf8")) as { metrics: { http_reqs: { count: number } } };
    const lines = (await readFile(file, "utf8"))
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; metric: string; data: { value?: number; time?: string } });
    expect(lines[0]!.type).toBe("Metric");
    const requests = lines.filter((l) => l.type === "Point" && l.metric === "http_reqs").reduce((s, l) => s + l.data.value!, 0);
    expect(requests).toBe(summary.metrics.http_reqs.count);
    expect(lines.some((l) => l.metric === "http_req_duration" && l.type === "Point")).toBe(true);

    const refused = await runCli(["run", "--target", stack.targetUrl, "--rate", "1", "--duration", "1s", "--out", "influxdb=http://127.0.0.1:1"], {
      EDGELOAD_URL: stack.apiUrl,
      EDGELOAD_TOKEN: stack.token,
    });
    expect(refused.code).toBe(104);
    expect(refused.stderr).toContain("--out influxdb");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

it("pushes OTLP and remote-write (into the real Prometheus) once a window; a hanging endpoint neither slows nor fails the run", async () => {
  const { stack, client } = fixture;
  const received: Array<{ authorization: string | undefined; contentType: string | undefined; body: OtlpBody }> = [];
  const receiver = createHttpServer((req, res) => {
    let data = "";
    req.on("data", (chunk: Buffer) => (data += chunk.toString()));
    req.on("end", () => {
      received.push({ authorization: req.headers.authorization, contentType: req.headers["content-type"], body: JSON.parse(data) as OtlpBody });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  const hanging = createHttpServer(() => {}); // accepts, never answers
  await Promise.all([receiver, hanging].map((s) => new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve))));
  const url = (s: typeof receiver) => `http://127.0.0.1:${(s.address() as { port: number }).port}/v1/metrics`;
  try {
    const run = await client.createRun({
      name: "e2e otlp",
      target: stack.targetUrl,
      steps: [{ path: "/delay?ms=2" }],
      executor: "constant-arrival-rate",
      rate: 40,
      duration: "4s",
      shards: 1,
      regions: ["weur"],
      outputs: [
        { type: "opentelemetry", url: url(receiver), headers: { authorization: "Bearer otlp-secret" } },
        { type: "opentelemetry", url: url(hanging) },
        // The first test's real Prometheus, as a remote-write receiver (when it runs).
        ...(promBase ? [{ type: "prometheus-rw", url: `${promBase}/api/v1/write` }] : []),
      ],
    });
    expect(JSON.stringify(run)).not.toContain("otlp-secret");
    const final = await client.waitForEnd(run.id, () => {}, 250);
    expect(final.status).toBe("passed");
    const summary = (await client.summary(run.id)) as unknown as { metrics: { http_reqs: { count: number }; dropped_iterations?: { count: number } } };
    // Not slowed: every due iteration was sent, none dropped.
    expect(summary.metrics.http_reqs.count).toBe(160);
    expect(summary.metrics.dropped_iterations?.count ?? 0).toBe(0);

    // The final push lands shortly after the end.
    await eventually("the final OTLP push", async () => {
      const last = received.at(-1);
      return last && sumOf(last.body, "edgeload_http_reqs") === 160 ? true : undefined;
    });
    expect(received.length).toBeGreaterThanOrEqual(3);
    expect(received.every((r) => r.authorization === "Bearer otlp-secret" && r.contentType === "application/json")).toBe(true);
    const last = received.at(-1)!.body;
    const resource = Object.fromEntries(last.resourceMetrics[0]!.resource.attributes.map((a) => [a.key, a.value.stringValue]));
    expect(resource).toMatchObject({ "service.name": "edgeload", "edgeload.run_id": run.id });
    const reqs = metricOf(last, "edgeload_http_reqs")!.sum!.dataPoints[0]!;
    expect(Object.fromEntries(reqs.attributes.map((a) => [a.key, a.value.stringValue]))).toEqual({ region: "weur", step: "0", status: "200" });
    const duration = metricOf(last, "edgeload_http_req_duration")!.histogram!.dataPoints[0]!;
    expect(Number(duration.count)).toBe(160);
    expect(duration.bucketCounts.map(Number).reduce((a, b) => a + b, 0)).toBe(160);

    // The status counts both outputs' outcomes; the hanging one timed out, never pushed.
    const view = await client.getRun(run.id);
    if (promBase) {
      // Remote-written series carry no job label (scraped ones do): their final total.
      const written = await eventually("the final remote-write", async () => {
        const r = await query(promBase, `sum(edgeload_http_reqs_total{run_id="${run.id}",job=""})`);
        return r.length && Number(r[0]!.value[1]) === 160 ? r : undefined;
      });
      expect(Number(written[0]!.value[1])).toBe(160);
      const series = await query(promBase, `edgeload_http_reqs_total{run_id="${run.id}",job=""}`);
      expect(series.map((s) => s.metric)).toEqual([{ __name__: "edgeload_http_reqs_total", run_id: run.id, region: "weur", step: "0", status: "200" }]);
      expect(Number((await query(promBase, `sum(edgeload_http_req_duration_seconds_count{run_id="${run.id}",job=""})`))[0]!.value[1])).toBe(160);
      expect((await client.getRun(run.id)).outputs![2]).toMatchObject({ type: "prometheus-rw", failedAttempts: 0, lastError: null });
    }
    const [good, bad] = view.outputs!;
    expect(good).toMatchObject({ url: url(receiver), failedAttempts: 0 });
    expect(good!.pushed).toBeGreaterThanOrEqual(3);
    expect(bad!.pushed).toBe(0);
    expect(bad!.failedAttempts + bad!.dropped).toBeGreaterThan(0);
    expect(bad!.lastError).toMatch(/timeout|abort/i);
    console.info(`otlp outputs (run ${run.id}): ${JSON.stringify(view.outputs)}; receiver got ${received.length} pushes`);
  } finally {
    for (const s of [receiver, hanging]) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  }
});

interface OtlpKeyValue {
  key: string;
  value: { stringValue?: string };
}
interface OtlpMetric {
  name: string;
  sum?: { dataPoints: Array<{ attributes: OtlpKeyValue[]; asInt?: number | string }> };
  histogram?: { dataPoints: Array<{ attributes: OtlpKeyValue[]; count: number | string; bucketCounts: Array<number | string> }> };
}
interface OtlpBody {
  resourceMetrics: Array<{ resource: { attributes: OtlpKeyValue[] }; scopeMetrics: Array<{ metrics: OtlpMetric[] }> }>;
}

function metricOf(body: OtlpBody, name: string): OtlpMetric | undefined {
  return body.resourceMetrics[0]?.scopeMetrics[0]?.metrics.find((m) => m.name === name);
}

function sumOf(body: OtlpBody, name: string): number {
  return (metricOf(body, name)?.sum?.dataPoints ?? []).reduce((s, p) => s + Number(p.asInt ?? 0), 0);
}
